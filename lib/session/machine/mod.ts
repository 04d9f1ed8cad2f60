/**
 * The life of one child session's pane as a pure state machine.
 *
 * {@linkcode transition} takes a record, an event and the time, and returns the next record and
 * the effects to run as data. It does no I/O, reads no clock and never throws, so every
 * transition is tested without a multiplexer. The session loop (`../loop.ts`) runs the effects
 * and feeds their outcomes back as events.
 *
 * A transition first applies what an event says about the session itself (its title, its
 * activity, its live state for the pane to show, a background job), then hands the event to the
 * handler of the current state, one file per state: `dormant`, `queued` (waiting for a free pane,
 * `max_panes`), `awaiting`, `opening`, `open`, `held` (a failed pane shown for a while),
 * `closing`, `stuck`; `deleted` is the tombstone, where every event is ignored. A handler ignores
 * the events that mean nothing in its state. Last, a wait for the user is announced once its pane
 * is open (`attend`), and the pane's view is brought up to date, at most once a second per pane
 * unless the child starts waiting (`_view.ts`). Types live in `types.ts`, the moves handlers share
 * in `_step.ts`, the live state in `_live.ts`, what the child waits on the user for in
 * `_attention.ts`, `exclude` and the queue's admissions in `queue.ts`.
 *
 * This folder imports only `../events.ts`, `../../validate.ts` (id types) and itself.
 *
 * @module
 */

import type { PaneId, SessionId } from "../../sys/validate.ts";
import { announce, NO_ATTENTION, seeAttention } from "./_attention.ts";
import { seeError, seeStatus, UNKNOWN } from "./_live.ts";
import type { Step } from "./_step.ts";
import { refreshView } from "./_view.ts";
import { awaiting } from "./awaiting.ts";
import { closing } from "./closing.ts";
import { dormant } from "./dormant.ts";
import { held } from "./held.ts";
import { open } from "./open.ts";
import { opening } from "./opening.ts";
import { queued } from "./queued.ts";
import { stuck } from "./stuck.ts";
import type {
  MachineConfig,
  MachineEvent,
  SessionRecord,
  SessionState,
  Transition,
} from "./types.ts";

export { isWaiting } from "./_attention.ts";
export { idleDueAt } from "./_step.ts";
export { marker, paneTitle, STATUS_INTERVAL_MS, viewOf } from "./_view.ts";
export { type Admissions, admissions, excludedBy } from "./queue.ts";
export type {
  AfterClose,
  Attention,
  Dormancy,
  Effect,
  ExcludePattern,
  Live,
  LiveState,
  MachineConfig,
  MachineEvent,
  OpenRequest,
  PaneView,
  SessionRecord,
  SessionState,
  Shown,
  StateKind,
  StateOf,
  Transition,
  ViewState,
} from "./types.ts";
export { MAX_OPEN_REQUESTS } from "./types.ts";

/**
 * A new record for a child session, with no pane yet.
 *
 * @param id The session id.
 * @param parentId The parent's id.
 * @param title The clean title.
 * @param directory The session's directory.
 * @param agent The agent it runs, when known.
 * @returns The record, `dormant` ("new").
 */
export function newRecord(
  id: SessionId,
  parentId: string,
  title: string,
  directory?: string,
  agent?: string,
): SessionRecord {
  return {
    id,
    parentId,
    title,
    ...(directory === undefined ? {} : { directory }),
    ...(agent === undefined ? {} : { agent }),
    activity: "unknown",
    activityAt: Number.NEGATIVE_INFINITY,
    jobRunning: false,
    live: UNKNOWN,
    attention: NO_ATTENTION,
    state: { kind: "dormant", why: "new" },
  };
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
  return state.kind === "open" || state.kind === "held" || state.kind === "closing" ||
    state.kind === "stuck";
}

/**
 * Whether the session has a pane or is getting one (what status polls are for).
 *
 * @param state A state.
 * @returns Whether it is queued, awaiting, opening, open, held or closing.
 */
export function isTracked(state: SessionState): boolean {
  return state.kind === "queued" || state.kind === "awaiting" || state.kind === "opening" ||
    state.kind === "open" || state.kind === "held" || state.kind === "closing";
}

/**
 * Whether the status poller asks about a session: every tracked one, and a child whose pane was
 * skipped because the server did not answer (its busy poll opens the pane).
 *
 * @param state A state.
 * @returns Whether it is polled.
 */
export function isPolled(state: SessionState): boolean {
  return isTracked(state) || awaitsServer(state);
}

/** A child skipped because the server did not answer. */
function awaitsServer(state: SessionState): boolean {
  return state.kind === "dormant" && state.why === "unreachable";
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
 * import { validateSessionId } from "../../sys/validate.ts";
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
  if (event.type === "status_due") {
    return refreshView(s, { record, effects: [] }, now, config, true);
  }
  const seen = seeAttention(see(record, event, now), event, now);
  const e = event.type === "poll" ? pollAsStatus(record, event) : event;
  const absorbed = e === null ? null : absorb(seen, e, now);
  // Nothing for the state to act on (a repeated status, a poll that says nothing new, a retry
  // or error of a busy child, a request for the user): the view alone may change.
  if (e === null || absorbed === null) {
    return refreshView(s, announce({ record: seen, effects: [] }), now, config);
  }
  const x: Step = { record: absorbed, prev: record, now, config };
  return refreshView(s, announce(step(s, e, x)), now, config);
}

/** Hands the event to the handler of the current state. */
function step(s: SessionState, e: MachineEvent, x: Step): Transition {
  switch (s.kind) {
    case "dormant":
      return dormant(s, e, x);
    case "queued":
      return queued(s, e, x);
    case "awaiting":
      return awaiting(s, e, x);
    case "opening":
      return opening(s, e, x);
    case "open":
      return open(s, e, x);
    case "held":
      return held(s, e, x);
    case "closing":
      return closing(s, e, x);
    case "stuck":
      return stuck(s, e, x);
    case "deleted":
      return { record: x.record, effects: [] };
    default: {
      const never: never = s;
      throw new TypeError(`Unknown session state ${JSON.stringify(never)}`);
    }
  }
}

/** The record with what the event says about the child's live state (`live`). */
function see(record: SessionRecord, e: MachineEvent, now: number): SessionRecord {
  let live = record.live;
  switch (e.type) {
    case "status":
      live = seeStatus(live, e, now, true);
      break;
    case "error":
      live = seeError(live, now);
      break;
    case "poll":
      // A poll sent before the last status event is older news than that event.
      if (e.at >= live.at && !(e.status === "running" && live.state === "retry")) {
        live = seeStatus(
          live,
          {
            status: e.status === "busy" || e.status === "running" ? "busy" : "idle",
            retry: e.retry,
          },
          now,
          false,
        );
      }
      break;
    case "recheck":
      if (e.status === "busy") live = seeStatus(live, { status: "busy" }, now, false);
      break;
    default:
      return record;
  }
  return live === record.live ? record : { ...record, live };
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
  return poll.at < record.activityAt || (poll.status !== "busy" && poll.status !== "running")
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
        ...(e.agent === undefined ? {} : { agent: e.agent }),
      };
    case "status":
      // Statuses are level-triggered, except for a child skipped because the server did not
      // answer: busy again (most often from a poll) is its cue to try the pane again.
      return record.activity === e.status && !awaitsServer(record.state)
        ? null
        : { ...record, activity: e.status, activityAt: now };
    case "job":
      return { ...record, jobRunning: e.running };
    case "error":
      return null; // the view only
    default:
      return record;
  }
}
