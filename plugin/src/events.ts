/**
 * Which OpenCode events become bridge lines. OpenCode 1.x: every `session.*` event of the
 * `event` hook as it came, the events that open and end a request for the user (`permission.*`,
 * `question.*`) with their ids only, and `bridge.job` for background jobs seen in
 * `tool.execute.after`.
 * OpenCode 2.x: the events of the TUI's event stream whose type muxbridge reads (sessions,
 * permissions, forms), without the streaming ones that arrive per token.
 *
 * @module
 */

import { type Bag, bag, text } from "./values.ts";

/** Background jobs remembered at once (the oldest is forgotten first). */
const MAX_JOBS = 256;

/** How a background job ended. */
type JobEnd = "completed" | "error" | "cancelled";

/**
 * What OpenCode 1.x's hooks show, as bridge lines: every `session.*` event as it came, the
 * requests for the user (their ids), and `bridge.job` for background jobs. A background subagent
 * (OpenCode's `task` tool with `background: true`, an experimental feature, or a task promoted
 * to the background) returns at once with `metadata: { background: true, sessionId,
 * parentSessionId }`: the job runs in `sessionId` and belongs to `parentSessionId`. Its end is
 * the job session's idle, error or deletion.
 */
export class SessionEvents {
  /** Background jobs: the session running the job → the session that owns it. */
  readonly #jobs = new Map<string, string>();
  readonly #send: (line: string) => void;
  readonly #lost: () => void;

  constructor(send: (line: string) => void, lost: () => void) {
    this.#send = send;
    this.#lost = lost;
  }

  /**
   * The `event` hook: forwards `session.*` events and ends the jobs they end, and forwards the
   * events that open and end a request for the user with only their ids.
   */
  event(event: Bag): void {
    const type = text(event.type);
    if (type !== undefined && V1_ATTENTION.test(type)) {
      return this.#send(attentionLine(type, event));
    }
    if (!type?.startsWith("session.")) return;
    let line: string;
    try {
      line = `${JSON.stringify(event)}\n`;
    } catch {
      return this.#lost();
    }
    this.#send(line);
    if (this.#jobs.size === 0) return;
    const props = bag(event.properties);
    const sid = text(props.sessionID) ?? text(bag(props.info).id);
    const owner = sid === undefined ? undefined : this.#jobs.get(sid);
    const end = jobEnd(type, props);
    if (owner === undefined || end === null) return;
    this.#jobs.delete(sid!);
    this.#send(jobLine(owner, end));
  }

  /** The `tool.execute.after` hook: a `task` that went to the background starts a job. */
  toolAfter(info: Bag, output: Bag): void {
    if (info.tool !== "task") return;
    const meta = bag(output.metadata);
    const jobSession = text(meta.sessionId);
    const owner = text(meta.parentSessionId) ?? text(info.sessionID);
    if (meta.background !== true || !jobSession || !owner || this.#jobs.has(jobSession)) return;
    if (this.#jobs.size >= MAX_JOBS) this.#jobs.delete(this.#jobs.keys().next().value!);
    this.#jobs.set(jobSession, owner);
    this.#send(jobLine(owner, "running"));
  }
}

/** The 1.x events that open and end a request for the user (a permission request, a question). */
const V1_ATTENTION = /^(?:permission|question)\.[a-z]+$/;

/**
 * A 1.x request event as a bridge line: its type and `properties`' ids only. The rest (the
 * command a permission is for, a file's diff, the question) is not the bridge's business and can
 * be large.
 */
function attentionLine(type: string, event: Bag): string {
  const props = bag(event.properties);
  const ids: Bag = {};
  for (const key of ["id", "sessionID", "requestID"]) {
    const value = text(props[key]);
    if (value !== undefined) ids[key] = value.slice(0, 256);
  }
  return `${JSON.stringify({ type, properties: ids })}\n`;
}

/** How a job running in the event's session ends with this event, or null when it does not. */
function jobEnd(type: string, props: Bag): JobEnd | null {
  if (type === "session.idle") return "completed";
  if (type === "session.status") return bag(props.status).type === "idle" ? "completed" : null;
  if (type === "session.deleted") return "cancelled";
  if (type === "session.error") {
    return bag(props.error).name === "MessageAbortedError" ? "cancelled" : "error";
  }
  return null;
}

/** A `bridge.job` line. */
function jobLine(owner: string, status: JobEnd | "running"): string {
  return `${JSON.stringify({ type: "bridge.job", sessionID: owner, status })}\n`;
}

/** The 2.x event families muxbridge reads: sessions, permission requests, forms (questions). */
const V2_FAMILIES = ["session.", "permission.", "form."];

/**
 * 2.x events inside those families that muxbridge does not read and that come in bursts: text,
 * reasoning and tool-input streaming (one event per token), model steps, usage and message
 * content updates, queued prompts. Any type ending in `.delta` is skipped too.
 */
const V2_SKIPPED = [
  "session.text.",
  "session.reasoning.",
  "session.tool.input.",
  "session.step.",
  "session.usage.",
  "session.message.",
  "session.inbox.",
];

/**
 * Whether a 2.x event of this type goes to the bridge.
 *
 * @example
 * ```ts
 * forwardsV2("session.execution.started"); // true
 * forwardsV2("session.text.delta"); // false
 * ```
 */
export function forwardsV2(type: string): boolean {
  if (!V2_FAMILIES.some((p) => type.startsWith(p))) return false;
  if (type.endsWith(".delta")) return false;
  return !V2_SKIPPED.some((p) => type.startsWith(p));
}

/**
 * The bridge line for one 2.x event (the `/api/event` object the TUI hands its plugins in
 * `details`), or null when muxbridge does not read it or it cannot be serialised.
 */
export function v2EventLine(details: unknown): string | null {
  const type = text(bag(details).type);
  if (type === undefined || !forwardsV2(type)) return null;
  try {
    return `${JSON.stringify(details)}\n`;
  } catch {
    return null;
  }
}
