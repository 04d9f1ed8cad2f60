/**
 * `queued`: the child waits for a free pane (`max_panes`). The loop admits queued children in
 * order as panes free (`admitted`, decided by `admissions` in `queue.ts`) and tells each its
 * place once (`waiting`: `pane.skipped`, reason `max_panes`). A child that goes idle while it
 * waits leaves the queue: it is done, and a pane now would only close again; its next busy signal
 * queues it anew.
 *
 * @module
 */

import { admitted, emit, keep, type Step, to } from "./_step.ts";
import type { MachineEvent, StateOf, Transition } from "./types.ts";

/**
 * Advances a session that waits for a free pane.
 *
 * @param s The state.
 * @param e The event.
 * @param x The step.
 * @returns The next record and effects.
 */
export function queued(s: StateOf<"queued">, e: MachineEvent, x: Step): Transition {
  switch (e.type) {
    case "status":
      return e.status === "idle" ? to(x, { kind: "dormant", why: "idle" }) : keep(x);
    case "admitted":
      return admitted(x, null);
    case "waiting":
      if (s.reported) return keep(x);
      return to(
        x,
        { ...s, reported: true },
        emit({
          type: "pane.skipped",
          sessionID: x.record.id,
          reason: "max_panes",
          hint: `${
            x.config.maxPanes ?? "All"
          } child panes are open (max_panes); this child is number ${e.position} in the queue and gets a pane when one closes`,
          position: e.position,
        }),
      );
    case "deleted":
      return to(x, { kind: "deleted" });
    case "shutdown":
      return to(x, { kind: "dormant", why: "shutdown" });
    default:
      return keep(x);
  }
}
