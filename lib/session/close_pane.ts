/**
 * The one close procedure every backend shares: interrupt, wait until the pane is gone or the
 * grace period ends (whichever is first), kill, verify the pane is gone, then make sure the
 * pane's program did not survive it.
 *
 * @module
 */

import type { Backend, PaneInfo } from "../backend/backend.ts";
import { lineById, type LineId } from "../opencode/line.ts";
import { type Clock, waitFor } from "../sys/clock.ts";
import { isMuxError, MuxError } from "../sys/errors.ts";
import type { Processes } from "../sys/processes.ts";
import type { PaneId } from "../sys/validate.ts";
import { carriesToken, recordedProgram } from "./pane_proof.ts";

/** Options of {@linkcode closePane}. */
export interface ClosePaneOptions {
  /** The most to wait between interrupt and kill (`close_grace_ms`). */
  graceMs: number;
  /**
   * The most a program that outlived its pane gets between SIGTERM and SIGKILL
   * (`survivor_grace_ms`). @default graceMs
   */
  survivorGraceMs?: number;
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
  /**
   * The start stamp of `pid` read at spawn ({@linkcode Processes.startTime}). A pane that is
   * already gone has its recorded program checked only when this is given and still matches,
   * so a pid the system has since reused is never signalled.
   */
  pidStart?: string;
  /**
   * The pane's spawn token. Where the backend's pids are another program's word
   * (`ownership.pid` is not `multiplexer`: a pane provider), a process is signalled only while
   * its environment carries this token; without it, none is.
   */
  token?: string;
  /**
   * How the pane's program is interrupted (the pane's OpenCode line decides:
   * {@linkcode OpencodeLine.interrupt}): `key` types Ctrl+C into the pane; `signal` sends
   * SIGTERM to the recorded program's process group, and falls back to the key when the
   * program is not the recorded one (a pid is signalled only with its start stamp matching).
   * @default "key"
   */
  interrupt?: "key" | "signal";
}

/**
 * How a recorded pane's program is interrupted: as its OpenCode line says.
 *
 * @param record The pane's record (`opencode` absent: 1.x).
 * @returns `key` or `signal`.
 *
 * @example
 * ```ts
 * import { interruptOf } from "./close_pane.ts";
 * interruptOf({ opencode: 2 }); // "signal"
 * interruptOf({}); // "key"
 * ```
 */
