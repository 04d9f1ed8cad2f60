/**
 * A simulated clock: time moves only when a test calls `advance`, and due timers fire in
 * deadline order with the microtask queue drained after each.
 *
 * @module
 */

import type { Clock, TimerId } from "../../lib/sys/clock.ts";

/** A clock tests drive by hand. */
export interface FakeClock extends Clock {
  /** Moves time forward by `ms`, firing every timer due on the way. */
  advance(ms: number): Promise<void>;
  /** Lets pending promise chains run without moving time. */
  flush(): Promise<void>;
  /** How many timers are armed. */
  pending(): number;
}

/** Drains microtasks and one macrotask turn, so async chains settle. */
function drain(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

/**
 * Creates a simulated clock.
 *
 * @param start The initial time in ms. @default 1_000_000
 * @returns The clock.
 */
export function createFakeClock(start = 1_000_000): FakeClock {
  let now = start;
  let nextId = 1;
  const timers = new Map<TimerId, { at: number; fn: () => void; seq: number }>();
  const due = (limit: number) => {
    let best: [TimerId, { at: number; fn: () => void; seq: number }] | undefined;
    for (const entry of timers) {
      if (entry[1].at > limit) continue;
      if (
        !best || entry[1].at < best[1].at ||
        (entry[1].at === best[1].at && entry[1].seq < best[1].seq)
      ) best = entry;
    }
    return best;
  };
  return {
    now: () => now,
    setTimeout(fn, ms) {
      const id = nextId++;
      timers.set(id, { at: now + Math.max(0, ms), fn, seq: id });
      return id;
    },
    clearTimeout(id) {
      timers.delete(id);
    },
    async advance(ms) {
      const target = now + ms;
      await drain();
      while (true) {
        const next = due(target);
        if (!next) break;
        timers.delete(next[0]);
        now = Math.max(now, next[1].at);
        next[1].fn();
        await drain();
      }
      now = target;
      await drain();
    },
    flush: drain,
    pending: () => timers.size,
  };
}
