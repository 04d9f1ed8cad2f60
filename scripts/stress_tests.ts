/**
 * A load gate: runs the tests (`scripts/run_tests.ts`, with the given files, folders and
 * options) `--runs N` times in a row while `--burners M` processes of its own spin the CPU
 * beside them, and ends with every test that failed at least once, its file and how many runs
 * it failed in. A test whose outcome depends on the machine's speed shows up here before it
 * blocks someone else's work. The burners are stopped at the end, on Ctrl+C and on SIGTERM
 * (and end by themselves when this script is gone).
 *
 * Each run's whole output goes to a log file (the paths are printed); the terminal gets one
 * line per run and the tally.
 *
 * ```sh
 * ./node_modules/.bin/deno run --allow-all scripts/stress_tests.ts --runs 3 --burners 2 tests/e2e_status_test.ts
 * ./node_modules/.bin/deno run --allow-all scripts/stress_tests.ts --runs 2 --burners 4   # the whole suite
 * ```
 *
 * Exit code: 0 when every run passed, 1 when any failed, 2 for bad arguments, 130 when
 * interrupted.
 *
 * @module
 */

import { parseArgs } from "node:util";
import type { RunSummary } from "./run_tests.ts";

const USAGE =
  "usage: scripts/stress_tests.ts [--runs N] [--burners M] [run_tests.ts arguments: files, folders, --filter …]";

let runs: number, burnerCount: number, rest: string[];
try {
  const parsed = parseArgs({
    args: Deno.args,
    options: {
      runs: { type: "string", default: "3" },
      burners: { type: "string", default: "2" },
      help: { type: "boolean", short: "h" },
    },
    allowPositionals: true,
    strict: false,
    tokens: true,
  });
  if (parsed.values.help) {
    console.log(USAGE);
    Deno.exit(0);
  }
  runs = whole("--runs", parsed.values.runs, 1);
  burnerCount = whole("--burners", parsed.values.burners, 0);
  // Everything that is not ours goes to the runner as it was written.
  const ours = new Set<number>();
  for (const t of parsed.tokens ?? []) {
    if (t.kind === "option" && ["runs", "burners"].includes(t.name)) {
      ours.add(t.index);
      if (t.inlineValue === false) ours.add(t.index + 1);
    }
  }
  rest = Deno.args.filter((_, i) => !ours.has(i));
} catch (err) {
  console.error(`scripts/stress_tests.ts: ${(err as Error).message}\n${USAGE}`);
  Deno.exit(2);
}

function whole(name: string, value: unknown, min: number): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < min) {
    throw new RangeError(`Cannot use ${name} "${value}": a whole number, ${min} or more`);
  }
  return n;
}

const RUNNER = new URL("./run_tests.ts", import.meta.url).pathname;
const logs = await Deno.makeTempDir({ prefix: "muxbridge-stress-" });

// A burner spins until it is killed or this script is gone (`kill -0` on its parent).
const burners: Deno.ChildProcess[] = [];
let runner: Deno.ChildProcess | null = null;
let interrupted = false;
function stopBurners(): void {
  for (const b of burners) {
    try {
      b.kill("SIGKILL");
    } catch { /* ended */ }
  }
}
const onSignal = () => {
  interrupted = true;
  stopBurners();
  try {
    runner?.kill("SIGTERM"); // the runner stops its tests and checks what they left
  } catch { /* ended */ }
};
Deno.addSignalListener("SIGINT", onSignal);
Deno.addSignalListener("SIGTERM", onSignal);
Deno.addSignalListener("SIGHUP", onSignal);

const failures = new Map<string, { file: string; name: string; runs: number[] }>();
const outcomes: string[] = [];
try {
  for (let i = 0; i < burnerCount; i++) {
    burners.push(
      new Deno.Command("/bin/sh", {
        args: ["-c", 'while kill -0 "$PPID" 2>/dev/null; do :; done'],
        stdin: "null",
        stdout: "null",
        stderr: "null",
      }).spawn(),
    );
  }
  console.log(
    `stress: ${runs} run(s) of scripts/run_tests.ts ${rest.join(" ") || "(the whole suite)"}` +
      ` beside ${burnerCount} CPU burner(s); load average ${loadavg()}; logs in ${logs}`,
  );
  for (let run = 1; run <= runs && !interrupted; run++) {
    const summaryPath = `${logs}/run-${run}.json`;
    const logPath = `${logs}/run-${run}.log`;
    const out = await Deno.open(logPath, { write: true, create: true, truncate: true });
    runner = new Deno.Command(Deno.execPath(), {
      args: ["run", "--allow-all", RUNNER, "--summary-json", summaryPath, ...rest],
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    // Both streams into one file, chunk by chunk as they come.
    let writes = Promise.resolve();
    const copy = async (stream: ReadableStream<Uint8Array>) => {
      for await (const chunk of stream) writes = writes.then(() => writeAll(out, chunk));
    };
    const copied = Promise.all([copy(runner.stdout), copy(runner.stderr)])
      .then(() => writes).catch(() => {});
    const { code } = await runner.status;
    await copied;
    out.close();
    runner = null;
    let summary: RunSummary | null = null;
    try {
      summary = JSON.parse(await Deno.readTextFile(summaryPath));
    } catch { /* the runner ended before writing it */ }
    for (const f of summary?.failed ?? []) {
      const key = `${f.file}\0${f.name}`;
      const seen = failures.get(key) ?? { ...f, runs: [] };
      seen.runs.push(run);
      failures.set(key, seen);
    }
    const line = summary
      ? `run ${run}/${runs}: exit ${code}, ${
        (summary.wallMs / 1000).toFixed(0)
      } s wall, ${summary.files} file(s), ` +
        `${summary.failed.length} failed, ${summary.leaked.length} left running, ${summary.skipped.length} skipped; ` +
        `load average ${summary.load[0].toFixed(2)} before, ${
          summary.load[1].toFixed(2)
        } after (log: ${logPath})`
      : `run ${run}/${runs}: exit ${code}, no summary (log: ${logPath})`;
    outcomes.push(line);
    console.log(line);
  }
} finally {
  stopBurners();
  await Promise.all(burners.map((b) => b.status.catch(() => {})));
  Deno.removeSignalListener("SIGINT", onSignal);
  Deno.removeSignalListener("SIGTERM", onSignal);
  Deno.removeSignalListener("SIGHUP", onSignal);
}

const red = outcomes.filter((l) => !/: exit 0,/.test(l)).length;
if (failures.size === 0) {
  console.log(
    `\nstress: no test failed in ${outcomes.length} run(s) beside ${burnerCount} burner(s)` +
      (red ? ` (but ${red} run(s) did not pass: see their logs)` : ""),
  );
} else {
  console.log(
    `\nstress: ${failures.size} test(s) failed at least once in ${outcomes.length} run(s):`,
  );
  const sorted = [...failures.values()].sort((a, b) =>
    b.runs.length - a.runs.length || a.file.localeCompare(b.file)
  );
  for (const f of sorted) {
    console.log(
      `  ${f.runs.length}/${outcomes.length}  ${f.file}: ${f.name} (run ${f.runs.join(", ")})`,
    );
  }
}
console.log(`load average now ${loadavg()}`);
Deno.exit(interrupted ? 130 : red > 0 || failures.size > 0 ? 1 : 0);

async function writeAll(file: Deno.FsFile, data: Uint8Array): Promise<void> {
  for (let at = 0; at < data.length;) at += await file.write(data.subarray(at));
}

function loadavg(): string {
  try {
    return Deno.loadavg().map((n) => n.toFixed(2)).join(" ");
  } catch {
    return "unknown";
  }
}