export function interruptOf(record: { opencode?: LineId } | null | undefined): "key" | "signal" {
  return lineById(record?.opencode ?? 1).interrupt;
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
 * When the caller recorded the pane's program (`pid` and `pidStart`) and it still runs, the
 * close costs two multiplexer calls: the interrupt, then the kill (nothing when the program's
 * exit already took the pane). The wait in between watches the program itself, not the pane,
 * and a backend whose kill removes the pane before it answers (`capabilities.killVerifies`) is
 * not asked again. Otherwise the pane is inspected first, watched through the grace period and
 * checked after the kill.
 *
 * @param backend The backend.
 * @param paneId The pane.
 * @param options Grace period, clock, process seam.
 * @returns What happened.
 * @throws {MuxError} `close_unverified` when the pane, or its program, is still there after
 *   the kill; any backend error of the interrupt or kill.
 */
export async function closePane(
  backend: Backend,
  paneId: PaneId,
  options: ClosePaneOptions,
): Promise<ClosePaneResult> {
  const { clock, processes, token } = options;
  // A pid that is the multiplexer's word names the program it started; any other pid (a pane
  // provider's) is only the program's once its environment carries the pane's token.
  const claimed = backend.ownership.pid !== "multiplexer";
  const provable = (pid: number) =>
    !claimed || (token !== undefined && carriesToken(processes!, pid, token));
  // The recorded program, when it is still the one recorded and runs: it stands for the pane.
  const recorded: { pid: number; start: string | undefined } | undefined = processes &&
    recordedProgram(backend, options, processes);
  const before = recorded ? undefined : await backend.inspect(paneId, options.signal);
  // The program to check afterwards. A live pane's pid is current: read its start stamp now.
  // A dead (held) pane's pid is stale and a gone pane has none, so only the recorded pid and
  // stamp can be trusted for them.
  let program = recorded;
  if (!program && before?.pid !== undefined && !before.dead && processes && provable(before.pid)) {
    program = { pid: before.pid, start: processes.startTime(before.pid) };
  } else if (
    !program && options.pid !== undefined && options.pidStart !== undefined &&
    (!claimed || token !== undefined)
  ) {
    program = { pid: options.pid, start: options.pidStart };
  }
  const survivor = async () =>
    program && processes
      ? await terminateSurvivor(
        processes,
        program.pid,
        clock,
        options.survivorGraceMs ?? options.graceMs,
        program.start,
        // A claimed program's leftovers are ended one by one, each only while it carries the token.
        claimed ? token : undefined,
      )
      : false;
  if (before === null) {
    return { alreadyGone: true, killed: false, programTerminated: await survivor() };
  }
  // `last` is the latest sighting: null once the pane is seen gone. Each check is one call.
  let last: PaneInfo | null | undefined = before;
  if (!before?.dead) {
    const interrupted = options.interrupt === "signal" && recorded
      ? (processes!.signal(recorded.pid, "SIGTERM", true), Promise.resolve(false))
      : unlessGone(() => backend.interrupt(paneId, options.signal));
    if (await interrupted) {
      // "Gone" from the interrupt is the backend's reading of an error (cmux: the terminal
      // session ended): the pane itself is only gone once it is no longer listed.
      last = await backend.inspect(paneId, options.signal);
      if (last === null && recorded) {
        return { alreadyGone: true, killed: false, programTerminated: await survivor() };
      }
    } else if (options.graceMs > 0) {
      const wait = {
        deadline: clock.now() + options.graceMs,
        initialIntervalMs: 10,
        maxIntervalMs: 50,
        signal: options.signal,
      };
      if (recorded) {
        // Its program ending takes the pane with it; watching the program costs no call.
        await waitFor(clock, () => !processes!.alive(recorded.pid), {
          ...wait,
          initialIntervalMs: 2,
        });
      } else {
        await waitFor(clock, async () => {
          last = await backend.inspect(paneId);
          return last === null || last.dead;
        }, wait);
      }
    }
  }
  let killed = false;
  // Still there (or its program ended but the pane stays: remain-on-exit, held panes): kill it.
  if (last !== null) {
    // A program that already ended was not killed, even if the kill still found its pane.
    const ran = recorded ? processes!.alive(recorded.pid) : true;
    const killing = unlessGone(() => backend.kill(paneId));
    // A recorded program that ended before the kill can leave nothing behind later than now: a
    // process group or session with no live member gains none (only a member can fork into it).
    // So it is looked for while the kill runs, not after it (the kill's process is started by
    // now): one scan of the process table off the close's critical path.
    if (
      recorded && !ran &&
      survivorsOf(processes!, recorded.pid, recorded.start, claimed ? token : undefined)
          .length === 0
    ) {
      program = undefined;
    }
    killed = !(await killing) && ran;
    const verified = backend.capabilities.killVerifies ||
      await waitFor(clock, async () => (await backend.inspect(paneId)) === null, {
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
  return { alreadyGone: false, killed, programTerminated: await survivor() };
}

/**
 * What is left of a pane program: the live processes of the group and session it leads, itself
 * included while it runs; none when `pid` now belongs to a later process (its start stamp
 * differs from `start`), whose group is not the program's.
 *
 * @param processes The process seam.
 * @param pid The program's pid.
 * @param start The program's start stamp when it was known good; undefined: no check possible.
 * @returns The pids to end, or none.
 */
function survivorsOf(
  processes: Processes,
  pid: number,
  start?: string,
  token?: string,
): number[] {
  if (!Number.isInteger(pid) || pid <= 1) return [];
  if (token !== undefined) {
    return processes.members(pid).filter((p) => carriesToken(processes, p, token));
  }
  // Reused: the pid names a process whose start stamp is another. A leader that has just ended
  // is not reused (its stamp is unreadable): its group's members are still the program's.
  const reused = () => {
    const now = start === undefined ? undefined : processes.startTime(pid);
    return now !== undefined && now !== start;
  };
  // A reused pid could only lead a group once the old one ended: the leader is checked first.
  if (reused()) return [];
  const members = processes.members(pid);
  return members.includes(pid) && reused() ? [] : members;
}

/**
 * Ends a pane program that outlived its pane, with everything it started: SIGTERM to its process
 * group (and to any process of its session that left the group), then SIGKILL after the grace
 * period, then a check that nothing is left. The OpenCode TUI ignores the SIGHUP a closing
 * pane delivers (`docs/opencode.md`, "Around the panes"), and a launcher that dies of it can leave
 * its child running, so the leader alone is not the test: the whole group and session are.
 *
 * A pid is only signalled while it is still the recorded process: a live leader whose start
 * stamp differs from `start` is a later process that reused the number, and is left alone.
 * While any member of the group or session lives, Linux does not hand its id out again, so a
 * dead leader's leftover members are still the program's own.
 *
 * @param processes The process seam.
 * @param pid The program's pid (a process-group and session leader in a pane).
 * @param clock The clock.
 * @param graceMs The most to wait before SIGKILL (`survivor_grace_ms`; at least 100 ms).
 * @param start The leader's start stamp when it was known good; undefined: no check possible.
 * @param token Only processes whose environment carries this spawn token are signalled, each
 *   on its own (no group signal): for a pid that is another program's word (a pane provider's).
 * @returns Whether something had survived and was signalled.
 * @throws {MuxError} `close_unverified` when a process is still there after SIGKILL.
 */
export async function terminateSurvivor(
  processes: Processes,
  pid: number,
  clock: Clock,
  graceMs: number,
  start?: string,
  token?: string,
): Promise<boolean> {
  if (!Number.isInteger(pid) || pid <= 1) return false;
  const survivors = () => survivorsOf(processes, pid, start, token);
  const ended = (ms: number) =>
    waitFor(clock, () => survivors().length === 0, {
      deadline: clock.now() + ms,
      initialIntervalMs: 5,
      maxIntervalMs: 50,
    });
  const send = (sig: "SIGTERM" | "SIGKILL") => {
    const members = survivors();
    if (members.length === 0) return;
    if (token === undefined) processes.signal(pid, sig, true);
    for (const member of members) {
      if (member !== pid || token !== undefined) processes.signal(member, sig, false);
    }
  };
  // The pane's close delivers SIGHUP; give the program a moment to act on it first.
  if (await ended(Math.min(graceMs, 100))) return false;
  send("SIGTERM");
  if (await ended(Math.max(graceMs, 100))) return true;
  send("SIGKILL");
  if (await ended(1000)) return true;
  throw new MuxError(
    "close_unverified",
    `Cannot end the program of a closed pane: pid ${pid} or its children survived SIGKILL`,
    { hint: `Check \`ps -g ${pid}\` and end what is left by hand` },
  );
}
