/**
 * The bridge protocol: NDJSON in on stdin, NDJSON out on stdout. Incoming OpenCode events are
 * parsed leniently (unknown fields ignored), `bridge.*` control messages strictly. Every schema
 * here is zod, and `schema protocol` prints the JSON Schema generated from them.
 *
 * The hot path ({@linkcode parseLine}) runs `JSON.parse` and a `type` check on every line and
 * zod only on the few event types muxbridge acts on, so noise such as `message.part.delta`
 * costs almost nothing.
 *
 * @module
 */

import { z } from "zod";
import { describeIssues } from "../describe_issues.ts";
import {
  CLOSE_REASONS,
  type LoopInput,
  type PaneClosed,
  type PaneFailed,
  type PaneOpened,
  type PaneSkipped,
  SKIP_REASONS,
} from "../session/events.ts";
import { toMuxError } from "../sys/errors.ts";
import {
  isSessionId,
  MAX_DIRECTORY,
  SESSION_ID,
  type SessionId,
  validateSessionId,
} from "../validate.ts";

export { CLOSE_REASONS, SKIP_REASONS };

/** The protocol version in `ready`. */
export const PROTOCOL_VERSION = 1;

/** The longest input line, in bytes. */
export const MAX_LINE_BYTES = 1024 * 1024;

// ---------------------------------------------------------------- messages in: OpenCode events

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
    status: z.looseObject({ type: z.string() }),
  }),
});

/**
 * `session.idle`.
 *
 * @internal
 */
export const SessionIdleEventSchema = z.looseObject({
  type: z.literal("session.idle"),
  properties: z.looseObject({ sessionID: z.string() }),
});

// ---------------------------------------------------------------- messages in: control

/**
 * Credentials for the OpenCode server.
 *
 * @internal
 */
export const AuthSchema = z.strictObject({
  username: z.string().min(1).optional().describe("Default: opencode"),
  password: z.string().min(1),
});

/**
 * `bridge.hello`.
 *
 * @internal
 */
export const HelloSchema = z.strictObject({
  type: z.literal("bridge.hello"),
  serverUrl: z.string().min(1),
  directory: z.string().min(1),
  auth: AuthSchema.optional(),
  config: z.record(z.string(), z.unknown()).optional(),
});

/**
 * `bridge.job`.
 *
 * @internal
 */
export const JobSchema = z.strictObject({
  type: z.literal("bridge.job"),
  sessionID: z.string(),
  status: z.enum(["running", "completed", "error", "cancelled"]),
});

/**
 * `bridge.ping`.
 *
 * @internal
 */
export const PingSchema = z.strictObject({
  type: z.literal("bridge.ping"),
  id: z.union([z.string(), z.number(), z.null()]).optional(),
});

/**
 * `bridge.shutdown`.
 *
 * @internal
 */
export const ShutdownSchema = z.strictObject({ type: z.literal("bridge.shutdown") });

/**
 * A `bridge.hello`.
 *
 * @internal
 */
export type Hello = z.output<typeof HelloSchema>;

// ---------------------------------------------------------------- messages out

const ReadySchema = z.object({
  type: z.literal("ready"),
  protocol: z.literal(PROTOCOL_VERSION),
  version: z.string(),
  backend: z.string().nullable(),
  reason: z.string().optional(),
});
// The session core's reports (`lib/session/events.ts`), as they go on the wire.
const PaneOpenedSchema = z.object({
  type: z.literal("pane.opened"),
  sessionID: z.string(),
  paneId: z.string(),
  backend: z.string(),
}) satisfies z.ZodType<PaneOpened>;
const PaneClosedSchema = z.object({
  type: z.literal("pane.closed"),
  sessionID: z.string(),
  paneId: z.string(),
  reason: z.enum(CLOSE_REASONS),
}) satisfies z.ZodType<PaneClosed>;
const PaneSkippedSchema = z.object({
  type: z.literal("pane.skipped"),
  sessionID: z.string(),
  reason: z.enum(SKIP_REASONS),
  hint: z.string(),
}) satisfies z.ZodType<PaneSkipped>;
const PaneFailedSchema = z.object({
  type: z.literal("pane.failed"),
  sessionID: z.string(),
  op: z.enum(["open", "close"]),
  code: z.string(),
  message: z.string(),
}) satisfies z.ZodType<PaneFailed>;
const ErrorMessageSchema = z.object({
  type: z.literal("error"),
  code: z.string(),
  message: z.string(),
  line: z.number().int().nullable(),
});
const PongSchema = z.object({
  type: z.literal("pong"),
  id: z.union([z.string(), z.number()]).nullable(),
});
const ByeSchema = z.object({ type: z.literal("bye"), closed: z.number().int() });

/**
 * Every message the bridge writes.
 *
 * @internal
 */
export const OutMessageSchema = z.discriminatedUnion("type", [
  ReadySchema,
  PaneOpenedSchema,
  PaneClosedSchema,
  PaneSkippedSchema,
  PaneFailedSchema,
  ErrorMessageSchema,
  PongSchema,
  ByeSchema,
]);

/**
 * A message the bridge writes: the session core's pane reports and the bridge's own.
 *
 * @internal
 */
