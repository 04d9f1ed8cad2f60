/**
 * Decodes an OpenCode event line, whichever line sent it: the event's shape names the line
 * (`{type, properties}` is 1.x, `{type, data}` 2.x: see {@linkcode OpencodeLine.speaks}), and
 * that line's decoder reads it. Only the types muxbridge acts on are decoded at all; the rest
 * (most of an event stream: text deltas, tool progress) is `ignored` after one prefix test.
 *
 * @module
 */

import type { DecodedEvent } from "./events.ts";
import { lineSpeaking, type OpencodeLine } from "./line.ts";
import { V1 } from "./v1/line.ts";

/**
 * The event type prefixes muxbridge reads; every other event is ignored unread. `permission.`
 * and `question.` carry the requests a child waits on the user for (`attention.ts`).
 */
export const EVENT_PREFIXES: readonly string[] = [
  "session.",
  "permission.",
  "question.",
  "form.",
];

/**
 * Whether muxbridge reads events of this type at all.
 *
 * @param type An event's `type`.
 * @returns True for the prefixes in {@linkcode EVENT_PREFIXES}.
 *
 * @example
 * ```ts
 * import { readsEvent } from "./decode.ts";
 * readsEvent("session.idle"); // true
 * readsEvent("message.part.delta"); // false
 * ```
 */
export function readsEvent(type: string): boolean {
  for (const prefix of EVENT_PREFIXES) if (type.startsWith(prefix)) return true;
  return false;
}

/**
 * Interprets one OpenCode event (leniently: unknown fields are ignored).
 *
 * @param type Its `type`.
 * @param event The parsed line, an object.
 * @returns What it means for muxbridge; never throws.
 *
 * @example
 * ```ts
 * import { decodeEvent } from "./decode.ts";
 * decodeEvent("session.idle", { type: "session.idle", properties: { sessionID: "ses_1" } });
 * // { kind: "status", sessionId: "ses_1", status: "idle" }
 * decodeEvent("session.execution.succeeded", {
 *   type: "session.execution.succeeded",
 *   data: { sessionID: "ses_1" },
 * });
 * // { kind: "status", sessionId: "ses_1", status: "idle" }
 * ```
 */
export function decodeEvent(type: string, event: object): DecodedEvent {
  if (!readsEvent(type)) return { kind: "ignored", type };
  // An event of neither shape is read as 1.x's, the bridge protocol's first form: its schema
  // says what is missing.
  const line: OpencodeLine = lineSpeaking(event) ?? V1;
  return line.decode(type, event);
}
