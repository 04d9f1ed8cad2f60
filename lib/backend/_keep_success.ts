/**
 * Private to backends: a one-time step whose first success is kept.
 *
 * @module
 */

/**
 * Keeps the first success of a one-time step (a version gate, a transport decision) for the
 * backend's life; a failure is not kept, so the next call tries again. Calls made while the step
 * runs share it (with the first caller's signal).
 *
 * @param step The step.
 * @returns The step, run at most until it succeeds once.
 *
 * @example
 * ```ts
 * import { keepSuccess } from "./_keep_success.ts";
 * let runs = 0;
 * const version = keepSuccess(() => Promise.resolve(`3.${++runs}`));
 * await version(); // "3.1": the step ran
 * await version(); // "3.1" again: the kept success, the step did not run
 * ```
 */
export function keepSuccess<T>(
  step: (signal?: AbortSignal) => Promise<T>,
): (signal?: AbortSignal) => Promise<T> {
  let kept: Promise<T> | undefined;
  return (signal) => {
    if (!kept) {
      const pending = step(signal);
      pending.catch(() => {
        if (kept === pending) kept = undefined;
      });
      kept = pending;
    }
    return kept;
  };
}
