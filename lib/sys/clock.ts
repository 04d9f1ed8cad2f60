/**
 * Time, injected. Every timer in muxbridge goes through a {@linkcode Clock} so tests run on a
 * simulated one; waits are conditions polled until a deadline, never fixed sleeps.
 *
 * @module
 */

/** An opaque timer handle. */
export type TimerId = number;

/** The time source and timer service muxbridge runs on. */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Calls `fn` once after `ms` milliseconds. */
  setTimeout(fn: () => void, ms: number): TimerId;
  /** Cancels a timer; unknown ids are ignored. */
  clearTimeout(id: TimerId): void;
}

/**
 * The real clock, over the runtime's timers.
 *
 * @returns A clock on wall time.
 */
export function createRealClock(): Clock {
  return {
    now: () => Date.now(),
    setTimeout: (fn, ms) => setTimeout(fn, Math.max(0, ms)) as unknown as TimerId,
    clearTimeout: (id) => clearTimeout(id),
  };
}

/**
 * Waits `ms` milliseconds on a clock, or until `signal` aborts.
 *
 * @param clock The clock.
 * @param ms How long.
 * @param signal Ends the wait early (resolves, does not reject).
 * @returns Whether the full time passed (false when aborted).
 */
export function sleep(clock: Clock, ms: number, signal?: AbortSignal): Promise<boolean> {
  if (signal?.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const onAbort = () => {
      clock.clearTimeout(id);
      resolve(false);
    };
    const id = clock.setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve(true);
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** Options of {@linkcode waitFor}. */
export interface WaitForOptions {
  /** Give up at this time (clock milliseconds). */
  deadline: number;
  /** First pause between checks. @default 10 */
  initialIntervalMs?: number;
  /** Longest pause between checks; pauses double up to it. @default 100 */
  maxIntervalMs?: number;
  /** Stops waiting early. */
  signal?: AbortSignal;
}

/**
 * Polls `condition` until it returns true, the deadline passes or the signal aborts. The first
 * check happens at once; pauses between checks grow from `initialIntervalMs` to
 * `maxIntervalMs`, and the last check happens at the deadline.
 *
 * @param clock The clock.
 * @param condition What to wait for; a throw ends the wait with that error.
 * @param options Deadline, pacing and abort.
 * @returns Whether the condition became true in time.
 *
 * @example Wait up to 250 ms for a file to appear
 * ```ts
 * import { existsSync } from "node:fs";
 * import { createRealClock, waitFor } from "./clock.ts";
 * const clock = createRealClock();
 * const appeared = await waitFor(clock, () => existsSync("/tmp/muxbridge-ready"), {
 *   deadline: clock.now() + 250,
 * });
 * ```
 */
export async function waitFor(
  clock: Clock,
  condition: () => boolean | Promise<boolean>,
  options: WaitForOptions,
): Promise<boolean> {
  let interval = options.initialIntervalMs ?? 10;
  const max = options.maxIntervalMs ?? 100;
  while (true) {
    if (options.signal?.aborted) return false;
    if (await condition()) return true;
    const left = options.deadline - clock.now();
    if (left <= 0) return false;
    if (!await sleep(clock, Math.min(interval, left), options.signal)) return false;
    interval = Math.min(interval * 2, max);
  }
}
