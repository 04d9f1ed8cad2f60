/**
 * Runs the tests: `deno test --allow-all` over the given files or folders (default: every test
 * file of the repository) and the given `deno test` options (`--filter`…), several `deno test`
 * processes side by side, and ends with what was skipped and why, what the tests left running,
 * the wall time, the load average and the ten slowest tests.
 *
 * Side by side: test files share nothing (private sockets, ports from 0, temporary HOMEs), so
 * they run in groups, `--jobs N` processes at once (default {@linkcode DEFAULT_JOBS}, or
 * `$MUXBRIDGE_TEST_JOBS`); the files that must run alone are declared in
 * `scripts/_test_plan.ts` (`ALONE`, each with its reason) and run one at a time at the end. The
 * test files are type-checked once first, then every process runs `--no-check`. Each group's
 * output is printed whole when it ends (with one group, or `--jobs 1`, as it comes). Each
 * file's time goes to `.tmp/test-times.json`, so the next run starts the longest files first
 * (a fresh clone uses the committed `scripts/test_times.json`).
 *
 * Skips: a test that needs something this machine lacks says so through
 * `tests/helpers/requires.ts`, which appends it to the skip log this script hands every test
 * process (`MUXBRIDGE_SKIP_LOG`). In CI (`CI=true`) such a test fails instead of skipping, and
 * any skip that still reaches the log fails the run here too.
 *
 * Leaks: every process the tests start must be stopped by them. This script tags the run
 * (`MUXBRIDGE_TEST_RUN=<random>`, inherited by whatever the tests start; helpers that clear a
 * child's environment pass it on through `tests/helpers/run_tag.ts`). When every `deno test`
 * has ended, any process of this user still carrying the tag (after a few seconds to finish
 * exiting) is listed with its pid, argv and cwd, stopped (SIGTERM, then SIGKILL) and fails the
 * run, locally and in CI. That includes the tmux servers of `tests/helpers/tmux_server.ts`.
 * Ctrl+C (or SIGTERM) stops the running tests, then does the same check, and exits 130.
 *
 * `--summary-json <file>` writes the run's outcome as JSON (`scripts/stress_tests.ts` reads it).
 *
 * ```sh
 * ./node_modules/.bin/deno run --allow-all scripts/run_tests.ts tests/backends/
 * ./node_modules/.bin/deno run --allow-all scripts/run_tests.ts --jobs 1 --filter tmux
 * ```
 *
 * @module
 */

import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { attributeCases, parseJunit, type TestCase } from "./_junit.ts";
import { describeTagged, RUN_TAG_VAR, settleTagged, stopTagged } from "./_tagged_processes.ts";
import {
  type CpuTimes,
  cpuTimes,
  type FileTimes,
  type Group,
  parseRunArgs,
  planGroups,
  type RunArgs,
  seconds,
  testFiles,
} from "./_test_plan.ts";

/**
 * `deno test` processes at once by default: chosen for the 2-core machines the suite runs on
 * (ours and CI's). The end-to-end files spend most of their time waiting on real programs
 * (tmux, OpenCode, a bridge), so one more process than cores keeps both busy; more only makes
 * each slower.
 */
export const DEFAULT_JOBS = 3;

/** How long tagged processes get to end on their own once the tests have ended. */
const SETTLE_MS = 3000;

const ROOT = fileURLToPath(new URL("..", import.meta.url)).replace(/\/$/, "");
/** Each file's time in earlier runs (a scheduling hint only; `$MUXBRIDGE_TEST_TIMES` moves it). */
const TIMES = Deno.env.get("MUXBRIDGE_TEST_TIMES") ?? `${ROOT}/.tmp/test-times.json`;
/**
 * The times of one full run, committed, for a machine without its own (`cp .tmp/test-times.json
 * scripts/test_times.json` after a full run refreshes it; only the ratios matter). Not read when
 * `$MUXBRIDGE_TEST_TIMES` is set.
 */
const BASELINE_TIMES = Deno.env.get("MUXBRIDGE_TEST_TIMES") === undefined
  ? `${ROOT}/scripts/test_times.json`
  : "/nonexistent";

/** What one group's `deno test` did. */
interface GroupResult {
  group: Group;
  code: number;
  ms: number;
  /** Its tests, each with its test file and the files its time counts for. */
  cases: Array<TestCase & { timeTo: string[] }>;
}

