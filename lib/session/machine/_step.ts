/**
 * What every state handler works with: the step (the record with the event's record-level
 * changes, the time, the timing) and the moves the handlers share.
 *
 * @module
 */

import type { PaneId, SessionId } from "../../sys/validate.ts";
import type { CloseReason, PaneMessage } from "../events.ts";
import { excludedBy } from "./queue.ts";
import type {
  AfterClose,
  Effect,
  MachineConfig,
  PaneView,
  SessionRecord,
  SessionState,
  StateOf,
  Transition,
} from "./types.ts";

/** One transition in progress. */
export interface Step {
  /** The record with the event's record-level changes (title, activity, job) applied. */
  readonly record: SessionRecord;
  /** The record before the event. */
  readonly prev: SessionRecord;
  /** The time. */
  readonly now: number;
  /** The timing. */
  readonly config: MachineConfig;
}

/** The record as the step left it, with these effects. */
export function keep(x: Step, ...effects: Effect[]): Transition {
  return { record: x.record, effects };
}

/** The record in a new state, with these effects. */
export function to(x: Step, state: SessionState, ...effects: Effect[]): Transition {
  return { record: { ...x.record, state }, effects };
}

/** A report. */
export function emit(message: PaneMessage): Effect {
  return { type: "emit", message };
}

/** When an idle close of an open pane is due. */
export function idleDueAt(
  state: { openedAt: number; idleSince: number },
  config: MachineConfig,
): number {
  return Math.max(
    state.idleSince + config.idleCloseDelayMs,
    state.openedAt + config.minPaneLifetimeMs,
  );
}

/**
 * The state of a pane that just came up (spawned or adopted). `view`: what it was opened showing
 * (the next view waits for the rate limit); null: unknown, the view goes out at once.
 */
export function openState(
  paneId: PaneId,
  now: number,
  idleSince: number | null,
  view: PaneView | null,
): SessionState {
  return {
    kind: "open",
    paneId,
    openedAt: now,
    idleSince,
    rechecking: false,
    shown: { view, at: view === null ? Number.NEGATIVE_INFINITY : now, due: false },
  };
}

/** The report of a pane that just came up. */
export function paneOpened(sid: SessionId, pane: { paneId: PaneId; backend: string }): Effect {
  return emit({ type: "pane.opened", sessionID: sid, paneId: pane.paneId, backend: pane.backend });
}

/**
 * Opens a pane unless the child is excluded: through the queue when `max_panes` is set (the loop
 * admits it), else at once (see {@linkcode admitted}).
 */
export function startOpen(x: Step, idleSince: number | null): Transition {
  const hit = excludedBy(x.record, x.config);
  if (hit !== null) {
    const said = x.prev.state.kind === "dormant" && x.prev.state.why === "excluded";
    return to(
      x,
      { kind: "dormant", why: "excluded" },
      ...(said ? [] : [
        emit({
          type: "pane.skipped",
          sessionID: x.record.id,
          reason: "excluded",
          hint: `Its ${hit.what} matches the exclude pattern ${
            JSON.stringify(hit.pattern)
          }; remove the pattern from exclude to give it a pane`,
        }),
      ]),
    );
  }
  if (x.config.maxPanes !== undefined) {
    return to(x, { kind: "queued", since: x.now, reported: false });
  }
  return admitted(x, idleSince);
}

/** Opens a pane now: through readiness when the server is consulted, else straight to the spawn. */
export function admitted(x: Step, idleSince: number | null): Transition {
  return x.config.readiness
    ? to(x, { kind: "awaiting", idleSince }, { type: "await_ready" })
    : to(x, { kind: "opening", idleSince, then: "keep" }, { type: "spawn" });
}

/** Starts closing a pane: the first attempt goes out at once. */
export function startClose(
  x: Step,
  paneId: PaneId,
  reason: CloseReason,
  then: AfterClose,
): Transition {
  return to(x, { kind: "closing", paneId, reason, attempt: 1, waiting: false, then }, {
    type: "disarm",
  }, { type: "close", paneId, reason });
}

/** An idle close whose timer fired or whose job ended: confirm it at once, or close. */
export function idleDue(x: Step, s: StateOf<"open">): Transition {
  if (s.idleSince === null) return keep(x);
  const due = idleDueAt({ openedAt: s.openedAt, idleSince: s.idleSince }, x.config);
  if (x.now < due) return keep(x, { type: "arm", at: due });
  // A running background job vetoes the close; its end re-evaluates (the `job` event).
  if (x.record.jobRunning) return keep(x, { type: "disarm" });
  if (x.config.recheck) {
    return to(x, { ...s, rechecking: true }, { type: "disarm" }, { type: "recheck" });
  }
  return startClose(x, s.paneId, "idle", "dormant");
}

/** A failed pane that is gone already: forget it, report it failed; no pane until busy. */
export function failedAndGone(x: Step, paneId: PaneId): Transition {
  return to(
    x,
    { kind: "dormant", why: "failed" },
    { type: "disarm" },
    { type: "end_survivor", paneId },
    { type: "store_remove", paneId },
    emit({ type: "pane.closed", sessionID: x.record.id, paneId, reason: "failed" }),
    { type: "layout" },
  );
}
