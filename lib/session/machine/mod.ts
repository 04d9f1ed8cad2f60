/**
 * The life of one child session's pane as a pure state machine.
 *
 * {@linkcode transition} takes a record, an event and the time, and returns the next record and
 * the effects to run as data. It does no I/O, reads no clock and never throws, so every
 * transition is tested without a multiplexer. The session loop (`../loop.ts`) runs the effects
 * and feeds their outcomes back as events.
 *
 * A transition first applies what an event says about the session itself (its title, its
 * activity, a background job), then hands the event to the handler of the current state, one
 * file per state: `dormant`, `awaiting`, `opening`, `open`, `closing`, `stuck`; `deleted` is the
 * tombstone, where every event is ignored. A handler ignores the events that mean nothing in its
 * state. Types live in `types.ts`, the moves handlers share in `_step.ts`.
 *
 * This folder imports only `../events.ts`, `../../validate.ts` (id types) and itself.
 *
 * @module
 */

import type { PaneId, SessionId } from "../../validate.ts";
import type { Step } from "./_step.ts";
import { awaiting } from "./awaiting.ts";
import { closing } from "./closing.ts";
import { dormant } from "./dormant.ts";
import { open } from "./open.ts";
import { opening } from "./opening.ts";
import { stuck } from "./stuck.ts";
import type {
  MachineConfig,
  MachineEvent,
  SessionRecord,
  SessionState,
  Transition,
} from "./types.ts";

export { idleDueAt } from "./_step.ts";
export type {
  AfterClose,
  Dormancy,
  Effect,
  MachineConfig,
  MachineEvent,
  SessionRecord,
  SessionState,
  StateKind,
  StateOf,
  Transition,
} from "./types.ts";

/**
 * A new record for a child session, with no pane yet.
 *
 * @param id The session id.
 * @param parentId The parent's id.
 * @param title The clean title.
 * @param directory The session's directory.
 * @returns The record, `dormant` ("new").
 */
export function newRecord(
  id: SessionId,
  parentId: string,
  title: string,
  directory?: string,
): SessionRecord {
  const record: SessionRecord = {
    id,
    parentId,
    title,
    activity: "unknown",
    activityAt: Number.NEGATIVE_INFINITY,
    jobRunning: false,
    state: { kind: "dormant", why: "new" },
  };
  return directory === undefined ? record : { ...record, directory };
}

/**
 * Whether the record holds a pane muxbridge must still account for.
 *
 * @param state A state.
 * @returns Whether it is open, closing or stuck.
 */
export function hasPane(
  state: SessionState,
): state is Extract<SessionState, { paneId: PaneId }> {
  return state.kind === "open" || state.kind === "closing" || state.kind === "stuck";
}

/**
 * Whether the session has a pane or is getting one (what status polls are for).
 *
 * @param state A state.
 * @returns Whether it is awaiting, opening, open or closing.
 */
export function isTracked(state: SessionState): boolean {
  return state.kind === "awaiting" || state.kind === "opening" || state.kind === "open" ||
    state.kind === "closing";
}

/**
 * Whether an operation is in flight (the loop waits for these at shutdown).
 *
 * @param state A state.
 * @returns Whether it is opening or closing.
 */
export function isBusy(state: SessionState): boolean {
  return state.kind === "opening" || state.kind === "closing";
}

/**
 * Advances a record by one event.
 *
 * @param record The current record.
 * @param event What happened.
 * @param now The current time (clock milliseconds).
 * @param config Timing.
 * @returns The next record and the effects to run.
 *
 * @example A created child waits for the server, then opens a pane
 * ```ts
 * import { validateSessionId } from "../../validate.ts";
 * import { newRecord, transition } from "./mod.ts";
 * const config = {
 *   idleCloseDelayMs: 3000, minPaneLifetimeMs: 3000, closeRetries: 2, closeRetryDelayMs: 250,
 *   recheck: true, readiness: true,
 * };
 * const child = newRecord(validateSessionId("ses_c"), "ses_p", "child");
 * let t = transition(child, { type: "created" }, 0, config);
 * t.effects; // [{ type: "await_ready" }]
 * t = transition(t.record, { type: "ready" }, 40, config);
 * t.record.state.kind; // "opening"
 * t.effects; // [{ type: "spawn" }]
 * ```
 */
export function transition(
  record: SessionRecord,
  event: MachineEvent,
  now: number,
  config: MachineConfig,
): Transition {
  const s = record.state;
  if (s.kind === "deleted") return { record, effects: [] };
  const e = event.type === "poll" ? pollAsStatus(record, event) : event;
  if (e === null) return { record, effects: [] };
  const absorbed = absorb(record, e, now);
  if (absorbed === null) return { record, effects: [] };
  const x: Step = { record: absorbed, prev: record, now, config };
  switch (s.kind) {
    case "dormant":
      return dormant(s, e, x);
    case "awaiting":
      return awaiting(s, e, x);
    case "opening":
      return opening(s, e, x);
    case "open":
      return open(s, e, x);
    case "closing":
      return closing(s, e, x);
    case "stuck":
      return stuck(s, e, x);
    default: {
      const never: never = s;
      throw new TypeError(`Unknown session state ${JSON.stringify(never)}`);
    }
  }
}

/**
 * A poll as the status event it amounts to, or null when it means nothing. A poll sent before the
 * last status event is older news than that event. Busy (or retry) cancels a pending idle close
 * and reopens like a busy event; idle or absent changes nothing: the close is confirmed by its
 * own status read when it is due, and absence alone never closes anything.
 */
function pollAsStatus(
  record: SessionRecord,
  poll: Extract<MachineEvent, { type: "poll" }>,
): MachineEvent | null {
  return poll.at < record.activityAt || poll.status !== "busy"
    ? null
    : { type: "status", status: "busy" };
}

/**
 * The record with what the event says about the session itself, whatever its state; null for a
 * repeated status (statuses are level-triggered: a repeat is a no-op).
 */
function absorb(record: SessionRecord, e: MachineEvent, now: number): SessionRecord | null {
  switch (e.type) {
    case "updated":
      return {
        ...record,
        title: e.title,
        ...(e.directory === undefined ? {} : { directory: e.directory }),
      };
    case "status":
      return record.activity === e.status
        ? null
        : { ...record, activity: e.status, activityAt: now };
    case "job":
      return { ...record, jobRunning: e.running };
    default:
      return record;
  }
}
