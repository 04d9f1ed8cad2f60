/**
 * The OpenCode events that open and end a request for the user (a permission request or a
 * question), as one table: each event type names what it asks for, whether it opens or ends the
 * request, and where its session id and request id sit in the event. A new line of OpenCode adds
 * rows, not code. `protocol.ts` dispatches the types of {@linkcode ATTENTION_EVENTS} here.
 *
 * The 1.x rows follow OpenCode 1.18.33 (`packages/opencode/src/permission/index.ts` and
 * `src/question/index.ts` upstream, and the events seen live, `docs/attention.md`): the asked
 * events carry the request as `properties` (`id`, `sessionID`), the answers carry
 * `properties.requestID` and `properties.sessionID`. Every other field (the command a permission
 * is for, the question's text) is ignored: it is neither needed nor trusted.
 *
 * @module
 */

import { z } from "zod";
import { type AttentionKind, REQUEST_ID } from "../session/events.ts";
import { invalid, type InvalidLine, sessionId, type SessionLine } from "./_session_events.ts";

/** Where a value sits in an event: the keys from the event object down. */
export type AttentionPath = readonly string[];

/** One row: an event type that opens or ends a request. */
export interface AttentionRow {
  /** What the request asks for. */
  readonly what: AttentionKind;
  /** Whether the event opens the request (asked) or ends it (replied, rejected, cancelled). */
  readonly open: boolean;
  /** Where the child session's id is. */
  readonly session: AttentionPath;
  /** Where the request's id is. */
  readonly request: AttentionPath;
}

const asked = (what: AttentionKind): AttentionRow => ({
  what,
  open: true,
  session: ["properties", "sessionID"],
  request: ["properties", "id"],
});
const answered = (what: AttentionKind): AttentionRow => ({
  what,
  open: false,
  session: ["properties", "sessionID"],
  request: ["properties", "requestID"],
});

/**
 * The events that open or end a request for the user, by type (OpenCode 1.x).
 *
 * @example A 2.x row (the form's ids sit under `data.form`)
 * ```ts
 * import type { AttentionRow } from "./_attention_events.ts";
 * const formCreated: AttentionRow = {
 *   what: "question",
 *   open: true,
 *   session: ["data", "form", "sessionID"],
 *   request: ["data", "form", "id"],
 * };
 * ```
 */
export const ATTENTION_EVENTS: Readonly<Record<string, AttentionRow>> = {
  "permission.asked": asked("permission"),
  "permission.replied": answered("permission"),
  "question.asked": asked("question"),
  "question.replied": answered("question"),
  "question.rejected": answered("question"),
};

/**
 * Whether an event type opens or ends a request for the user.
 *
 * @param type The event's `type`.
 * @returns Whether {@linkcode ATTENTION_EVENTS} has a row for it.
 */
export function isAttentionEvent(type: string): boolean {
  return Object.hasOwn(ATTENTION_EVENTS, type);
}

/** The value at a path, or undefined. */
function at(value: unknown, path: AttentionPath): unknown {
  let v = value;
  for (const key of path) {
    if (typeof v !== "object" || v === null || Array.isArray(v)) {
      return undefined;
    }
    v = (v as Record<string, unknown>)[key];
  }
  return v;
}

const RequestIdSchema = z.string().regex(REQUEST_ID, "not a request id");

/**
 * Interprets an event that opens or ends a request for the user (leniently: only the two ids
 * are read).
 *
 * @param type Its `type` (a key of {@linkcode ATTENTION_EVENTS}).
 * @param value The parsed line.
 * @returns The loop's `attention` input, or the `invalid_message` a line without usable ids gets
 *   (it changes nothing).
 *
 * @example
 * ```ts
 * import { parseAttentionEvent } from "./_attention_events.ts";
 * parseAttentionEvent("permission.replied", {
 *   type: "permission.replied",
 *   properties: { sessionID: "ses_1", requestID: "per_1", reply: "once" },
 * });
 * // { kind: "attention", sessionId: "ses_1", requestId: "per_1", what: "permission", open: false }
 * ```
 */
export function parseAttentionEvent(type: string, value: unknown): SessionLine {
  const row = ATTENTION_EVENTS[type];
  if (row === undefined) return { kind: "ignored", type };
  const sid = at(value, row.session);
  if (typeof sid !== "string") return missing(type, row.session);
  const id = sessionId(sid, false);
  if (typeof id !== "string") return id;
  const rid = RequestIdSchema.safeParse(at(value, row.request));
  if (!rid.success) return missing(type, row.request, "a request id");
  return {
    kind: "attention",
    sessionId: id,
    requestId: rid.data,
    what: row.what,
    open: row.open,
  };
}

/**
 * The zod schema of each event of {@linkcode ATTENTION_EVENTS}, for `schema protocol`: its type
 * and the two ids it must carry (other fields are allowed and ignored).
 *
 * @returns One schema per event type.
 *
 * @internal
 */
export function attentionEventSchemas(): z.ZodType[] {
  return Object.entries(ATTENTION_EVENTS).map(([type, row]) => {
    const tree: Record<string, unknown> = { type: z.literal(type) };
    for (const path of [row.session, row.request]) {
      let node = tree;
      path.forEach((key, i) => {
        if (i === path.length - 1) node[key] = z.string();
        else node = (node[key] ??= {}) as Record<string, unknown>;
      });
    }
    const build = (node: Record<string, unknown>): z.ZodType =>
      z.looseObject(
        Object.fromEntries(
          Object.entries(node).map((
            [k, v],
          ) => [
            k,
            v instanceof z.ZodType ? v : build(v as Record<string, unknown>),
          ]),
        ),
      );
    return build(tree).describe(
      `${row.open ? "Opens" : "Ends"} a ${row.what} request a child waits on the user for`,
    );
  });
}

function missing(type: string, path: AttentionPath, what = "a string"): InvalidLine {
  return invalid(`Cannot use ${type}: ${path.join(".")} is not ${what}`);
}
