/**
 * The OpenCode events that open and end a request for the user (a permission request or a
 * question), as tables: each row is an event type, what it asks for, whether it opens or ends
 * the request, and where its session id and request id sit in the event. A line of OpenCode
 * brings its rows (`v1/events.ts`, `V1_ATTENTION`); this file reads any of them. Every other
 * field (the command a permission is for, the question's text) is ignored: it is neither needed
 * nor trusted.
 *
 * @module
 */

import { z } from "zod";
import { type AttentionKind, type DecodedEvent, type InvalidEvent, REQUEST_ID } from "./events.ts";
import { invalid, sessionId } from "./_invalid.ts";

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

/** The events of one line that open or end a request, by type. */
export type AttentionTable = Readonly<Record<string, AttentionRow>>;

/**
 * A row of an asked event whose ids are `properties.id` and `properties.sessionID` (1.x).
 *
 * @param what What it asks for.
 * @returns The row.
 */
export const askedRow = (what: AttentionKind): AttentionRow => ({
  what,
  open: true,
  session: ["properties", "sessionID"],
  request: ["properties", "id"],
});

/**
 * A row of an answer whose ids are `properties.requestID` and `properties.sessionID` (1.x).
 *
 * @param what What the request asked for.
 * @returns The row.
 */
export const answeredRow = (what: AttentionKind): AttentionRow => ({
  what,
  open: false,
  session: ["properties", "sessionID"],
  request: ["properties", "requestID"],
});

/** The value at a path, or undefined. */
function at(value: unknown, path: AttentionPath): unknown {
  let v = value;
  for (const key of path) {
    if (typeof v !== "object" || v === null || Array.isArray(v)) return undefined;
    v = (v as Record<string, unknown>)[key];
  }
  return v;
}

const RequestIdSchema = z.string().regex(REQUEST_ID, "not a request id");

/**
 * Interprets an event that opens or ends a request for the user (leniently: only the two ids
 * are read).
 *
 * @param table The line's rows.
 * @param type The event's `type`.
 * @param value The parsed line.
 * @returns The `attention` fact; the `invalid_message` a line without usable ids gets (it
 *   changes nothing); `ignored` for a type the table does not have.
 *
 * @example
 * ```ts
 * import { answeredRow, decodeAttention } from "./attention.ts";
 * decodeAttention({ "permission.replied": answeredRow("permission") }, "permission.replied", {
 *   type: "permission.replied",
 *   properties: { sessionID: "ses_1", requestID: "per_1", reply: "once" },
 * });
 * // { kind: "attention", sessionId: "ses_1", requestId: "per_1", what: "permission", open: false }
 * ```
 */
export function decodeAttention(
  table: AttentionTable,
  type: string,
  value: unknown,
): DecodedEvent {
  const row = Object.hasOwn(table, type) ? table[type] : undefined;
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
 * The zod schema of each event of a table, for `schema protocol`: its type and the two ids it
 * must carry (other fields are allowed and ignored).
 *
 * @param table The line's rows.
 * @returns One schema per event type.
 *
 * @internal
 */
export function attentionEventSchemas(table: AttentionTable): z.ZodType[] {
  return Object.entries(table).map(([type, row]) => {
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

function missing(type: string, path: AttentionPath, what = "a string"): InvalidEvent {
  return invalid(`Cannot use ${type}: ${path.join(".")} is not ${what}`);
}
