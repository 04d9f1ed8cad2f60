/**
 * `held`: the pane's program failed (`opencode attach` exited non-zero: the server is gone, the
 * session unknown …). Its start command keeps the pane up with the program's last words and one
 * line giving the exit code; muxbridge leaves it for `failed_pane_hold_ms`, then closes it,
 * reported `pane.closed` with reason `failed`. A held pane is no live pane: it holds no
 * `max_panes` place, gets no layout and no idle close, and the session reopens only on its next
 * busy signal after the hold (so at most once per busy transition).
 *
 * @module
 */

import { failedAndGone, keep, startClose, type Step } from "./_step.ts";
import type { MachineEvent, StateOf, Transition } from "./types.ts";

/**
 * Advances a session whose failed pane is held.
 *
 * @param s The state.
 * @param e The event.
 * @param x The step.
 * @returns The next record and effects.
 */
export function held(s: StateOf<"held">, e: MachineEvent, x: Step): Transition {
  switch (e.type) {
    case "timer":
      return startClose(x, s.paneId, "failed", "dormant");
    case "gone":
      // Closed behind muxbridge's back before the hold ended: it failed all the same.
      return e.paneId === s.paneId ? failedAndGone(x, s.paneId) : keep(x);
    case "deleted":
      return startClose(x, s.paneId, "deleted", "delete");
    case "shutdown":
      return e.closePanes ? startClose(x, s.paneId, "shutdown", "exit") : keep(x);
    default:
      return keep(x);
  }
}
