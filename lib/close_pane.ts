/**
 * The one close procedure every backend shares: interrupt, wait until the pane is gone or the
 * grace period ends (whichever is first), kill, verify the pane is gone, then make sure the
 * pane's program did not survive it.
 *
 * @module
 */

import type { Backend, PaneInfo } from "./backend.ts";
import { type Clock, waitFor } from "./clock.ts";
import { isMuxError, MuxError } from "./errors.ts";
import type { Processes } from "./processes.ts";

/** Options of {@linkcode closePane}. */
export interface ClosePaneOptions {
  /** The most to wait between interrupt and kill (`close_grace_ms`). */
  graceMs: number;
  /** The clock. */
  clock: Clock;
  /** The process seam; without it a surviving program is not checked. */
  processes?: Processes;
  /** How long to wait for a killed pane to disappear. @default 2000 */
  verifyMs?: number;
  /** Aborts the wait (the kill still happens). */
  signal?: AbortSignal;
  /** The pane program's pid when the caller recorded it at spawn. */
  pid?: number;
}

/** What {@linkcode closePane} did. */
export interface ClosePaneResult {
  /** The pane was already gone before anything was sent. */
  alreadyGone: boolean;
  /** The pane had to be killed (the interrupt did not end it within the grace period). */
  killed: boolean;
  /** The pane's program outlived its pane and was terminated. */
  programTerminated: boolean;
}

/** Runs an operation, reading `pane_not_found` as "gone". */
async function unlessGone(op: () => Promise<void>): Promise<boolean> {
  try {
    await op();
    return false;
  } catch (err) {
    if (isMuxError(err, "pane_not_found")) return true;
    throw err;
  }
}

/**
 * Closes a pane gracefully and verifies it. "Already gone" is success.
 *
 * @param backend The backend.
 * @param paneId The pane.
 * @param options Grace period, clock, process seam.
 * @returns What happened.
 * @throws {MuxError} `close_unverified` when the pane is still there after the kill; any
 *   backend error of the interrupt or kill.
 */
export async function closePane(
  backend: Backend,
  paneId: string,
  options: ClosePaneOptions,
): Promise<ClosePaneResult> {
  const { clock } = options;
  const before = await backend.inspect(paneId, options.signal);
  if (!before) return { alreadyGone: true, killed: false, programTerminated: false };
  const pid = before.pid ?? options.pid;
  // `last` is the latest sighting: null once the pane is seen gone. Each check is one call.
  let last: PaneInfo | null = before;
  if (!before.dead) {
    if (await unlessGone(() => backend.interrupt(paneId, options.signal))) last = null;
    else if (options.graceMs > 0) {
      await waitFor(clock, async () => {
        last = await backend.inspect(paneId);
        return last === null || last.dead;
      }, {
        deadline: clock.now() + options.graceMs,
        initialIntervalMs: 10,
        maxIntervalMs: 50,
        signal: options.signal,
      });
    }
  }
  let killed = false;
  // Still there (or its program ended but the pane stays: remain-on-exit, held panes): kill it.
  if (last !== null) {
    killed = !(await unlessGone(() => backend.kill(paneId)));
    const verified = await waitFor(clock, async () => (await backend.inspect(paneId)) === null, {
      deadline: clock.now() + (options.verifyMs ?? 2000),
      initialIntervalMs: 5,
      maxIntervalMs: 100,
    });
    if (!verified) {
      throw new MuxError(
        "close_unverified",
        `Cannot close pane "${paneId}": it is still there after the kill`,
        {
          hint: "Close it by hand; `muxbridge list` still shows it",
        },
      );
    }
  }
  const programTerminated = pid !== undefined && options.processes
    ? await terminateSurvivor(options.processes, pid, clock, options.graceMs)
    : false;
  return { alreadyGone: false, killed, programTerminated };
}

/**
 * Ends a pane program that outlived its pane: SIGTERM to its process group, then SIGKILL after
 * the grace period.
 *
 * @param processes The process seam.
 * @param pid The program's pid (a process-group leader in a pane).
 * @param clock The clock.
 * @param graceMs The most to wait before SIGKILL.
 * @returns Whether it had survived and was signalled.
 */
export async function terminateSurvivor(
  processes: Processes,
  pid: number,
  clock: Clock,
  graceMs: number,
): Promise<boolean> {
  // The pane's close delivers SIGHUP; give the program a moment to act on it first.
  const ended = await waitFor(clock, () => !processes.alive(pid), {
    deadline: clock.now() + Math.min(graceMs, 100),
    initialIntervalMs: 5,
    maxIntervalMs: 20,
  });
  if (ended) return false;
  processes.signal(pid, "SIGTERM", true);
  const terminated = await waitFor(clock, () => !processes.alive(pid), {
    deadline: clock.now() + Math.max(graceMs, 100),
    initialIntervalMs: 5,
    maxIntervalMs: 50,
  });
  if (!terminated) processes.signal(pid, "SIGKILL", true);
  return true;
}
