/**
 * OpenCode 1.x: one bridge per OpenCode process, across JavaScript realms. The realm that takes
 * the process lock (`<state>/plugin-locks/<pid>-<instance>.lock`, O_EXCL, holding the process's
 * start time) runs the bridge; another realm of the same process (a worker) hands its lines
 * over a `BroadcastChannel`. Locks live only in a private state directory.
 *
 * @module
 */

import { execFileSync } from "node:child_process";
import {
  closeSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  realpathSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { BroadcastChannel } from "node:worker_threads";
import type { Settings } from "./settings.ts";
import { type Bag, bag, type Guard, type Log } from "./values.ts";

/** Which realm of this process runs the bridge, and the channel between realms. */
export interface Claim {
  /** Another realm of this process runs the bridge: hand it every line. */
  relay: boolean;
  /** The channel between realms, if there is one. */
  channel: BroadcastChannel | null;
  /** Gives the process lock back (when this realm holds it). */
  release(): void;
}

/** No claim yet (or none needed). */
export const NO_CLAIM: Claim = { relay: false, channel: null, release() {} };

/**
 * Takes the process lock and opens the channel between realms: this realm relays when another
 * realm of this process holds the lock and a channel reaches it; else it runs the bridge and
 * `deliver`s what other realms post.
 */
export function claimBridge(
  s: Pick<Settings, "stateDir" | "instance">,
  log: Log,
  guard: Guard,
  deliver: (line: string) => void,
): Claim {
  const lock = lockProcess(s.stateDir, s.instance);
  const channel = openChannel(`muxbridge:${process.pid}:${s.instance}`, log);
  const release = () => {
    if (lock.kind === "owner") lock.release();
  };
  if (lock.kind === "taken" && channel) {
    log("another realm of this OpenCode process runs the bridge; handing events to it");
    return { relay: true, channel, release };
  }
  if (lock.kind === "unlocked") log(`cannot lock the process (${lock.reason}); going on`);
  if (lock.kind === "taken") log("another realm runs the bridge, but no channel reaches it");
  if (channel) {
    channel.onmessage = guard((e: { data: unknown }) => {
      if (typeof e.data === "string") deliver(e.data);
    });
  }
  return { relay: false, channel, release };
}

/** The channel between realms of this process; null (and one log line) where there is none. */
function openChannel(name: string, log: Log): BroadcastChannel | null {
  try {
    const channel = new BroadcastChannel(name);
    channel.unref?.(); // never keep OpenCode alive for it
    return channel;
  } catch (err) {
    log(`no channel between realms (${err}); this realm runs its own bridge`);
    return null;
  }
}

/** The outcome of {@linkcode lockProcess}. */
type Lock = { kind: "owner"; release(): void } | { kind: "taken" } | Unlocked;

/** No lock, and why. */
type Unlocked = { kind: "unlocked"; reason: string };

/**
 * Takes `<stateDir>/plugin-locks/<pid>-<instance>.lock` with O_EXCL: `taken` when another
 * realm of this very process holds it (same pid, same start time). A lock left by a dead
 * process is removed; locks of other dead processes are swept on the way.
 */
function lockProcess(stateDir: string, instance: string): Lock {
  const dir = lockDir(stateDir);
  if (typeof dir !== "string") return dir;
  const start = processStart(process.pid);
  sweepDeadLocks(dir);
  return takeLock(join(dir, `${process.pid}-${instance}.lock`), start);
}

/** `<stateDir>/plugin-locks`, made if missing, when both are private; else why not. */
function lockDir(stateDir: string): string | Unlocked {
  // Only a private state directory holds locks: another user must not plant or remove them.
  // Links in its path are resolved once, as the bridge does.
  try {
    mkdirSync(stateDir, { recursive: true, mode: 0o700 });
    const real = realpathSync(stateDir);
    const problem = privateDirProblem(real);
    if (problem) return { kind: "unlocked", reason: `${real}: ${problem}` };
    const dir = join(real, "plugin-locks");
    try {
      mkdirSync(dir, { mode: 0o700 });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
    const inner = privateDirProblem(dir);
    return inner ? { kind: "unlocked", reason: `${dir}: ${inner}` } : dir;
  } catch (err) {
    return { kind: "unlocked", reason: (err as Error).message };
  }
}

/** Removes the locks of processes that are gone. */
function sweepDeadLocks(dir: string): void {
  for (const name of safeList(dir)) {
    const pid = Number(name.split("-")[0]);
    if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && !alive(pid)) {
      try {
        unlinkSync(join(dir, name));
      } catch { /* another sweeper was first */ }
    }
  }
}

/** Creates the lock at `path` (O_EXCL), or finds this process holds it, or removes a stale one. */
function takeLock(path: string, start: string | null): Lock {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(path, "wx", 0o600);
      writeSync(fd, JSON.stringify({ pid: process.pid, start }));
      closeSync(fd);
      return {
        kind: "owner",
        release() {
          try {
            unlinkSync(path);
          } catch { /* already gone */ }
        },
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") {
        return { kind: "unlocked", reason: (err as Error).message };
      }
    }
    if (heldByThisProcess(path, start)) return { kind: "taken" };
    try {
      unlinkSync(path); // a dead process with our pid left it
    } catch { /* gone meanwhile */ }
  }
  return { kind: "unlocked", reason: "the lock file keeps reappearing" };
}

/** Whether the lock at `path` names this process (pid and start time). */
function heldByThisProcess(path: string, start: string | null): boolean {
  let holder: Bag = {};
  try {
    holder = bag(JSON.parse(readFileSync(path, "utf8")));
  } catch { /* half-written or gone: treat as stale */ }
  return holder.pid === process.pid && holder.start === start;
}

/**
 * When this process started, to tell our own lock from one a dead process with a reused pid
 * left: Linux `/proc/<pid>/stat`, else `ps -o lstart=` (macOS; once per load, bounded).
 */
function processStart(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19] ?? null;
  } catch { /* no /proc here */ }
  try {
    const out = execFileSync("ps", ["-o", "lstart=", "-p", String(pid)], {
      encoding: "utf8",
      timeout: 2000,
      stdio: ["ignore", "pipe", "ignore"],
    }).trim();
    return out === "" ? null : out;
  } catch {
    return null;
  }
}

/** Whether a process with this pid exists (EPERM: it does, another user's). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Why `dir` is no private directory of this user, or null: the bridge's own rule for the state
 * directory (a directory, not a link, owned by this user, writable by nobody else).
 */
function privateDirProblem(dir: string): string | null {
  try {
    const st = lstatSync(dir);
    if (!st.isDirectory()) return "it is not a directory";
    const uid = typeof process.geteuid === "function" ? process.geteuid() : undefined;
    if (uid !== undefined && st.uid !== uid) return `it is owned by uid ${st.uid}`;
    if (uid !== undefined && (st.mode & 0o022)) return "other users can write to it";
    return null;
  } catch (err) {
    return (err as Error).message;
  }
}

/** A directory's entries; none when it cannot be read. */
function safeList(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}
