/**
 * The process seam: is a process alive, when did it start, and terminating one (or its process
 * group). Used to tell a dead owner from a live one and to end a pane program that survived its
 * pane (the OpenCode TUI ignores SIGHUP).
 *
 * @module
 */

import { readFileSync } from "node:fs";
import process from "node:process";

/** Process operations muxbridge needs. */
export interface Processes {
  /** This process's id. */
  readonly selfPid: number;
  /** Whether a process exists (a zombie counts as gone). */
  alive(pid: number): boolean;
  /** An opaque start stamp that tells a process from a later one with the same pid. */
  startTime(pid: number): string | undefined;
  /** Sends a signal to the process, or to its process group when `group` is true. */
  signal(pid: number, sig: "SIGTERM" | "SIGKILL", group: boolean): void;
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
      if (fields) return fields[0] !== "Z" && fields[0] !== "X";
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
      try {
        process.kill(group ? -pid : pid, sig);
      } catch (err) {
        if ((err as { code?: string }).code !== "ESRCH") throw err;
      }
    },
  };
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
  const pid = Number(m[1]);
  if (!processes.alive(pid)) return false;
  const start = processes.startTime(pid);
  return m[2] === "?" || start === undefined || start === m[2];
}
