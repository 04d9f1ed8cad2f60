/**
 * `opening`: a spawn is in flight; idle, delete and shutdown signals wait in `idleSince` and
 * `then` until it answers. The pane that comes up is recorded at once, even when it must close.
 *
 * @module
 */

import type { CloseReason } from "../events.ts";
import { emit, idleDueAt, keep, openState, paneOpened, type Step, to } from "./_step.ts";
import { viewOf } from "./_view.ts";
import type { Effect, MachineEvent, StateOf, Transition } from "./types.ts";

/**
 * Advances a session whose pane is being opened.
 *
 * @param s The state.
 * @param e The event.
 * @param x The step.
 * @returns The next record and effects.
 */
export function opening(s: StateOf<"opening">, e: MachineEvent, x: Step): Transition {
  switch (e.type) {
    case "status":
      return to(x, { ...s, idleSince: e.status === "busy" ? null : x.now });
    case "deleted":
      return to(x, { ...s, then: "delete" });
    case "spawned":
      return spawned(s, e, x);
    case "spawn_failed": {
      const report = e.skip
        ? emit({
          type: "pane.skipped",
          sessionID: x.record.id,
          reason: e.skip.reason,
          hint: e.skip.hint,
        })
        : emit({
          type: "pane.failed",
          sessionID: x.record.id,
          op: "open",
          code: e.code,
          message: e.message,
        });
      const effects: Effect[] = e.lost ? [report, { type: "watch" }] : [report];
      if (s.then === "delete") return to(x, { kind: "deleted" }, ...effects);
      const why = s.then === "shutdown" ? "shutdown" : e.skip ? "skipped" : "failed";
      return to(x, { kind: "dormant", why }, ...effects);
    }
    case "shutdown":
      if (!e.closePanes) return s.then === "shutdown" ? to(x, { ...s, then: "keep" }) : keep(x);
      return to(x, { ...s, then: s.then === "delete" ? "delete" : "shutdown" });
    default:
      return keep(x);
  }
}

/** The pane came up: record it, report it, and close it at once if its session went meanwhile. */
function spawned(
  s: StateOf<"opening">,
  e: Extract<MachineEvent, { type: "spawned" }>,
  x: Step,
): Transition {
  const opened: Effect[] = [
    { type: "store_put", paneId: e.paneId, ...(e.pending ? { replaces: e.pending } : {}) },
    paneOpened(x.record.id, e),
    { type: "watch" },
  ];
  if (s.then === "delete" || s.then === "shutdown") {
    const reason: CloseReason = s.then === "delete" ? "deleted" : "shutdown";
    return to(
      x,
      {
        kind: "closing",
        paneId: e.paneId,
        reason,
        attempt: 1,
        waiting: false,
        then: s.then === "delete" ? "delete" : "exit",
      },
      ...opened,
      { type: "close", paneId: e.paneId, reason },
    );
  }
  const effects = e.arranged ? opened : [...opened, { type: "layout" } as const];
  if (s.idleSince !== null) {
    effects.push({
      type: "arm",
      at: idleDueAt({ openedAt: x.now, idleSince: s.idleSince }, x.config),
    });
  }
  return to(
    x,
    openState(e.paneId, x.now, s.idleSince, e.view ?? viewOf(x.record, x.config)),
    ...effects,
  );
}
