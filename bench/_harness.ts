/**
 * Shared pieces of the benchmarks: statistics, the result row every benchmark returns, the
 * table printer, and small process helpers. Benchmarks are scripts, never timed tests: they
 * print numbers and ratios against a baseline measured in the same run, and assert nothing
 * about wall time.
 *
 * @module
 */

import type { Backend } from "../lib/backend/backend.ts";
import { createRealClock, sleep } from "../lib/sys/clock.ts";
import { closePane } from "../lib/session/close_pane.ts";
import { createProcesses } from "../lib/sys/processes.ts";
import { validateSessionId } from "../lib/sys/validate.ts";

const clock = createRealClock();
const processes = createProcesses();

/** One line of a benchmark's report. */
export interface Row {
  /** The benchmark ("pane open+close"). */
  bench: string;
  /** What was measured ("muxbridge, control mode"). */
  metric: string;
  /** The figure, formatted ("12.3 ms"). */
  value: string;
  /** The baseline it is compared with, formatted, or "". */
  baseline: string;
  /** The ratio value/baseline (or what the goal compares), formatted, or "". */
  ratio: string;
  /** The goal, or "". */
  goal: string;
  /** Whether the goal is met; null when there is no goal. */
  ok: boolean | null;
}

/** Summary statistics of samples. */
export interface Stats {
  /** Number of samples. */
  n: number;
  /** Median. */
  median: number;
  /** Mean. */
  mean: number;
  /** 90th percentile. */
  p90: number;
  /** Minimum. */
  min: number;
}

/**
 * Summarises samples.
 *
 * @param samples The samples (not empty).
 * @returns Median, mean, p90, min.
 */
export function stats(samples: readonly number[]): Stats {
  const s = [...samples].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.floor(q * (s.length - 1) + 0.5))];
  const mid = s.length >> 1;
  return {
    n: s.length,
    median: s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2,
    mean: s.reduce((a, b) => a + b, 0) / s.length,
    p90: at(0.9),
    min: s[0],
  };
}

/** Formats milliseconds. */
export const ms = (x: number): string => `${x.toFixed(1)} ms`;

/** Formats a ratio. */
export const ratio = (a: number, b: number): string => `${(a / b).toFixed(2)}x`;

/** Formats a rate. */
export const perSecond = (x: number): string =>
  x >= 1000 ? `${(x / 1000).toFixed(0)}k/s` : `${x.toFixed(0)}/s`;

/**
 * Renders rows as a Markdown table.
 *
 * @param rows The rows.
 * @returns The table text.
 */
