/**
 * A mark for what one test starts, found again by its environment: a program the test hands
 * {@linkcode ProcessMark.env} passes it on to everything it starts, so a background child whose
 * pid was never printed (its parent killed first, on a loaded machine) or a child orphaned when
 * its parent was killed is still found and stopped by {@linkcode ProcessMark.sweep}.
 *
 * @module
 */

import { stopTagged, taggedProcesses } from "../../scripts/_tagged_processes.ts";

/** The variable that carries the mark. */
const MARK_VAR = "MUXBRIDGE_TEST_MARK";

/** A mark and the sweep that stops whatever carries it. */
export interface ProcessMark {
  /** The environment entry to add to the marked program's environment. */
  env: Readonly<Record<string, string>>;
  /**
   * Stops every process of this user that still carries the mark (SIGTERM, then SIGKILL).
   *
   * @returns The pids that were still running.
   */
  sweep(): Promise<number[]>;
}

/**
 * A fresh mark.
 *
 * @returns The mark.
 *
 * @example Whatever the program left running is stopped
 * ```ts
 * import { markProcesses } from "./process_mark.ts";
 * const mark = markProcesses();
 * try {
 *   // Its background sleep holds no pipe of ours, so output() returns at once.
 *   const script = "sleep 600 </dev/null >/dev/null 2>&1 &";
 *   await new Deno.Command("sh", { args: ["-c", script], env: mark.env }).output();
 * } finally {
 *   await mark.sweep();
 * }
 * ```
 */
export function markProcesses(): ProcessMark {
  const value = crypto.randomUUID();
  return {
    env: { [MARK_VAR]: value },
    sweep: async () => {
      const left = taggedProcesses(value, { variable: MARK_VAR }).map((p) => p.pid);
      if (left.length > 0) await stopTagged(value, left, { variable: MARK_VAR, graceMs: 0 });
      return left;
    },
  };
}
