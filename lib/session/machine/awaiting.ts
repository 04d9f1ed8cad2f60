/**
 * `awaiting`: waiting for the server to know the child before the pane attaches (readiness); a
 * delete or shutdown cancels the wait, and no pane opens.
 *
 * @module
 */

import { emit, keep, type Step, to } from "./_step.ts";
import type { MachineEvent, StateOf, Transition } from "./types.ts";

/**
 * Advances a session whose pane waits for the server.
 *
 * @param s The state.
 * @param e The event.
 * @param x The step.
 * @returns The next record and effects.
 */
export function awaiting(s: StateOf<"awaiting">, e: MachineEvent, x: Step): Transition {
  switch (e.type) {
    case "status":
      return to(x, { ...s, idleSince: e.status === "busy" ? null : x.now });
    case "ready":
      return to(x, { kind: "opening", idleSince: s.idleSince, then: "keep" }, { type: "spawn" });
    case "unready":
      return to(
        x,
        { kind: "dormant", why: e.reason === "server_unreachable" ? "unreachable" : "skipped" },
        emit({ type: "pane.skipped", sessionID: x.record.id, reason: e.reason, hint: e.hint }),
      );
    case "deleted":
      return to(x, { kind: "deleted" }, { type: "cancel_ready" });
    case "shutdown":
      // No new pane opens while the bridge ends, whatever close_on_exit says.
      return to(x, { kind: "dormant", why: "shutdown" }, { type: "cancel_ready" });
    default:
      return keep(x);
  }
}
