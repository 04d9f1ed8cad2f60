/**
 * How `scripts/run_tests.ts` splits a run: which arguments are test files (or folders of them)
 * and which go to `deno test`, which files must run alone, and how the others are grouped into
 * `deno test` processes that run side by side.
 *
 * Test files share nothing by construction (private tmux sockets, ports from 0, temporary HOMEs
 * and state directories, an environment changed only inside the file's own process), so any two
 * may run at once. The exceptions are declared in {@linkcode ALONE}, each with its reason; a file
 * is never guessed to be one.
 *
 * Groups: files are taken longest first (by their time in earlier runs, kept in
 * `.tmp/test-times.json` over the committed `scripts/test_times.json`; a file never timed counts
 * as {@linkcode UNKNOWN_FILE_MS}, an end-to-end one as {@linkcode UNKNOWN_E2E_MS}). A file of at least {@linkcode GROUP_MS} is a
 * group of its own; shorter ones are packed into groups of about that length, so a few
 * `deno test` processes carry the many small files and the long files start first.
 *
 * @module
 */

import { existsSync, readdirSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";

/**
 * Files that must not run beside others, by path from the repository root, with why. They run
 * one at a time once every other group has ended.
 */
export const ALONE: Readonly<Record<string, string>> = {
  "tests/e2e_tui_test.ts":
    "measures: prints the task-shown → pane timing docs/performance.md quotes, which other tests' load would inflate",
};

/** About how long one group of short files runs, in ms. */
export const GROUP_MS = 20_000;
/** What a file never timed is taken to last, in ms. */
export const UNKNOWN_FILE_MS = 3_000;
/** What an end-to-end file (`e2e_*`) never timed is taken to last, in ms. */
export const UNKNOWN_E2E_MS = 60_000;
/** What loading a file adds to its tests' time in a group, in ms. */
export const FILE_OVERHEAD_MS = 500;

/** `deno test` options that take their value as the next argument. */
const WITH_VALUE = new Set([
  "--filter",
  "--seed",
  "--reporter",
  "--location",
  "--config",
  "-c",
  "--import-map",
  "--junit-path",
]);

/** What the runner's arguments say. */
export interface RunArgs {
  /** Test files and folders named (empty: the whole suite). */
  paths: string[];
  /** Everything else, for every `deno test` (`--filter x`, `--fail-fast`, …). */
  denoArgs: string[];
  /** How many `deno test` processes at once (`--jobs N`), if given. */
  jobs?: number;
  /** Where to write the run's summary as JSON (`--summary-json <file>`), if given. */
  summaryJson?: string;
}

/**
 * Splits the runner's arguments: its own options (`--jobs N`, `--summary-json <file>`), paths
 * that exist (files and folders), and the rest for `deno test`.
 *
 * @param args The arguments.
 * @returns What they say.
 * @throws {RangeError} for `--jobs` that is not a whole number of at least 1, an option of the
 *   runner without its value, or a path that does not exist (a typo must not run the whole suite).
 *
 * @example
 * ```ts
 * import { parseRunArgs } from "./_test_plan.ts";
 * parseRunArgs(["--jobs", "2", "--filter", "tmux", "scripts/"]);
 * // { paths: ["scripts/"], denoArgs: ["--filter", "tmux"], jobs: 2 }
 * ```
 */
export function parseRunArgs(args: readonly string[]): RunArgs {
  const out: RunArgs = { paths: [], denoArgs: [] };
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    const own = /^--(jobs|summary-json)(?:=(.*))?$/.exec(a);
    if (own) {
      const value = own[2] ?? args[++i];
      if (value === undefined) throw new RangeError(`Cannot read ${a}: it needs a value`);
      if (own[1] === "summary-json") out.summaryJson = value;
      else {
        const n = Number(value);
        if (!Number.isInteger(n) || n < 1) {
          throw new RangeError(
            `Cannot use --jobs "${value}": it must be a whole number, 1 or more`,
          );
        }
        out.jobs = n;
      }
    } else if (a.startsWith("-")) {
      out.denoArgs.push(a);
      if (WITH_VALUE.has(a) && i + 1 < args.length) out.denoArgs.push(args[++i]);
    } else if (existsSync(a)) out.paths.push(a);
    else throw new RangeError(`Cannot find "${a}": name test files or folders that exist`);
  }
  return out;
}

/** Whether a file name is one `deno test` picks up in a folder. */
export function isTestFile(name: string): boolean {
  return /(^|[._])test\.(ts|tsx|mts|js|mjs|jsx)$/.test(name);
}

/** Folders never searched for tests (as `deno.json` excludes them). */
const SKIPPED_DIRS = new Set(["node_modules", "dist", ".tmp", ".git"]);

/**
 * The test files under `paths`, as paths from `root`, sorted and without repeats: a file named
 * is taken whatever its name; a folder gives the test files under it.
 *
 * @param root The repository root.
 * @param paths Files and folders (relative to the working directory); none: all of `root`.
 * @returns The files.
 */
