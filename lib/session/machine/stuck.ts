/**
 * `stuck`: every close attempt failed; reported, kept for `list` and `cleanup`. A shutdown that
 * closes panes tries once more.
 *
 * @module
 */

import { keep, type Step, to } from "./_step.ts";
import type { MachineEvent, StateOf, Transition } from "./types.ts";

/**
 * Advances a session whose pane could not be closed.
 *
 * @param s The state.
 * @param e The event.
 * @param x The step.
 * @returns The next record and effects.
 */
export function stuck(s: StateOf<"stuck">, e: MachineEvent, x: Step): Transition {
  switch (e.type) {
    case "deleted":
      return to(x, { ...s, deleted: true });
    case "shutdown":
      if (!e.closePanes) return keep(x);
      return to(
        x,
        {
          kind: "closing",
          paneId: s.paneId,
          reason: "shutdown",
          attempt: x.config.closeRetries + 1,
          waiting: false,
          then: s.deleted ? "delete" : "exit",
        },
        { type: "close", paneId: s.paneId, reason: "shutdown" },
      );
    default:
      return keep(x);
  }
}
