/**
 * OpenCode 2.x events, as `GET /api/event` and a TUI plugin's `ctx.data.listen` deliver them
 * (`{id, created, type, location?, data}`), decoded into muxbridge's session facts
 * (`../events.ts`). Parsed leniently: unknown fields are ignored, unknown types are `ignored`
 * (2.x emits many more than muxbridge acts on).
 *
 * A child's life on 2.1.2 (`docs/opencode.md`, "OpenCode 2.x"): `session.created` with
 * `data.parentID`, then `session.execution.started` (busy), `session.retry.scheduled` (retrying,
 * with the attempt), and one of `session.execution.succeeded|interrupted` (idle) or
 * `session.execution.failed` (the turn ended in an error); `session.renamed` changes the title;
 * `session.deleted` when it is removed. Execution events carry no directory: it comes from
 * `session.created`.
 *
 * @module
 */

import { z } from "zod";
import { isSessionId, MAX_DIRECTORY, SESSION_ID } from "../../sys/validate.ts";
import type { DecodedEvent } from "../events.ts";
import { retryAttempt, schemaError, sessionId } from "../_invalid.ts";
import { type AttentionRow, type AttentionTable, decodeAttention } from "../attention.ts";

/** A 2.x row: the ids under `data` (a form's under `data.form` when it is created). */
const row = (
  what: AttentionRow["what"],
  open: boolean,
  session: readonly string[],
  request: readonly string[],
): AttentionRow => ({ what, open, session: ["data", ...session], request: ["data", ...request] });

/**
 * The 2.x events that open and end a request for the user (2.1.2, `docs/attention.md`): a
 * permission request, and a question, which 2.x asks as a form (`form.created` carries the form,
 * its session id nested in it; the answer and the cancellation carry `id` and `sessionID`).
 */
export const V2_ATTENTION: AttentionTable = {
  "permission.asked": row("permission", true, ["sessionID"], ["id"]),
  "permission.replied": row("permission", false, ["sessionID"], ["requestID"]),
  "form.created": row("question", true, ["form", "sessionID"], ["form", "id"]),
  "form.replied": row("question", false, ["sessionID"], ["id"]),
  "form.cancelled": row("question", false, ["sessionID"], ["id"]),
};

const Location = z.looseObject({ directory: z.string().max(MAX_DIRECTORY).nullish() });

/**
 * `session.created` (lenient).
 *
 * @internal
 */
export const V2SessionCreatedSchema = z.looseObject({
  type: z.literal("session.created"),
  location: Location.nullish(),
  data: z.looseObject({
    sessionID: z.string(),
    parentID: z.union([z.literal(""), z.string().regex(SESSION_ID, "not a session id")])
      .nullish(),
    title: z.string().nullish(),
    agent: z.unknown().optional(),
    location: Location.nullish(),
  }),
});

/**
 * `session.renamed` (lenient).
 *
 * @internal
 */
export const V2SessionRenamedSchema = z.looseObject({
  type: z.literal("session.renamed"),
  data: z.looseObject({ sessionID: z.string(), title: z.string() }),
});

/**
 * Every other session event muxbridge reads: only `data.sessionID` (and a retry's attempt).
 *
 * @internal
 */
export const V2SessionEventSchema = z.looseObject({
  type: z.string(),
  data: z.looseObject({ sessionID: z.string(), attempt: z.unknown().optional() }),
});

/** What each execution event says of the session's activity. */
const ACTIVITY: Readonly<Record<string, "busy" | "idle" | "failed" | "retry">> = {
  "session.execution.started": "busy",
  "session.execution.succeeded": "idle",
  "session.execution.interrupted": "idle",
  "session.execution.failed": "failed",
  "session.retry.scheduled": "retry",
};

/**
 * Interprets an OpenCode 2.x event (leniently).
 *
 * @param type Its `type`.
 * @param value The parsed line (an object with `data`).
 * @returns What it means.
 *
 * @example
 * ```ts
 * import { decodeV2Event } from "./events.ts";
 * decodeV2Event("session.execution.started", {
 *   type: "session.execution.started",
 *   data: { sessionID: "ses_c" },
 * });
 * // { kind: "status", sessionId: "ses_c", status: "busy" }
 * ```
 */
export function decodeV2Event(type: string, value: unknown): DecodedEvent {
  if (Object.hasOwn(V2_ATTENTION, type)) return decodeAttention(V2_ATTENTION, type, value);
  if (type === "session.created") return created(value);
  if (type === "session.renamed") {
    const r = V2SessionRenamedSchema.safeParse(value);
    if (!r.success) return schemaError(type, r.error.issues);
    const id = sessionId(r.data.data.sessionID, false);
    return typeof id === "string"
      ? { kind: "updated", info: { id, title: r.data.data.title } }
      : id;
  }
  const activity = ACTIVITY[type];
  if (activity === undefined && type !== "session.deleted") return { kind: "ignored", type };
  const r = V2SessionEventSchema.safeParse(value);
  if (!r.success) return schemaError(type, r.error.issues);
  const id = sessionId(r.data.data.sessionID, false);
  if (typeof id !== "string") return id;
  switch (activity) {
    case undefined:
      return { kind: "deleted", info: { id, title: "" } };
    case "retry":
      return {
        kind: "status",
        sessionId: id,
        status: "busy",
        retry: retryAttempt(r.data.data.attempt),
      };
    case "failed":
      return { kind: "status", sessionId: id, status: "idle", failed: true };
    default:
      return { kind: "status", sessionId: id, status: activity };
  }
}

function created(value: unknown): DecodedEvent {
  const r = V2SessionCreatedSchema.safeParse(value);
  if (!r.success) return schemaError("session.created", r.error.issues);
  const { data } = r.data;
  // A root session gets no pane and nothing is said, whatever its id (only children are ours).
  if (!data.parentID && !isSessionId(data.sessionID)) {
    return { kind: "ignored", type: "session.created" };
  }
  const id = sessionId(data.sessionID, !!data.parentID);
  if (typeof id !== "string") return id;
  const directory = data.location?.directory ?? r.data.location?.directory;
  return {
    kind: "created",
    info: {
      id,
      title: data.title ?? "",
      ...(data.parentID && isSessionId(data.parentID) ? { parentId: data.parentID } : {}),
      ...(directory ? { directory } : {}),
      ...(typeof data.agent === "string" ? { agent: data.agent } : {}),
    },
  };
}