export function testFiles(root: string, paths: readonly string[]): string[] {
  const found = new Set<string>();
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, e.name);
      if (e.isDirectory()) {
        if (!SKIPPED_DIRS.has(e.name)) walk(path);
      } else if (e.isFile() && isTestFile(e.name)) found.add(relative(root, path));
    }
  };
  for (const p of paths.length === 0 ? [root] : paths) {
    const abs = resolve(p);
    if (statSync(abs).isDirectory()) walk(abs);
    else found.add(relative(root, abs));
  }
  return [...found].sort();
}

/** Earlier runs' time of each file, in ms, by path from the repository root. */
export type FileTimes = Readonly<Record<string, number>>;

/** One `deno test` process: its files and how long they are expected to take. */
export interface Group {
  /** Its files, as paths from the repository root. */
  files: string[];
  /** The expected time, in ms. */
  ms: number;
  /** Why it runs alone, for a file of {@linkcode ALONE}. */
  alone?: string;
}

/**
 * What a file is expected to take: its tests' time in an earlier run and its loading, or a
 * default for a file never timed.
 *
 * @param file The file, from the repository root.
 * @param times Earlier runs' times.
 * @returns The time, in ms.
 */
export function expectedMs(file: string, times: FileTimes): number {
  const known = times[file];
  if (typeof known === "number" && known >= 0) return known + FILE_OVERHEAD_MS;
  return /(^|\/)e2e_[^/]*$/.test(file) ? UNKNOWN_E2E_MS : UNKNOWN_FILE_MS;
}

/**
 * Groups files for `deno test` processes: the files of {@linkcode ALONE} one each, flagged; the
 * others longest first, a long file alone and short ones packed up to {@linkcode GROUP_MS}.
 *
 * @param files The files, as paths from the repository root.
 * @param times Earlier runs' times.
 * @param alone The files that must run alone. @default ALONE
 * @returns The groups that may run side by side, longest first, then those that run alone.
 *
 * @example
 * ```ts
 * import { planGroups } from "./_test_plan.ts";
 * const { parallel, alone } = planGroups(["a_test.ts", "b_test.ts", "c_test.ts"], {
 *   "a_test.ts": 30_000,
 *   "b_test.ts": 1_000,
 *   "c_test.ts": 1_000,
 * });
 * console.log(parallel.map((g) => g.files), alone); // [["a_test.ts"], ["b_test.ts", "c_test.ts"]] []
 * ```
 */
export function planGroups(
  files: readonly string[],
  times: FileTimes,
  alone: Readonly<Record<string, string>> = ALONE,
): { parallel: Group[]; alone: Group[] } {
  const lone: Group[] = [];
  const rest: Array<{ file: string; ms: number }> = [];
  for (const file of files) {
    const ms = expectedMs(file, times);
    if (alone[file] !== undefined) lone.push({ files: [file], ms, alone: alone[file] });
    else rest.push({ file, ms });
  }
  rest.sort((a, b) => b.ms - a.ms || a.file.localeCompare(b.file));
  const parallel: Group[] = [];
  let open: Group | null = null;
  for (const { file, ms } of rest) {
    if (ms >= GROUP_MS) {
      parallel.push({ files: [file], ms });
      continue;
    }
    if (open === null || open.ms + ms > GROUP_MS) {
      open = { files: [], ms: 0 };
      parallel.push(open);
    }
    open.files.push(file);
    open.ms += ms;
  }
  return { parallel, alone: lone };
}

/**
 * A duration as the runner prints it: tenths of a second under a minute, else whole minutes and
 * seconds, rounded once (so never "8 min 60 s").
 *
 * @param ms The duration.
 * @returns The text.
 *
 * @example
 * ```ts
 * import { seconds } from "./_test_plan.ts";
 * seconds(539_960); // "9 min 0 s"
 * seconds(1234); // "1.2 s"
 * ```
 */
export function seconds(ms: number): string {
  if (ms < 59_950) return `${(ms / 1000).toFixed(1)} s`;
  const whole = Math.round(ms / 1000);
  return `${Math.floor(whole / 60)} min ${whole % 60} s`;
}

/** The machine's CPU time so far, from the first line of `/proc/stat`, in seconds. */
export interface CpuTimes {
  /** Time spent working: user, nice, system, irq, softirq, steal. */
  busy: number;
  /** Time idle or waiting for I/O. */
  idle: number;
}

/**
 * Reads the machine's CPU time from `/proc/stat` text (its `cpu` line, in USER_HZ: 100 per second
 * on Linux). A run's share of the machine is the difference of two readings: on a quiet machine,
 * what the tests and the programs they started spent.
 *
 * @param text The text of `/proc/stat`.
 * @returns The times, or `undefined` when there is no `cpu` line.
 *
 * @example
 * ```ts
 * import { cpuTimes } from "./_test_plan.ts";
 * cpuTimes("cpu  100 0 50 800 50 0 0 0 0 0\n"); // { busy: 1.5, idle: 8.5 }
 * ```
 */
export function cpuTimes(text: string): CpuTimes | undefined {
  const line = text.split("\n").find((l) => l.startsWith("cpu "));
  if (line === undefined) return undefined;
  const [user, nice, system, idle, iowait, irq, softirq, steal] = line.trim().split(/\s+/)
    .slice(1, 9).map((n) => Number(n) || 0);
  return {
    busy: (user + nice + system + irq + softirq + steal) / 100,
    idle: (idle + iowait) / 100,
  };
}
