/**
 * The process seam: is a process alive, when did it start, and terminating one (or its process
 * group). Used to tell a dead owner from a live one and to end a pane program that survived its
 * pane (the OpenCode TUI ignores SIGHUP).
 *
 * @module
 */

import { readdirSync, readFileSync, statSync } from "node:fs";
import process from "node:process";

/** Process operations muxbridge needs. */
export interface Processes {
  /** This process's id. */
  readonly selfPid: number;
  /**
   * Whether a process exists. A zombie whose threads have all ended counts as gone (only its
   * parent can reap it); a main thread that ended while other threads still run shows as a
   * zombie too, but that program is still running and counts as alive.
   */
  alive(pid: number): boolean;
  /** An opaque start stamp that tells a process from a later one with the same pid. */
  startTime(pid: number): string | undefined;
  /** Sends a signal to the process, or to its process group when `group` is true. */
  signal(pid: number, sig: "SIGTERM" | "SIGKILL", group: boolean): void;
  /**
   * The live processes of the process group and of the session that `leader` leads, the leader
   * itself included while it lives (zombies excluded). A pane's program is the leader of both:
   * terminals start it with `setsid` (tmux: `forkpty`), so whatever it started stays in them
   * unless it left on purpose (`setsid` again). Without `/proc` only the leader is reported.
   * Processes of other users are never members: muxbridge signals only its own user's.
   * A process is listed while any of its threads runs ({@linkcode Processes.alive}).
   */
  members(leader: number): number[];
  /**
   * A process's environment as it was when it last `exec`ed ({@linkcode processEnviron}):
   * undefined when it cannot be read (gone, another user's, no `/proc`).
   */
  environ(pid: number): Readonly<Record<string, string>> | undefined;
}

/** Reads `/proc/<pid>/stat` fields after the command name; undefined off Linux or when gone. */
function statFields(pid: number): string[] | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    return text.slice(text.lastIndexOf(")") + 2).split(" ");
  } catch {
    return undefined;
  }
}

/**
 * Whether a process belongs to another user (`/proc/<pid>` is owned by its real uid). muxbridge
 * only ever signals its own user's programs: a pid from a record (or a reused one) that names
 * someone else's process is left alone, whatever its start stamp says. False off Linux.
 */
function foreign(pid: number): boolean {
  if (typeof process.geteuid !== "function") return false;
  try {
    return statSync(`/proc/${pid}`).uid !== process.geteuid();
  } catch {
    return false;
  }
}

/**
 * Whether a process in state `state` (from `/proc/<pid>/stat`) has ended. `Z` is what the
 * kernel shows for a thread-group leader that exited, also while the group's other threads
 * still run (a multi-threaded program whose main thread ended first, as Bun programs do on
 * their way out): it has ended only once `Threads:` in `/proc/<pid>/status` is down to the
 * leader itself.
 */
function ended(pid: number, state: string): boolean {
  if (state !== "Z" && state !== "X") return false;
  try {
    const threads = /^Threads:\s+(\d+)$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
    return threads === undefined || Number(threads) <= 1;
  } catch {
    return true; // reaped meanwhile
  }
}

/** Reads `/proc/<pid>/stat` fields of every process; empty off Linux. */
function everyStat(): Array<{ pid: number; fields: string[] }> {
  let names: string[];
  try {
    names = readdirSync("/proc");
  } catch {
    return [];
  }
  const out: Array<{ pid: number; fields: string[] }> = [];
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    const fields = statFields(Number(name));
    if (fields) out.push({ pid: Number(name), fields });
  }
  return out;
}

/**
 * The real process seam over `node:process` and `/proc`.
 *
 * @returns The seam.
 */
export function createProcesses(): Processes {
  return {
    selfPid: process.pid,
    alive(pid) {
      if (!Number.isInteger(pid) || pid <= 0) return false;
      const fields = statFields(pid);
      if (fields) return !ended(pid, fields[0]);
      try {
        process.kill(pid, 0);
        return true;
      } catch (err) {
        return (err as { code?: string }).code === "EPERM";
      }
    },
    startTime(pid) {
      // Field 22 of /proc/<pid>/stat (starttime, clock ticks since boot); index 19 after the name.
      return statFields(pid)?.[19];
    },
    signal(pid, sig, group) {
      if (!Number.isInteger(pid) || pid <= 1) throw new RangeError(`Cannot signal pid ${pid}`);
      if (foreign(pid)) return; // another user's process: never signalled
      try {
        process.kill(group ? -pid : pid, sig);
      } catch (err) {
        if ((err as { code?: string }).code !== "ESRCH") throw err;
      }
    },
    members(leader) {
      if (!Number.isInteger(leader) || leader <= 1) return [];
      const all = everyStat();
      if (all.length === 0) return this.alive(leader) ? [leader] : [];
      // Fields after the name: state, ppid, pgrp, session (proc(5)).
      return all.filter(({ pid, fields }) =>
        (pid === leader || Number(fields[2]) === leader || Number(fields[3]) === leader) &&
        !ended(pid, fields[0]) && !foreign(pid)
      ).map(({ pid }) => pid);
    },
    environ: (pid) => processEnviron(pid),
  };
}

