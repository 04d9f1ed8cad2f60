/**
 * `closing`: a close is in flight, or waits to be retried (`waiting`); `then` says what follows
 * it. A failed close is retried with a doubling pause up to `closeRetries` times, then the pane
 * is `stuck`.
 *
 * @module
 */

import { emit, keep, startOpen, type Step, to } from "./_step.ts";
import type { Effect, MachineEvent, StateOf, Transition } from "./types.ts";

/**
 * Advances a session whose pane is closing.
 *
 * @param s The state.
 * @param e The event.
 * @param x The step.
 * @returns The next record and effects.
 */
export function closing(s: StateOf<"closing">, e: MachineEvent, x: Step): Transition {
  const afterExit = s.then === "delete" ? "delete" : "exit";
  switch (e.type) {
    case "status":
      // A busy child during an idle close gets its pane back once the close is done.
      if (e.status === "busy") {
        return s.then === "dormant" && s.reason === "idle"
          ? to(x, { ...s, then: "reopen" })
          : keep(x);
      }
      return s.then === "reopen" ? to(x, { ...s, then: "dormant" }) : keep(x);
    case "deleted":
      return to(x, { ...s, then: "delete" });
    case "timer":
      return s.waiting
        ? to(x, { ...s, waiting: false }, { type: "close", paneId: s.paneId, reason: s.reason })
        : keep(x);
    case "closed":
      return closed(s, x);
    case "close_failed":
      if (s.attempt <= x.config.closeRetries) {
        const delay = x.config.closeRetryDelayMs * 2 ** (s.attempt - 1);
        return to(x, { ...s, attempt: s.attempt + 1, waiting: true }, {
          type: "arm",
          at: x.now + delay,
        });
      }
      return to(
        x,
        { kind: "stuck", paneId: s.paneId, deleted: s.then === "delete" },
        emit({
          type: "pane.failed",
          sessionID: x.record.id,
          op: "close",
          code: e.code,
          message: e.message,
        }),
        { type: "store_mark_stuck", paneId: s.paneId },
      );
    case "shutdown":
      if (!e.closePanes) return keep(x);
      return s.waiting
        ? to(x, { ...s, waiting: false, then: afterExit }, {
          type: "close",
          paneId: s.paneId,
          reason: s.reason,
        })
        : to(x, { ...s, then: afterExit });
    default:
      return keep(x);
  }
}

/** The pane is closed: forget it, report it, and go where `then` says. */
function closed(s: StateOf<"closing">, x: Step): Transition {
  const done: Effect[] = [
    { type: "store_remove", paneId: s.paneId },
    emit({ type: "pane.closed", sessionID: x.record.id, paneId: s.paneId, reason: s.reason }),
    ...(s.reason === "shutdown" ? [{ type: "count_close" } as const] : []),
  ];
  switch (s.then) {
    case "delete":
      return to(x, { kind: "deleted" }, ...done, { type: "layout" });
    case "reopen": {
      const t = startOpen(x, null);
      return { record: t.record, effects: [...done, ...t.effects] };
    }
    case "exit":
      return to(x, { kind: "dormant", why: "shutdown" }, ...done);
    case "dormant":
      return to(
        x,
        { kind: "dormant", why: s.reason === "failed" ? "failed" : "idle" },
        ...done,
        { type: "layout" },
      );
    default: {
      const never: never = s.then;
      throw new TypeError(`Unknown close follow-up ${JSON.stringify(never)}`);
    }
  }
}