export type OutMessage = z.output<typeof OutMessageSchema>;

// ---------------------------------------------------------------- parsing

/** What one input line means: a session event for the loop, or one of the bridge's own. */
export type Inbound =
  | LoopInput
  | { kind: "hello"; hello: Hello }
  | { kind: "ping"; id: string | number | null }
  | { kind: "shutdown" }
  | { kind: "ignored"; type: string }
  | {
    kind: "invalid";
    code: "invalid_json" | "invalid_message";
    message: string;
    /** A child whose id cannot be used: it gets `pane.skipped` (`invalid_id`) with this hint. */
    skip?: { sessionID: string; hint: string };
  };

const invalid = (message: string): Extract<Inbound, { kind: "invalid" }> => ({
  kind: "invalid",
  code: "invalid_message",
  message,
});

function schemaError(type: string, issues: readonly z.core.$ZodIssue[]): Inbound {
  return invalid(`Cannot use ${type}: ${describeIssues(issues)}`);
}

/**
 * Checks a session id where it enters: a session id, or the `invalid_message` its line gets
 * (with `pane.skipped` for a child that was just created).
 */
function sessionId(id: string, skipped: boolean): SessionId | Inbound {
  try {
    return validateSessionId(id);
  } catch (err) {
    const { message, hint } = toMuxError(err);
    return skipped
      ? { ...invalid(message), skip: { sessionID: id, hint: hint ?? message } }
      : invalid(message);
  }
}

function sessionEvent(
  kind: "created" | "updated" | "deleted",
  info: z.output<typeof SessionInfoSchema>,
): Inbound {
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
    },
  };
}

/**
 * Interprets one input line (already known to be at most {@linkcode MAX_LINE_BYTES}).
 *
 * @param line The line without its newline.
 * @returns What it means; never throws.
 *
 * @example
 * ```ts
 * import { parseLine } from "./protocol.ts";
 * parseLine('{"type":"session.idle","properties":{"sessionID":"ses_1"}}');
 * // { kind: "status", sessionId: "ses_1", status: "idle" }
 * parseLine('{"type":"session.idle","properties":{"sessionID":"-rf"}}');
 * // { kind: "invalid", code: "invalid_message", message: 'Cannot use session id "-rf"' }
 * ```
 */
export function parseLine(line: string): Inbound {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (err) {
    return {
      kind: "invalid",
      code: "invalid_json",
      message: `Cannot parse line: ${(err as Error).message}`,
    };
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return invalid("Cannot use line: not a JSON object");
  }
  const type = (value as { type?: unknown }).type;
  if (typeof type !== "string") return invalid('Cannot use line: no string "type"');
  if (type.startsWith("session.")) return parseSessionEvent(type, value);
  if (type.startsWith("bridge.")) return parseControl(type, value);
  return { kind: "ignored", type };
}

function parseSessionEvent(type: string, value: unknown): Inbound {
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
      const status = r.data.properties.status.type === "idle" ? "idle" : "busy";
      return { kind: "status", sessionId: id, status };
    }
    case "session.idle": {
      const r = SessionIdleEventSchema.safeParse(value);
      if (!r.success) return schemaError(type, r.error.issues);
      const id = sessionId(r.data.properties.sessionID, false);
      return typeof id === "string" ? { kind: "status", sessionId: id, status: "idle" } : id;
    }
    default:
      return { kind: "ignored", type };
  }
}

function parseControl(type: string, value: unknown): Inbound {
  switch (type) {
    case "bridge.hello": {
      const r = HelloSchema.safeParse(value);
      return r.success ? { kind: "hello", hello: r.data } : schemaError(type, r.error.issues);
    }
    case "bridge.job": {
      const r = JobSchema.safeParse(value);
      if (!r.success) return schemaError(type, r.error.issues);
      const id = sessionId(r.data.sessionID, false);
      return typeof id === "string"
        ? { kind: "job", sessionId: id, running: r.data.status === "running" }
        : id;
    }
    case "bridge.ping": {
      const r = PingSchema.safeParse(value);
      return r.success
        ? { kind: "ping", id: r.data.id ?? null }
        : schemaError(type, r.error.issues);
    }
    case "bridge.shutdown": {
      const r = ShutdownSchema.safeParse(value);
      return r.success ? { kind: "shutdown" } : schemaError(type, r.error.issues);
    }
    default:
      return invalid(`Cannot use line: unknown control message ${JSON.stringify(type)}`);
  }
}

/**
 * The JSON Schema of every bridge message, in and out, generated from the zod schemas.
 *
 * @returns A JSON Schema object with `in` and `out` definitions.
 */
export function protocolJsonSchema(): Record<string, unknown> {
  const schema = z.object({
    in: z.union([
      SessionInfoEventSchema,
      SessionStatusEventSchema,
      SessionIdleEventSchema,
      HelloSchema,
      JobSchema,
      PingSchema,
      ShutdownSchema,
    ]),
    out: OutMessageSchema,
  }).describe(`muxbridge bridge protocol ${PROTOCOL_VERSION}: one JSON object per line`);
  return z.toJSONSchema(schema, { io: "input" }) as Record<string, unknown>;
}