/** The run's outcome, as `--summary-json` writes it. */
export interface RunSummary {
  /** The runner's exit code. */
  code: number;
  /** The wall time, in ms. */
  wallMs: number;
  /** Test files run. */
  files: number;
  /** `deno test` processes at once. */
  jobs: number;
  /** The 1-minute load average before and after. */
  load: [number, number];
  /**
   * The machine's CPU during the run (`/proc/stat`): seconds busy, and of how many cores. Absent
   * where `/proc/stat` cannot be read.
   */
  cpu?: { busyS: number; cores: number };
  /** Every failed test (a group that ended without a report counts its files). */
  failed: Array<{ file: string; name: string }>;
  /** What was skipped, and why. */
  skipped: Array<{ test: string; why: string }>;
  /** Processes the tests left running (described). */
  leaked: string[];
  /** Whether Ctrl+C or SIGTERM ended the run. */
  interrupted: boolean;
}

if (Deno.env.get("MUXBRIDGE_SKIP_LOG") !== undefined) {
  // Already inside a run: never start another (a runner that runs itself is a fork bomb).
  console.error("scripts/run_tests.ts: already inside a test run (MUXBRIDGE_SKIP_LOG is set)");
  Deno.exit(2);
}

let args: RunArgs;
try {
  args = parseRunArgs(Deno.args);
} catch (err) {
  console.error(`scripts/run_tests.ts: ${(err as Error).message}`);
  Deno.exit(2);
}
const envJobs = Deno.env.get("MUXBRIDGE_TEST_JOBS");
const jobs = args.jobs ?? (envJobs && /^[1-9]\d*$/.test(envJobs) ? Number(envJobs) : DEFAULT_JOBS);
const files = testFiles(ROOT, args.paths);
if (files.length === 0) {
  console.error("scripts/run_tests.ts: no test files found");
  Deno.exit(2);
}
const times = readTimes();
const plan = planGroups(files, times);
const groups = [...plan.parallel, ...plan.alone];
/** One process at a time: its output can go straight to the terminal. */
const streaming = groups.length === 1 || jobs === 1;
const checkFirst = !streaming && !args.denoArgs.includes("--no-check");

const started = performance.now();
const loadBefore = load1();
const cpuBefore = readCpu();
const work = await Deno.makeTempDir({ prefix: "muxbridge-test-run-" });
const log = `${work}/skips.jsonl`;
await Deno.writeTextFile(log, "");
const tag = crypto.randomUUID();
const env = { MUXBRIDGE_SKIP_LOG: log, [RUN_TAG_VAR]: tag };

const running = new Set<Deno.ChildProcess>();
let interrupted = false;
const onSignal = () => {
  if (interrupted) Deno.exit(130); // a second Ctrl+C: no more waiting
  interrupted = true;
  console.error("\ninterrupted: stopping the tests, then checking what they left running");
  for (const child of running) {
    try {
      child.kill("SIGTERM");
    } catch { /* ended */ }
  }
};
Deno.addSignalListener("SIGINT", onSignal);
Deno.addSignalListener("SIGTERM", onSignal);