export function table(rows: readonly Row[]): string {
  const head = ["benchmark", "measure", "value", "baseline", "ratio", "goal", "met"];
  const body = rows.map((r) => [
    r.bench,
    r.metric,
    r.value,
    r.baseline,
    r.ratio,
    r.goal,
    r.ok === null ? "" : r.ok ? "yes" : "NO",
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i].length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i])).join(" | ")} |`;
  return [line(head), `|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`, ...body.map(line)]
    .join("\n");
}

/**
 * Runs the variants interleaved, round-robin (each round starts one variant later), so that load
 * on the machine hits them alike: `warmup` unmeasured rounds, then `n` measured ones.
 *
 * @param variants Name and work of each variant.
 * @param n Measured rounds.
 * @param warmup Unmeasured rounds first.
 * @param onMeasureStart Called once, right before the first measured round (to read counters).
 * @returns Each variant's measured durations in ms, by name.
 */
export async function interleaved(
  variants: ReadonlyArray<readonly [string, () => Promise<void>]>,
  n: number,
  warmup: number,
  onMeasureStart?: () => void,
): Promise<Map<string, number[]>> {
  const samples = new Map<string, number[]>(variants.map(([name]) => [name, []]));
  for (let round = 0; round < n + warmup; round++) {
    if (round === warmup) onMeasureStart?.();
    for (let i = 0; i < variants.length; i++) {
      const [name, fn] = variants[(round + i) % variants.length];
      const start = performance.now();
      await fn();
      if (round >= warmup) samples.get(name)!.push(performance.now() - start);
    }
  }
  return samples;
}

/** How the closes of {@linkcode paneLife} went, by variant. */
export interface CloseTally<K extends string> {
  /** Closes that needed the kill, by variant. */
  killed: Record<K, number>;
  /** Closes that threw, as `<variant>: <message>`. */
  errors: string[];
}

/**
 * The report row of a tally: how many closes needed the kill and how many failed (goal: none).
 *
 * @param bench The benchmark's name.
 * @param tally The tally of its closes.
 * @returns The row.
 */
export function closeTallyRow<K extends string>(bench: string, tally: CloseTally<K>): Row {
  const killed = Object.values<number>(tally.killed).reduce((a, b) => a + b, 0);
  return {
    bench,
    metric: "closes that needed the kill / closes that failed",
    value: `${killed} / ${tally.errors.length}`,
    baseline: "",
    ratio: "",
    goal: "0 / 0",
    ok: killed === 0 && tally.errors.length === 0,
  };
}

/**
 * One pane's life through a backend, as the pane benchmarks measure it: `backend.spawn` of a
 * `sleep` (a password in its environment, as a real attach has) and then `closePane` with a
 * 250 ms grace. A close that needed the kill or threw is counted in `tally`, not thrown: one odd
 * close must not lose the whole run.
 *
 * @param backend The backend.
 * @param cwd The pane's working directory.
 * @param key The variant, for the tally.
 * @param tally Where the closes are counted.
 * @returns The work of one round.
 */
export function paneLife<K extends string>(
  backend: Backend,
  cwd: string,
  key: K,
  tally: CloseTally<K>,
): () => Promise<void> {
  return async () => {
    const { paneId, pid } = await backend.spawn({
      sessionId: validateSessionId("ses_bench"),
      title: "bench",
      argv: ["sleep", "100000"],
      cwd,
      env: { OPENCODE_SERVER_PASSWORD: "bench" },
      owner: "cli",
    });
    try {
      const r = await closePane(backend, paneId, {
        graceMs: 250,
        clock,
        pid,
        processes,
      });
      if (r.killed) tally.killed[key]++;
    } catch (err) {
      tally.errors.push(`${key}: ${(err as Error).message}`);
    }
  };
}

/** CPU time (ms) and context switches of a process, summed over its threads. */
export interface ProcSample {
  /** utime + stime in ms. */
  cpuMs: number;
  /** Voluntary context switches (wakeups after blocking), all threads. */
  voluntary: number;
  /** Involuntary context switches, all threads. */
  involuntary: number;
  /** Resident set size in KiB. */
  rssKiB: number;
  /** Thread count. */
  threads: number;
  /** Voluntary context switches by thread id. */
  byThread: Map<string, number>;
}

/**
 * Voluntary context switches between two samples of one process: threads present in both count
 * their difference, threads started in between count whole, threads that ended count nothing
 * (their switches cannot be read any more).
 *
 * @param a The earlier sample.
 * @param b The later sample.
 * @returns The switches in between.
 */
export function wakeupsBetween(a: ProcSample, b: ProcSample): number {
  let n = 0;
  for (const [tid, v] of b.byThread) n += v - (a.byThread.get(tid) ?? 0);
  return n;
}

/**
 * Reads `/proc/<pid>/stat`, `status` and every `task/<tid>/status` (Linux).
 *
 * @param pid The process.
 * @returns The sample.
 */
export function sampleProc(pid: number): ProcSample {
  const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
  // Fields after the command name, which is in parentheses and may hold spaces.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const ticks = Number(fields[11]) + Number(fields[12]); // utime, stime (fields 14 and 15)
  const hz = 100; // USER_HZ on Linux
  let voluntary = 0;
  let involuntary = 0;
  let threads = 0;
  const byThread = new Map<string, number>();
  for (const t of Deno.readDirSync(`/proc/${pid}/task`)) {
    let status: string;
    try {
      status = Deno.readTextFileSync(`/proc/${pid}/task/${t.name}/status`);
    } catch {
      continue; // the thread ended meanwhile
    }
    threads++;
    const v = Number(/\nvoluntary_ctxt_switches:\s+(\d+)/.exec(status)?.[1] ?? 0);
    byThread.set(t.name, v);
    voluntary += v;
    involuntary += Number(/nonvoluntary_ctxt_switches:\s+(\d+)/.exec(status)?.[1] ?? 0);
  }
  const status = Deno.readTextFileSync(`/proc/${pid}/status`);
  const rssKiB = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return { cpuMs: (ticks * 1000) / hz, voluntary, involuntary, rssKiB, threads, byThread };
}

/** The Deno binary running this script (benchmarks start children with the same one). */
export const DENO = Deno.execPath();

/** The repository root. */
export const ROOT = new URL("../", import.meta.url).pathname;

/** Writes an executable sh script. */
export async function writeScript(path: string, body: string): Promise<string> {
  await Deno.writeTextFile(path, `#!/bin/sh\n${body}\n`);
  await Deno.chmod(path, 0o755);
  return path;
}

/** Waits `ms` of wall time (benchmarks measure real processes; tests never do this). */
export async function pause(ms: number): Promise<void> {
  await sleep(clock, ms);
}
