/**
 * The answers an event or control line gets when it cannot be used, shared by both lines'
 * decoders and the bridge's control messages: `invalid_message` with what is wrong, and the
 * session-id check where an id enters.
 *
 * @module
 */

import type { z } from "zod";
import { describeIssues } from "../config/describe_issues.ts";
import { toMuxError } from "../sys/errors.ts";
import { type SessionId, validateSessionId } from "../sys/validate.ts";
import type { InvalidEvent } from "./events.ts";

/**
 * An `invalid_message` answer.
 *
 * @param message What is wrong.
 * @returns The answer.
 *
 * @example
 * ```ts
 * import { invalid } from "./_invalid.ts";
 * invalid("Cannot use line: no string \"type\"").code; // "invalid_message"
 * ```
 */
export const invalid = (message: string): InvalidEvent => ({
  kind: "invalid",
  code: "invalid_message",
  message,
});

/**
 * The `invalid_message` answer of a line its schema refused.
 *
 * @param type The line's type.
 * @param issues What the schema said.
 * @returns The answer, naming each issue's path.
 *
 * @internal
 */
export function schemaError(type: string, issues: readonly z.core.$ZodIssue[]): InvalidEvent {
  return invalid(`Cannot use ${type}: ${describeIssues(issues)}`);
}

/**
 * Checks a session id where it enters: a session id, or the `invalid_message` its line gets
 * (with `pane.skipped` for a child that was just created).
 *
 * @param id The id as the line gave it.
 * @param skipped Whether a refused id is a new child's (it gets `pane.skipped` `invalid_id`).
 * @returns The checked id, or the answer.
 */
export function sessionId(id: string, skipped: boolean): SessionId | InvalidEvent {
  try {
    return validateSessionId(id);
  } catch (err) {
    const { message, hint } = toMuxError(err);
    return skipped
      ? { ...invalid(message), skip: { sessionID: id, hint: hint ?? message } }
      : invalid(message);
  }
}

/**
 * A retry's attempt (1 or more), or 0 when the value cannot be used (bounded, so a hostile
 * number cannot grow a title).
 *
 * @param attempt The attempt as the server said it.
 * @returns The attempt.
 *
 * @example
 * ```ts
 * import { retryAttempt } from "./_invalid.ts";
 * retryAttempt(3); // 3
 * retryAttempt("3"); // 0
 * ```
 */
export function retryAttempt(attempt: unknown): number {
  return typeof attempt === "number" && Number.isSafeInteger(attempt) && attempt >= 1
    ? Math.min(attempt, 1_000_000)
    : 0;
}