try {
  console.log(
    `${files.length} test file(s) in ${groups.length} group(s), ${
      streaming ? 1 : Math.min(jobs, groups.length)
    } at a time` +
      (plan.alone.length ? `; alone, at the end: ${plan.alone.map((g) => g.files[0])}` : "") +
      `; load average ${loadBefore.toFixed(2)}`,
  );
  let code = 0;
  const results: GroupResult[] = [];
  if (checkFirst) code = await typeCheck(files);
  if (code === 0) {
    let next = 0;
    const lane = async () => {
      while (!interrupted && next < plan.parallel.length) {
        const i = next++;
        results.push(await runGroup(plan.parallel[i], i));
      }
    };
    await Promise.all(Array.from({ length: streaming ? 1 : jobs }, lane));
    for (const [i, g] of plan.alone.entries()) {
      if (interrupted) break;
      results.push(await runGroup(g, plan.parallel.length + i));
    }
    code = results.find((r) => r.code !== 0)?.code ?? 0;
  }
  if (!args.denoArgs.some((a) => a.startsWith("--filter"))) saveTimes(results);

  const skips = (await Deno.readTextFile(log)).split("\n").filter((l) => l !== "")
    .map((l) => JSON.parse(l) as { test: string; why: string });
  const ci = Deno.env.get("CI") === "true";
  if (skips.length === 0) {
    console.log("\nskipped: nothing (every tool the tests need was found)");
  } else {
    console.log(
      ci
        ? `\nFAILED in CI: ${skips.length} group(s) of tests could not run, something is missing:`
        : `\nskipped: ${skips.length} group(s) of tests, because something is missing here:`,
    );
    for (const s of skips) console.log(`  - ${s.test}: needs ${s.why}`);
    console.log("  (scripts/setup.sh installs all of it; in CI, CI=true, a missing tool fails)");
  }
  // A test or step that ignores itself (`ignore:`) is named here too: never passed in silence.
  const ignored = results.flatMap((r) => r.cases.filter((c) => c.skipped));
  if (ignored.length > 0) {
    console.log(`ignored by the tests themselves: ${ignored.length}`);
    for (const c of ignored) console.log(`  - ${c.file}: ${c.name}`);
  }
  const leaked = await settleTagged(tag, SETTLE_MS, { exclude: [Deno.pid] });
  if (leaked.length === 0) {
    console.log(`left running: nothing (no process carries ${RUN_TAG_VAR}=${tag})`);
  } else {
    console.log(
      `\nFAILED: ${leaked.length} process(es) the tests started were still running ` +
        `(${RUN_TAG_VAR}=${tag}); every process a test starts must be stopped by it:`,
    );
    for (const p of leaked) console.log(`  - ${describeTagged(p)}`);
    const resisted = await stopTagged(tag, leaked.map((p) => p.pid), { exclude: [Deno.pid] });
    console.log(
      resisted.length === 0
        ? "  (all of them are stopped now)"
        : `  (still running after SIGKILL: ${resisted.join(", ")})`,
    );
  }
  const exit = interrupted
    ? 130
    : code !== 0
    ? code
    : (ci && skips.length > 0) || leaked.length > 0
    ? 1
    : 0;
  const failed = failures(results);
  const wallMs = performance.now() - started;
  const loadAfter = load1();
  const cpuAfter = readCpu();
  const cpu = cpuBefore && cpuAfter
    ? { busyS: Math.round(cpuAfter.busy - cpuBefore.busy), cores: navigator.hardwareConcurrency }
    : undefined;
  printEnd(results, failed, wallMs, loadAfter, cpu);
  if (args.summaryJson) {
    const summary: RunSummary = {
      code: exit,
      wallMs: Math.round(wallMs),
      files: files.length,
      jobs: streaming ? 1 : jobs,
      load: [loadBefore, loadAfter],
      ...(cpu ? { cpu } : {}),
      failed,
      skipped: skips,
      leaked: leaked.map(describeTagged),
      interrupted,
    };
    writeFileSync(args.summaryJson, `${JSON.stringify(summary, null, 2)}\n`);
  }
  Deno.exitCode = exit;
} finally {
  Deno.removeSignalListener("SIGINT", onSignal);
  Deno.removeSignalListener("SIGTERM", onSignal);
  await Deno.remove(work, { recursive: true }).catch(() => {});
}

/** `deno check` of every test file at once (the groups then run `--no-check`). */
async function typeCheck(paths: readonly string[]): Promise<number> {
  const t0 = performance.now();
  const child = new Deno.Command(Deno.execPath(), {
    args: ["check", ...paths],
    cwd: ROOT,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  running.add(child);
  const { code, stdout, stderr } = await child.output();
  running.delete(child);
  if (code === 0) {
    console.log(`type-checked ${paths.length} file(s) in ${seconds(performance.now() - t0)}`);
  } else {
    const text = new TextDecoder().decode(concat([stdout, stderr]));
    // Only the errors: not the "Check <file>" line of every file.
    console.log(text.split("\n").filter((l) => !l.startsWith("Check ")).join("\n"));
    console.log(`FAILED: the test files do not type-check (deno check exited ${code})`);
  }
  return code;
}

/** Runs one group's `deno test`; prints its output (whole, unless streaming) and its outcome. */
async function runGroup(group: Group, index: number): Promise<GroupResult> {
  const junit = `${work}/group-${index}.xml`;
  const t0 = performance.now();
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "test",
      "--allow-all",
      ...(checkFirst ? ["--no-check"] : []),
      `--junit-path=${junit}`,
      ...args.denoArgs,
      ...group.files,
    ],
    cwd: ROOT,
    env,
    stdin: "null",
    stdout: streaming ? "inherit" : "piped",
    stderr: streaming ? "inherit" : "piped",
  }).spawn();
  running.add(child);
  const chunks: Uint8Array[] = [];
  const drain = async (stream: ReadableStream<Uint8Array> | null) => {
    if (!stream || streaming) return;
    for await (const chunk of stream) chunks.push(chunk);
  };
  const [{ code }] = await Promise.all([
    child.status,
    drain(streaming ? null : child.stdout),
    drain(streaming ? null : child.stderr),
  ]);
  running.delete(child);
  const ms = performance.now() - t0;
  let cases: GroupResult["cases"] = [];
  try {
    cases = attributeCases(
      parseJunit(readFileSync(junit, "utf8")),
      group.files,
      (file) => readFileSync(`${ROOT}/${file}`, "utf8"),
    );
  } catch { /* no report: the process did not get that far */ }
  const failedHere = cases.filter((c) => c.failed && !c.step).length;
  const outcome = code === 0
    ? "ok"
    : `FAILED (exit ${code}${failedHere ? `, ${failedHere} failed` : ""})`;
  const head = `── [${index + 1}/${groups.length}] ${group.files.join(" ")}: ${outcome}, ${
    seconds(ms)
  }${group.alone ? ` (alone: ${group.alone})` : ""}`;
  if (streaming) console.log(head);
  else {
    const text = new TextDecoder().decode(concat(chunks)).trimEnd();
    console.log(`${head}\n${text}\n`);
  }
  return { group, code, ms, cases };
}

