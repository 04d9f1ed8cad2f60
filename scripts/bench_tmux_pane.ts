/**
 * Benchmark (not a test): the cost of one pane's life through muxbridge's tmux backend compared
 * with bare tmux calls, on a private tmux server that is always cleaned up.
 *
 * (a) bare: `tmux split-window -d -P -F '#{pane_id}' …` then `tmux kill-pane`, via the runner.
 * (b) muxbridge: `backend.spawn` then `closePane(…, graceMs 250)` with a program that exits at
 *     once on SIGINT (`sleep`), so the close ends on the interrupt, not on the kill.
 *
 * Run: `./node_modules/.bin/deno run --allow-all scripts/bench_tmux_pane.ts [N]`
 *
 * @module
 */

import { createTmuxBackend } from "../backends/tmux.ts";
import { createRealClock } from "../lib/clock.ts";
import { closePane } from "../lib/close_pane.ts";
import { resolveConfig } from "../lib/config.ts";
import type { Runner } from "../lib/exec.ts";
import { detectIdentity } from "../lib/identity.ts";
import { silentLogger } from "../lib/log.ts";
import { createProcesses } from "../lib/processes.ts";
import { startTmuxServer } from "../tests/helpers/tmux_server.ts";

const N = Number(Deno.args[0] ?? 30);
const WARMUP = 3;

function stats(samples: number[]) {
  const sorted = [...samples].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const median = sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  return { mean: samples.reduce((a, b) => a + b, 0) / samples.length, median };
}

async function timeEach(n: number, once: () => Promise<void>): Promise<number[]> {
  for (let i = 0; i < WARMUP; i++) await once();
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const start = performance.now();
    await once();
    out.push(performance.now() - start);
  }
  return out;
}

const server = await startTmuxServer();
try {
  let calls = 0;
  const counting: Runner = (argv, opts) => {
    calls++;
    return server.runner(argv, opts);
  };
  const tmux = ["tmux", "-L", server.socketName];
  const opts = { timeoutMs: 5000 };

  const bare = await timeEach(N, async () => {
    const split = await counting([
      ...tmux,
      "split-window",
      "-d",
      "-P",
      "-F",
      "#{pane_id}",
      "-t",
      server.anchorPane,
      "-c",
      server.dir,
      "--",
      "sleep",
      "100000",
    ], opts);
    if (split.code !== 0) throw new Error(split.stderr);
    const kill = await counting([...tmux, "kill-pane", "-t", split.stdout.trim()], opts);
    if (kill.code !== 0) throw new Error(kill.stderr);
  });
  const bareCalls = calls;

  const env = () => undefined;
  const clock = createRealClock();
  const processes = createProcesses();
  const backend = createTmuxBackend({
    run: counting,
    env,
    clock,
    config: resolveConfig({
      env,
      flags: { tmux: { socket_name: server.socketName, target: server.anchorPane } },
    }),
    identity: detectIdentity(env),
    log: silentLogger,
  });
  let killed = 0;
  calls = 0;
  const viaBackend = await timeEach(N, async () => {
    const { paneId, pid } = await backend.spawn({
      sessionId: "ses_bench",
      title: "bench",
      argv: ["sleep", "100000"],
      cwd: server.dir,
      env: {},
      owner: "cli",
    });
    const result = await closePane(backend, paneId, { graceMs: 250, clock, pid, processes });
    if (result.killed) killed++;
  });
  const backendCalls = calls;

  const a = stats(bare);
  const b = stats(viaBackend);
  const runs = N + WARMUP;
  const fmt = (ms: number) => ms.toFixed(1).padStart(6);
  console.log(`tmux pane open+close, N=${N} (after ${WARMUP} warm-up runs each)`);
  console.log(
    `(a) bare split-window + kill-pane : mean ${fmt(a.mean)} ms, median ${fmt(a.median)} ms, ` +
      `${(bareCalls / runs).toFixed(1)} tmux calls/pane`,
  );
  console.log(
    `(b) backend.spawn + closePane     : mean ${fmt(b.mean)} ms, median ${fmt(b.median)} ms, ` +
      `${(backendCalls / runs).toFixed(1)} tmux calls/pane, ${killed} needed the kill`,
  );
  console.log(
    `ratio (b)/(a): mean ${(b.mean / a.mean).toFixed(2)}x, median ${
      (b.median / a.median).toFixed(2)
    }x`,
  );
  console.log(
    `muxbridge overhead per pane: ${(b.mean - a.mean).toFixed(1)} ms (mean), ${
      (b.median - a.median).toFixed(1)
    } ms (median)`,
  );
} finally {
  await server.close();
}