/**
 * Reads a process's environment as it was when the process last `exec`ed
 * (`/proc/<pid>/environ`, readable for processes of the same user).
 *
 * @param pid The process.
 * @returns The variables; undefined off Linux, when the process is gone or cannot be read.
 *
 * @example
 * ```ts
 * import process from "node:process";
 * import { processEnviron } from "./processes.ts";
 * processEnviron(process.pid)?.PATH !== undefined; // true on Linux
 * ```
 */
export function processEnviron(pid: number): Record<string, string> | undefined {
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/environ`, "utf8");
  } catch {
    return undefined;
  }
  const env: Record<string, string> = {};
  for (const entry of text.split("\0")) {
    const eq = entry.indexOf("=");
    if (eq > 0) env[entry.slice(0, eq)] = entry.slice(eq + 1);
  }
  return env;
}

/**
 * The session leaders of this user with their environment (`/proc/<pid>/environ`): the
 * programs a terminal started in its panes (a pane's program leads its own session), for a
 * backend whose multiplexer names no pane's pid but puts the pane's id in its environment
 * (WezTerm's `WEZTERM_PANE`).
 *
 * @returns The leaders whose environment could be read; empty off Linux.
 *
 * @example
 * ```ts
 * import { sessionLeaders } from "./processes.ts";
 * const panes = sessionLeaders().filter((l) => l.env.WEZTERM_PANE !== undefined);
 * ```
 */
export function sessionLeaders(): Array<{ pid: number; env: Record<string, string> }> {
  const out: Array<{ pid: number; env: Record<string, string> }> = [];
  for (const { pid, fields } of everyStat()) {
    // Fields after the name: state, ppid, pgrp, session (proc(5)).
    if (Number(fields[3]) !== pid || ended(pid, fields[0]) || foreign(pid)) continue;
    const env = processEnviron(pid);
    if (env) out.push({ pid, env });
  }
  return out;
}

/** Whether {@linkcode processEnviron} can read anything on this system (Linux `/proc`). */
export const ENVIRON_READABLE: boolean = process.platform === "linux";

/**
 * Tells whether `pid` is still the very process whose start stamp was read earlier: the same
 * pid with a different start is a later process that reused the number and must never be
 * signalled.
 *
 * @param processes The process seam.
 * @param pid The pid.
 * @param start The stamp read from {@linkcode Processes.startTime} when the pid was known good.
 * @returns Whether it runs and is that process (false when gone or reused).
 *
 * @example
 * ```ts
 * import { createProcesses, sameProcess } from "./processes.ts";
 * const p = createProcesses();
 * sameProcess(p, p.selfPid, p.startTime(p.selfPid)); // true on Linux
 * ```
 */
export function sameProcess(processes: Processes, pid: number, start: string | undefined): boolean {
  if (!processes.alive(pid)) return false;
  const now = processes.startTime(pid);
  return start === undefined || now === undefined || now === start;
}

/**
 * The owner stamp written into ownership marks and state records: `<pid>:<start>`.
 *
 * @param processes The process seam.
 * @param pid The owner's pid. @default this process
 * @returns The stamp.
 */
export function ownerStamp(processes: Processes, pid: number = processes.selfPid): string {
  return `${pid}:${processes.startTime(pid) ?? "?"}`;
}

/**
 * Tells whether the owner a stamp names is still running (same pid, same start).
 *
 * @param processes The process seam.
 * @param stamp A stamp from {@linkcode ownerStamp}; `cli` is never alive.
 * @returns Whether that very process still runs.
 */
export function ownerAlive(processes: Processes, stamp: string): boolean {
  const m = /^(\d+):(.+)$/.exec(stamp);
  if (!m) return false;
  // "?": the owner's start was unknown when stamped, so only its pid can be checked.
  return sameProcess(processes, Number(m[1]), m[2] === "?" ? undefined : m[2]);
}
