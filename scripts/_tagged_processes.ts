/**
 * The processes a test run left behind. `scripts/run_tests.ts` hands every test process a
 * unique tag in the environment ({@linkcode RUN_TAG_VAR}); whatever the tests start inherits it
 * (helpers that clear a child's environment pass it on, `tests/helpers/run_tag.ts`). Once
 * `deno test` has ended, any process of this user still carrying the tag was started by a test
 * and not stopped by it: a leak. This file finds such processes in `/proc` and stops them by
 * pid, SIGTERM first, SIGKILL after a grace period. Linux only (elsewhere nothing is found).
 *
 * @module
 */

import { readdirSync, readFileSync, readlinkSync, statSync } from "node:fs";
import { createRealClock, waitFor } from "../lib/sys/clock.ts";

/** The environment variable that tags every process of one test run. */
export const RUN_TAG_VAR = "MUXBRIDGE_TEST_RUN";

/** A process still carrying a run's tag. */
export interface TaggedProcess {
  /** Its pid. */
  pid: number;
  /** Its argv (empty for a zombie or a kernel thread). */
  argv: string[];
  /** Its working directory, or null when it cannot be read. */
  cwd: string | null;
}

/** Where and whose processes {@linkcode taggedProcesses} looks at. */
export interface ScanOptions {
  /** The proc file system. @default "/proc" */
  proc?: string;
  /** Only processes of this user (the owner of `<proc>/<pid>`). @default this process's uid */
  uid?: number;
  /** Pids never reported (the runner itself). @default [] */
  exclude?: readonly number[];
  /** The variable that carries the tag. @default RUN_TAG_VAR */
  variable?: string;
}

/**
 * Lists this user's processes whose environment holds `RUN_TAG_VAR=<tag>` exactly (or another
 * variable's, `options.variable`).
 *
 * @param tag The run's tag.
 * @param options The proc root, the user, pids to leave out.
 * @returns The tagged processes, by ascending pid; empty where there is no `/proc`.
 *
 * @example Nothing carries a tag nobody handed out
 * ```ts
 * import { taggedProcesses } from "./_tagged_processes.ts";
 * console.log(taggedProcesses(crypto.randomUUID()).length); // 0
 * ```
 */
export function taggedProcesses(tag: string, options: ScanOptions = {}): TaggedProcess[] {
  const proc = options.proc ?? "/proc";
  const uid = options.uid ?? Deno.uid();
  const exclude = new Set(options.exclude ?? []);
  let names: string[];
  try {
    names = readdirSync(proc);
  } catch {
    return [];
  }
  const found: TaggedProcess[] = [];
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    const pid = Number(name);
    if (exclude.has(pid) || !carries(proc, pid, entry(tag, options), uid)) continue;
    found.push({ pid, argv: nulList(`${proc}/${pid}/cmdline`), cwd: link(`${proc}/${pid}/cwd`) });
  }
  return found.sort((a, b) => a.pid - b.pid);
}

/** The environment entry that tags: `<variable>=<tag>`. */
function entry(tag: string, options: ScanOptions): string {
  return `${options.variable ?? RUN_TAG_VAR}=${tag}`;
}

/** Whether `<proc>/<pid>` is `uid`'s and its environment holds `tagEntry`. */
function carries(proc: string, pid: number, tagEntry: string, uid: number | null): boolean {
  try {
    if (uid !== null && statSync(`${proc}/${pid}`).uid !== uid) return false;
  } catch {
    return false; // gone
  }
  return nulList(`${proc}/${pid}/environ`).includes(tagEntry);
}

/** A NUL-separated proc file as a list; empty when unreadable (gone, zombie, not ours). */
function nulList(path: string): string[] {
  try {
    return readFileSync(path, "latin1").split("\0").filter((s) => s !== "");
  } catch {
    return [];
  }
}

function link(path: string): string | null {
  try {
    return readlinkSync(path);
  } catch {
    return null;
  }
}

/** How {@linkcode stopTagged} and {@linkcode settleTagged} wait and signal. */
export interface StopOptions extends ScanOptions {
  /** How long SIGTERM gets before SIGKILL. @default 2000 */
  graceMs?: number;
  /** Sends a signal. @default Deno.kill */
  kill?: (pid: number, signal: "SIGTERM" | "SIGKILL") => void;
}

/**
 * Stops tagged processes by pid: SIGTERM, up to `graceMs` for them to end, then SIGKILL. A
 * process is signalled only while it still carries the tag, so a pid reused meanwhile by
 * another program is never hit.
 *
 * @param tag The run's tag.
 * @param pids The processes to stop (from {@linkcode taggedProcesses}).
 * @param options The grace period and where to look.
 * @returns The pids that still carry the tag after SIGKILL (normally none).
 *
 * @example Stop what a run left behind
 * ```ts
 * import { stopTagged, taggedProcesses } from "./_tagged_processes.ts";
 * const tag = crypto.randomUUID();
 * const left = await stopTagged(tag, taggedProcesses(tag).map((p) => p.pid));
 * console.log(left); // []
 * ```
 */
export async function stopTagged(
  tag: string,
  pids: readonly number[],
  options: StopOptions = {},
): Promise<number[]> {
  const kill = options.kill ?? ((pid, signal) => Deno.kill(pid, signal));
  const uid = options.uid ?? Deno.uid();
  const proc = options.proc ?? "/proc";
  const tagEntry = entry(tag, options);
  const live = () => pids.filter((pid) => carries(proc, pid, tagEntry, uid));
  const signal = (sig: "SIGTERM" | "SIGKILL") => {
    for (const pid of live()) {
      try {
        kill(pid, sig);
      } catch { /* ended meanwhile */ }
    }
  };
  const clock = createRealClock();
  const gone = (ms: number) =>
    waitFor(clock, () => live().length === 0, { deadline: clock.now() + ms, maxIntervalMs: 50 });
  signal("SIGTERM");
  if (await gone(options.graceMs ?? 2000)) return [];
  signal("SIGKILL");
  await gone(2000);
  return live();
}

/**
 * Waits up to `ms` for tagged processes to end on their own (one that a test signalled just
 * before `deno test` ended may still be on its way out), then lists those that remain.
 *
 * @param tag The run's tag.
 * @param ms The longest wait.
 * @param options Where to look.
 * @returns The tagged processes still there.
 */
export async function settleTagged(
  tag: string,
  ms: number,
  options: ScanOptions = {},
): Promise<TaggedProcess[]> {
  const clock = createRealClock();
  await waitFor(clock, () => taggedProcesses(tag, options).length === 0, {
    deadline: clock.now() + ms,
    maxIntervalMs: 100,
  });
  return taggedProcesses(tag, options);
}

/**
 * One line for a leaked process: pid, argv (cut to 300 characters) and cwd, and, for a tmux
 * server on a test socket (`-L muxbridge-test-*`), which socket.
 *
 * @param p The process.
 * @returns The line.
 */
export function describeTagged(p: TaggedProcess): string {
  const argv = JSON.stringify(p.argv);
  const socket = p.argv.find((a) => a.startsWith("muxbridge-test-"));
  const tmux = p.argv[0]?.split("/").pop() === "tmux" && socket ? ` (tmux server ${socket})` : "";
  return `pid ${p.pid}${tmux}: ${argv.length > 300 ? `${argv.slice(0, 297)}...` : argv}` +
    ` in ${p.cwd ?? "(cwd unreadable)"}`;
}
