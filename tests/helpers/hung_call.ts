/**
 * Fault tests on the fake CLIs (`tests/fakes/bin/*`, Deno scripts): a call told to hang must end
 * `timed_out`, and quickly, but every other call (the version check first of all) must never
 * time out. One short `command_timeout_ms` for all did both on a quiet machine only: each start
 * of a fake takes seconds on a loaded one, and a healthy call timed out before the fault was
 * reached. So the backend keeps a bound no load reaches, and this runner cuts only the hung
 * call short.
 *
 * @module
 */

import type { Runner } from "../../lib/sys/exec.ts";

/** The bound for a call a fault hangs, in ms. */
export const HUNG_CALL_MS = 2000;

/** A `command_timeout_ms` no loaded machine reaches, for the calls that are not hung. */
export const PATIENT_TIMEOUT_MS = 60_000;

/**
 * A runner that gives the call a fault hangs {@linkcode HUNG_CALL_MS}; every other call keeps
 * the backend's own bound.
 *
 * @param run The runner to wrap.
 * @param fault The fault now, in the fakes' form: `hang:<command>` hangs calls whose argv holds
 *   `<command>`; anything else (or undefined) hangs nothing.
 * @returns The runner.
 *
 * @example
 * ```ts
 * import { createRunner } from "../../lib/sys/exec.ts";
 * import { cutHungCall } from "./hung_call.ts";
 * const env: Record<string, string> = { FAKE_ZELLIJ_FAULT: "hang:list-panes" };
 * const run = cutHungCall(createRunner(), () => env.FAKE_ZELLIJ_FAULT);
 * ```
 */
export function cutHungCall(run: Runner, fault: () => string | undefined): Runner {
  return (argv, opts) => {
    const f = fault();
    const hung = f?.startsWith("hang:") ? f.slice("hang:".length) : undefined;
    return run(
      argv,
      hung !== undefined && argv.includes(hung)
        ? { ...opts, timeoutMs: Math.min(HUNG_CALL_MS, opts.timeoutMs) }
        : opts,
    );
  };
}
