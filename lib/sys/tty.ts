/**
 * A process's terminal, from `/proc` (Linux): the argv a process runs, the terminal it controls,
 * and a bell written to that terminal. muxbridge rings a pane's bell by writing BEL to the
 * terminal its own start command runs on (`lib/session/pane_bell.ts`): the multiplexer sees it
 * as output of that pane and marks it the way its user configured (tmux's window bell flag,
 * kitty's and WezTerm's bell, herdr's …), whatever the backend.
 *
 * Every function here says "no" (undefined, false, an empty list) where `/proc` cannot tell,
 * and never touches another user's process or terminal.
 *
 * @module
 */

import {
  closeSync,
  constants,
  fstatSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  statSync,
  writeSync,
} from "node:fs";
import process from "node:process";

/** The real uid, or undefined where there is none (not POSIX). */
function uid(): number | undefined {
  return typeof process.getuid === "function" ? process.getuid() : undefined;
}

/**
 * The argv a process was started with (`/proc/<pid>/cmdline`), if it is this user's.
 *
 * @param pid The process.
 * @returns Its argv; undefined when it is gone, another user's, or `/proc` cannot tell.
 */
export function processArgv(pid: number): string[] | undefined {
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  try {
    if (statSync(`/proc/${pid}`).uid !== uid()) return undefined;
    const text = readFileSync(`/proc/${pid}/cmdline`, "utf8");
    if (text === "") return undefined; // a zombie, or a kernel thread
    return text.endsWith("\0") ? text.slice(0, -1).split("\0") : text.split("\0");
  } catch {
    return undefined;
  }
}

/**
 * The processes of this user whose argv passes a test.
 *
 * @param test The test.
 * @returns Their pids (empty where `/proc` cannot tell).
 */
export function processesWhere(
  test: (argv: readonly string[]) => boolean,
): number[] {
  let names: string[];
  try {
    names = readdirSync("/proc");
  } catch {
    return [];
  }
  return names.flatMap((name) => {
    if (!/^\d+$/.test(name)) return [];
    const argv = processArgv(Number(name));
    return argv !== undefined && test(argv) ? [Number(name)] : [];
  });
}

/** A terminal device. */
export interface Terminal {
  /** Its path (`/dev/pts/3`). */
  readonly path: string;
  /** Its device number. */
  readonly device: number;
}

/**
 * The terminal a process controls (field `tty_nr` of `/proc/<pid>/stat`), found among the files
 * its standard streams name, and only when that file is the very device and this user's.
 *
 * @param pid The process.
 * @returns The terminal, or undefined (none, not found, not ours).
 */
export function controllingTerminal(pid: number): Terminal | undefined {
  let device: number;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the command name: state, ppid, pgrp, session, tty_nr (proc(5)).
    device = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[4]);
  } catch {
    return undefined;
  }
  if (!Number.isSafeInteger(device) || device <= 0) return undefined;
  for (const fd of [0, 1, 2]) {
    let path: string;
    try {
      path = readlinkSync(`/proc/${pid}/fd/${fd}`);
    } catch {
      continue;
    }
    if (!path.startsWith("/dev/")) continue;
    if (isTerminal(path, device)) return { path, device };
  }
  return undefined;
}

/** Whether a path is the character device `device`, owned by this user. */
function isTerminal(path: string, device: number): boolean {
  try {
    const st = statSync(path);
    return st.isCharacterDevice() && st.rdev === device && st.uid === uid();
  } catch {
    return false;
  }
}

/**
 * Writes bytes to a terminal, if it still is the device it was found as: opened write-only,
 * never as a controlling terminal, without blocking (a terminal that does not take the bytes at
 * once, such as one stopped by Ctrl+S, gets none).
 *
 * @param terminal The terminal ({@linkcode controllingTerminal}).
 * @param bytes What to write (BEL: `"\u0007"`).
 * @returns Whether every byte was written.
 */
export function writeTerminal(terminal: Terminal, bytes: string): boolean {
  if (!isTerminal(terminal.path, terminal.device)) return false;
  let fd: number;
  try {
    fd = openSync(
      terminal.path,
      constants.O_WRONLY | constants.O_NOCTTY | constants.O_NONBLOCK,
    );
  } catch {
    return false;
  }
  try {
    // The open file must be the device that was checked (not one swapped in meanwhile).
    const st = fstatSync(fd);
    if (!st.isCharacterDevice() || st.rdev !== terminal.device) return false;
    const data = new TextEncoder().encode(bytes);
    return writeSync(fd, data) === data.length;
  } catch {
    return false;
  } finally {
    closeSync(fd);
  }
}
