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
import {
  CLOSE_REASONS,
  type PaneClosed,
  type PaneFailed,
  type PaneOpened,
  type PaneSkipped,
  SKIP_REASONS,
} from "../session/events.ts";
import { invalid, schemaError, sessionId } from "../opencode/_invalid.ts";
import { attentionEventSchemas } from "../opencode/attention.ts";
import { decodeEvent } from "../opencode/decode.ts";
import type { DecodedEvent } from "../opencode/events.ts";
import {
  SessionErrorEventSchema,
  SessionIdleEventSchema,
  SessionInfoEventSchema,
  SessionStatusEventSchema,
  V1_ATTENTION,
} from "../opencode/v1/events.ts";
import {
  V2_ATTENTION,
  V2SessionCreatedSchema,
  V2SessionEventSchema,
  V2SessionRenamedSchema,
} from "../opencode/v2/events.ts";
import type { LoopInput } from "../session/events.ts";

export { CLOSE_REASONS, SKIP_REASONS };

/** The protocol version in `ready`. */
export const PROTOCOL_VERSION = 1;

/** The longest input line, in bytes. */
export const MAX_LINE_BYTES = 1024 * 1024;

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
  opencode: z.string().min(1).max(64).optional().describe(
    "The version of the OpenCode the plugin runs in (e.g. 2.1.2): it decides the server's line; absent: found from the server",
  ),
  scope: z.enum(["server", "tui"]).optional().describe(
    "server (default): every child on the server is this bridge's; tui: only children of sessions a bridge.view named (one OpenCode service serves many TUIs)",
  ),
});

/**
 * `bridge.view`: the plugin's TUI shows this session now (with `scope: "tui"`, its children are
 * this bridge's).
 *
 * @internal
 */
export const ViewSchema = z.strictObject({
  type: z.literal("bridge.view"),
  sessionID: z.string(),
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
  position: z.number().int().min(1).optional(),
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
  | DecodedEvent
  | Extract<LoopInput, { kind: "job" | "view" }>
  | { kind: "hello"; hello: Hello }
  | { kind: "ping"; id: string | number | null }
  | { kind: "shutdown" };

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
  if (type.startsWith("bridge.")) return parseControl(type, value);
  return decodeEvent(type, value);
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
    case "bridge.view": {
      const r = ViewSchema.safeParse(value);
      if (!r.success) return schemaError(type, r.error.issues);
      const id = sessionId(r.data.sessionID, false);
      return typeof id === "string" ? { kind: "view", sessionId: id } : id;
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
      SessionErrorEventSchema,
      ...attentionEventSchemas(V1_ATTENTION),
      ...attentionEventSchemas(V2_ATTENTION),
      V2SessionCreatedSchema,
      V2SessionRenamedSchema,
      V2SessionEventSchema,
      HelloSchema,
      JobSchema,
      ViewSchema,
      PingSchema,
      ShutdownSchema,
    ]),
    out: OutMessageSchema,
  }).describe(`muxbridge bridge protocol ${PROTOCOL_VERSION}: one JSON object per line`);
  return z.toJSONSchema(schema, { io: "input" }) as Record<string, unknown>;
}
