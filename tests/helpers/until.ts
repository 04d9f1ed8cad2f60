/**
 * The tests' bounded wait on real processes: one helper instead of one per test file.
 *
 * @module
 */

import { createRealClock, waitFor } from "../../lib/sys/clock.ts";

const clock = createRealClock();

/** Bounds and context of {@linkcode until}. */
export interface UntilOptions {
  /**
   * How long the condition may take: a ceiling that only ends a hung test (a loaded 2-core
   * machine takes seconds for what takes milliseconds alone). @default 60000
   */
  ms?: number;
  /** Longest pause between checks (pauses double from 10 ms up to it). @default 10 */
  maxIntervalMs?: number;
  /** What to add to the failure (logs, a screen), read only when the wait fails. */
  context?: () => string;
}

/**
 * Waits for a condition on real processes, bounded; throws with `what` when it never holds.
 *
 * @param what What is awaited, for the failure.
 * @param condition Checked at once, then after each pause.
 * @param options The bound, the pace and the failure's context.
 * @returns How long it took, in ms.
 * @throws {Error} When the condition did not hold within `ms`.
 */
export async function until(
  what: string,
  condition: () => boolean | Promise<boolean>,
  options: UntilOptions = {},
): Promise<number> {
  const { ms = 60_000, maxIntervalMs = 10, context } = options;
  const started = clock.now();
  const ok = await waitFor(clock, condition, { deadline: started + ms, maxIntervalMs });
  if (!ok) {
    throw new Error(
      `timed out after ${ms} ms waiting for ${what}${context ? `\n${context()}` : ""}`,
    );
  }
  return clock.now() - started;
}
