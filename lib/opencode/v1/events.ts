/**
 * OpenCode 1.x events, as a plugin's `event` hook receives them (`{type, properties}`), decoded
 * into muxbridge's session facts (`../events.ts`). Parsed leniently: unknown fields are ignored,
 * unknown types are `ignored`. Shapes: the `Event` union of `@opencode-ai/sdk` 1.18.33
 * (`docs/opencode.md`, "What a child's live state and agent come from").
 *
 * @module
 */

import { z } from "zod";
import { isSessionId, MAX_DIRECTORY, SESSION_ID } from "../../sys/validate.ts";
import type { DecodedEvent } from "../events.ts";
import { retryAttempt, schemaError, sessionId } from "../_invalid.ts";
import { answeredRow, askedRow, type AttentionTable, decodeAttention } from "../attention.ts";

/**
 * The 1.x events that open and end a request for the user, as OpenCode 1.18.33 publishes them
 * (`packages/opencode/src/permission/index.ts` and `src/question/index.ts` upstream; seen live,
 * `docs/attention.md`): an asked event carries the request as `properties` (`id`,
 * `sessionID`); an answer carries `properties.requestID` and `properties.sessionID`.
 */
export const V1_ATTENTION: AttentionTable = {
  "permission.asked": askedRow("permission"),
  "permission.replied": answeredRow("permission"),
  "question.asked": askedRow("question"),
  "question.replied": answeredRow("question"),
  "question.rejected": answeredRow("question"),
};

/**
 * `properties.info` of a session event (lenient).
 *
 * @internal
 */
export const SessionInfoSchema = z.looseObject({
  id: z.string(),
  // A parent id is a session id too ("" or absent: a root session).
  parentID: z.union([z.literal(""), z.string().regex(SESSION_ID, "not a session id")]).nullish(),
  title: z.string().nullish(),
  directory: z.string().max(MAX_DIRECTORY).nullish(),
  // The agent a child runs (OpenCode sets it on a task child); anything else is no agent.
  agent: z.unknown().optional(),
});

/**
 * `session.created`, `session.updated`, `session.deleted`.
 *
 * @internal
 */
export const SessionInfoEventSchema = z.looseObject({
  type: z.enum(["session.created", "session.updated", "session.deleted"]),
  properties: z.looseObject({ info: SessionInfoSchema }),
});

/**
 * `session.status`.
 *
 * @internal
 */
export const SessionStatusEventSchema = z.looseObject({
  type: z.literal("session.status"),
  properties: z.looseObject({
    sessionID: z.string(),
    // `retry` carries `attempt` (from 1), `message` and `next`; read leniently.
    status: z.looseObject({ type: z.string(), attempt: z.unknown().optional() }),
  }),
});

/**
 * `session.error`: `properties.sessionID` is absent for errors of no session, and `error.name`
 * is `MessageAbortedError` when a user stopped the session (no error to show).
 *
 * @internal
 */
export const SessionErrorEventSchema = z.looseObject({
  type: z.literal("session.error"),
  properties: z.looseObject({
    sessionID: z.string().nullish(),
    // Only its name is read, and only when it has one: any other shape is an error all the same.
    error: z.unknown().optional(),
  }),
});

const ErrorNameSchema = z.looseObject({ name: z.literal("MessageAbortedError") });

/**
 * `session.idle`.
 *
 * @internal
 */
export const SessionIdleEventSchema = z.looseObject({
  type: z.literal("session.idle"),
  properties: z.looseObject({ sessionID: z.string() }),
});

function sessionEvent(
  kind: "created" | "updated" | "deleted",
  info: z.output<typeof SessionInfoSchema>,
): DecodedEvent {
  // A root session gets no pane and nothing is said, whatever its id (only children are ours).
  if (!info.parentID && kind !== "deleted" && !isSessionId(info.id)) {
    return { kind: "ignored", type: `session.${kind}` };
  }
  const id = sessionId(info.id, kind === "created" && !!info.parentID);
  if (typeof id !== "string") return id;
  return {
    kind,
    info: {
      id,
      title: info.title ?? "",
      ...(info.parentID && isSessionId(info.parentID) ? { parentId: info.parentID } : {}),
      ...(info.directory ? { directory: info.directory } : {}),
      ...(typeof info.agent === "string" ? { agent: info.agent } : {}),
    },
  };
}

/**
 * Interprets an OpenCode 1.x event muxbridge reads (leniently): `session.*`, and the events of
 * {@linkcode V1_ATTENTION}.
 *
 * @param type Its `type`.
 * @param value The parsed line.
 * @returns What it means.
 */
export function decodeV1Event(type: string, value: unknown): DecodedEvent {
  switch (type) {
    case "session.created":
    case "session.updated":
    case "session.deleted": {
      const r = SessionInfoEventSchema.safeParse(value);
      if (!r.success) return schemaError(type, r.error.issues);
      return sessionEvent(
        type.slice(8) as "created" | "updated" | "deleted",
        r.data.properties.info,
      );
    }
    case "session.status": {
      const r = SessionStatusEventSchema.safeParse(value);
      if (!r.success) return schemaError(type, r.error.issues);
      const id = sessionId(r.data.properties.sessionID, false);
      if (typeof id !== "string") return id;
      // `retry` and unknown types count as activity (contract).
      const { type: said, attempt } = r.data.properties.status;
      if (said === "idle") return { kind: "status", sessionId: id, status: "idle" };
      if (said !== "retry") return { kind: "status", sessionId: id, status: "busy" };
      return { kind: "status", sessionId: id, status: "busy", retry: retryAttempt(attempt) };
    }
    case "session.error": {
      const r = SessionErrorEventSchema.safeParse(value);
      if (!r.success) return schemaError(type, r.error.issues);
      const { sessionID, error } = r.data.properties;
      // An error of no session, or a stop the user asked for, is nothing to show.
      if (!sessionID || ErrorNameSchema.safeParse(error).success) return { kind: "ignored", type };
      const id = sessionId(sessionID, false);
      return typeof id === "string" ? { kind: "error", sessionId: id } : id;
    }
    case "session.idle": {
      const r = SessionIdleEventSchema.safeParse(value);
      if (!r.success) return schemaError(type, r.error.issues);
      const id = sessionId(r.data.properties.sessionID, false);
      return typeof id === "string" ? { kind: "status", sessionId: id, status: "idle" } : id;
    }
    default:
      return decodeAttention(V1_ATTENTION, type, value);
  }
}
