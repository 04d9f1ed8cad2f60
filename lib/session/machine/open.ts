/**
 * `open`: the pane is up; `idleSince` set means an idle close is pending. Once the idle delay and
 * the minimum lifetime have passed (and no background job runs), the status read that confirms
 * it goes out at once (`recheck`; `rechecking` while it is out): busy or retry cancels the close,
 * a 404 closes it as deleted, and idle, absent (after the idle signal that started all this) or
 * no answer within the bound closes it. A busy signal or poll cancels a pending close at any
 * time; an idle or absent poll changes nothing (absence alone is never a reason to close). A
 * program that exits with a failure moves the pane to `held` (see `held.ts`).
 *
 * @module
 */

import {
  emit,
  failedAndGone,
  idleDue,
  idleDueAt,
  keep,
  startClose,
  type Step,
  to,
} from "./_step.ts";
import type { MachineEvent, StateOf, Transition } from "./types.ts";

/**
 * Advances a session whose pane is open.
 *
 * @param s The state.
 * @param e The event.
 * @param x The step.
 * @returns The next record and effects.
 */
export function open(s: StateOf<"open">, e: MachineEvent, x: Step): Transition {
  switch (e.type) {
    case "status":
      if (e.status === "busy") {
        return to(x, { ...s, idleSince: null, rechecking: false }, { type: "disarm" });
      }
      return to(x, { ...s, idleSince: x.now, rechecking: false }, {
        type: "arm",
        at: idleDueAt({ openedAt: s.openedAt, idleSince: x.now }, x.config),
      });
    case "deleted":
      return startClose(x, s.paneId, "deleted", "delete");
    case "job":
      // The job that held the close back ended: close now if the idle close is already due.
      return e.running || s.idleSince === null || s.rechecking ? keep(x) : idleDue(x, s);
    case "timer":
      return s.idleSince !== null && !s.rechecking ? idleDue(x, s) : keep(x);
    case "recheck":
      return s.rechecking ? rechecked(s, e, x) : keep(x);
    case "gone":
      if (e.paneId !== s.paneId) return keep(x);
      // Its program (the OpenCode TUI ignores SIGHUP) may have outlived the pane.
      return to(
        x,
        { kind: "dormant", why: "gone" },
        { type: "disarm" },
        { type: "end_survivor", paneId: s.paneId },
        { type: "store_remove", paneId: s.paneId },
        emit({ type: "pane.closed", sessionID: x.record.id, paneId: s.paneId, reason: "gone" }),
        { type: "layout" },
      );
    case "exited":
      return e.paneId === s.paneId ? exited(s, e, x) : keep(x);
    case "shutdown":
      return e.closePanes ? startClose(x, s.paneId, "shutdown", "exit") : keep(x);
    case "stale":
      // Its TUI would wait to reconnect for good: a new pane takes the new credentials.
      return startClose(
        x,
        s.paneId,
        "restart",
        x.record.activity === "busy" ? "reopen" : "dormant",
      );
    default:
      return keep(x);
  }
}

/**
 * The pane's program failed: hold the pane (it shows why) for `failedHoldMs`, or close it now,
 * or report it when it went with its program.
 */
function exited(
  s: StateOf<"open">,
  e: Extract<MachineEvent, { type: "exited" }>,
  x: Step,
): Transition {
  if (!e.present) return failedAndGone(x, s.paneId);
  const hold = x.config.failedHoldMs ?? 30_000;
  if (hold === 0) return startClose(x, s.paneId, "failed", "dormant");
  return to(
    x,
    { kind: "held", paneId: s.paneId, exitCode: e.code, since: x.now, shown: s.shown },
    { type: "arm", at: x.now + hold },
  );
}

/** The status read that confirms an idle close answered. */
function rechecked(
  s: StateOf<"open">,
  e: Extract<MachineEvent, { type: "recheck" }>,
  x: Step,
): Transition {
  switch (e.status) {
    case "busy":
      return {
        record: {
          ...x.record,
          activity: "busy",
          activityAt: x.now,
          state: { ...s, idleSince: null, rechecking: false },
        },
        effects: [],
      };
    case "deleted":
      // `GET /session/:id` said 404: the session is gone, as if session.deleted came.
      return startClose(x, s.paneId, "deleted", "delete");
    case "idle":
    case "absent":
    case "unknown":
      // Idle, absent after an idle signal, or the server cannot tell: the idle signal stands.
      return startClose(x, s.paneId, "idle", "dormant");
    default: {
      const never: never = e.status;
      throw new TypeError(`Unknown recheck status ${JSON.stringify(never)}`);
    }
  }
}
