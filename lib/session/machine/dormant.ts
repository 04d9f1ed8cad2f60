/**
 * `dormant`: no pane. A busy signal (a change to busy) opens one, unless the child is excluded
 * (`exclude`); a new record can also adopt the pane a dead bridge left for this (busy) session.
 * A child skipped because the server did not answer (`unreachable`) is polled: a poll that finds
 * it busy is such a signal, so a slow server delays its pane instead of losing it; once it is
 * idle it is an idle child like any other, no longer polled.
 *
 * @module
 */

import { seeStatus } from "./_live.ts";
import { keep, openState, paneOpened, startOpen, type Step, to } from "./_step.ts";
import type { MachineEvent, StateOf, Transition } from "./types.ts";

/**
 * Advances a session that has no pane.
 *
 * @param s The state.
 * @param e The event.
 * @param x The step.
 * @returns The next record and effects.
 */
export function dormant(s: StateOf<"dormant">, e: MachineEvent, x: Step): Transition {
  switch (e.type) {
    case "created":
      return s.why === "new" ? startOpen(x, null) : keep(x);
    case "status":
      if (e.status === "busy") return s.why !== "shutdown" ? startOpen(x, null) : keep(x);
      // Idle: the pane it missed is no longer wanted, and its next busy is a change again.
      return s.why === "unreachable" ? to(x, { kind: "dormant", why: "idle" }) : keep(x);
    case "deleted":
      return to(x, { kind: "deleted" }, { type: "disarm" });
    case "adopted":
      // Only a session this bridge has not seen yet: one it tracks already has its own pane.
      if (s.why !== "new") return keep(x);
      return {
        record: {
          ...x.record,
          activity: "busy",
          activityAt: x.now,
          live: seeStatus(x.record.live, { status: "busy" }, x.now, false),
          state: openState(e.paneId, x.now, null, null),
        },
        effects: [
          { type: "store_put", paneId: e.paneId },
          paneOpened(x.record.id, e),
          { type: "watch" },
          { type: "layout" },
        ],
      };
    case "shutdown":
      return e.closePanes ? to(x, { kind: "dormant", why: "shutdown" }) : keep(x);
    default:
      return keep(x);
  }
}