/** Every failed test; a group that failed without a failed test counts each of its files. */
function failures(results: readonly GroupResult[]): Array<{ file: string; name: string }> {
  const out: Array<{ file: string; name: string }> = [];
  for (const r of results) {
    const failed = r.cases.filter((c) => c.failed && !c.step);
    for (const c of failed) out.push({ file: c.file, name: c.name });
    if (r.code !== 0 && failed.length === 0) {
      for (const file of r.group.files) {
        out.push({ file, name: `(the file did not run to its end: deno test exited ${r.code})` });
      }
    }
  }
  return out;
}

/** The end of the run: failures, wall time and load, the ten slowest tests. */
function printEnd(
  results: readonly GroupResult[],
  failed: ReadonlyArray<{ file: string; name: string }>,
  wallMs: number,
  loadAfter: number,
  cpu: RunSummary["cpu"],
): void {
  const tests = results.flatMap((r) => r.cases.filter((c) => !c.step && !c.skipped));
  if (failed.length > 0) {
    console.log(`\nfailed: ${failed.length}`);
    for (const f of failed) console.log(`  - ${f.file}: ${f.name}`);
  }
  console.log("\nslowest tests:");
  for (const t of [...tests].sort((a, b) => b.ms - a.ms).slice(0, 10)) {
    console.log(`  ${seconds(t.ms).padStart(8)}  ${t.file}: ${cut(t.name, 110)}`);
  }
  console.log(
    `wall time ${seconds(wallMs)}: ${tests.length} test(s) in ${files.length} file(s), ${
      streaming ? 1 : jobs
    } process(es) at a time; load average (1 min) ${loadBefore.toFixed(2)} before, ${
      loadAfter.toFixed(2)
    } after`,
  );
  if (cpu) {
    // What the machine could have given in that time: a run near 100 % waits on the CPU, and only
    // less CPU makes it shorter.
    const share = Math.round((cpu.busyS / (cpu.cores * wallMs / 1000)) * 100);
    console.log(
      `machine CPU busy ${cpu.busyS} s of ${cpu.cores} core(s) × ${
        seconds(wallMs)
      } (${share} %; the tests and anything else running)`,
    );
  }
}

function readCpu(): CpuTimes | undefined {
  try {
    return cpuTimes(readFileSync("/proc/stat", "utf8"));
  } catch {
    return undefined;
  }
}

/** Writes each file's time of this run (the sum of its tests) into the times file. */
function saveTimes(results: readonly GroupResult[]): void {
  const next: Record<string, number> = { ...times };
  for (const r of results) {
    const byFile = new Map<string, number>();
    for (const c of r.cases) {
      if (c.step) continue;
      for (const f of c.timeTo) byFile.set(f, (byFile.get(f) ?? 0) + c.ms / c.timeTo.length);
    }
    for (const [file, ms] of byFile) next[file] = Math.round(ms);
  }
  try {
    mkdirSync(dirname(TIMES), { recursive: true });
    writeFileSync(TIMES, `${JSON.stringify(next, null, 1)}\n`);
  } catch { /* only a scheduling hint */ }
}

/** This machine's times over the committed baseline's (a fresh clone, CI, has only those). */
function readTimes(): FileTimes {
  const read = (path: string) => {
    try {
      const parsed = JSON.parse(readFileSync(path, "utf8"));
      return typeof parsed === "object" && parsed !== null ? parsed : {};
    } catch {
      return {};
    }
  };
  return { ...read(BASELINE_TIMES), ...read(TIMES) };
}

function load1(): number {
  try {
    return Deno.loadavg()[0];
  } catch {
    return NaN;
  }
}

function cut(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

function concat(chunks: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}
