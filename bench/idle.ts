/**
 * Benchmark: what an idle bridge costs. A `main.ts bridge` process on a private tmux server with
 * no tracked session is sampled over a quiet period: CPU time (`/proc/<pid>/stat` utime+stime)
 * and wakeups (voluntary context switches, summed over every thread's
 * `/proc/<pid>/task/<tid>/status`). The baseline is a bare runtime process that only waits on
 * its stdin the same way (`node:process` stdin), measured over the same period.
 *
 * Then memory, for both runtimes: the RSS of an idle bridge (tmux backend, no session) against a
 * bare process of the same runtime that only waits on its stdin (`_bare_reader.ts`): under
 * `deno run`, and as Bun-compiled binaries (the bridge and the bare reader built the way
 * `deno task build:bun` builds, into a temporary directory). Samples are taken a few seconds
 * after each process answered, three of each, taking turns; medians are reported. Last, the RSS
 * of a bridge tracking 200 child sessions (backend `none`, so they are tracked without 200 real
 * panes) against the same bridge tracking none.
 *
 * Run: `deno run -A bench/idle.ts [SECONDS]`
 *
 * @module
 */

import { events, startBridge } from "../tests/helpers/bridge_process.ts";
import { tmuxBridgeEnv } from "../tests/helpers/real_life.ts";
import { startTmuxServer } from "../tests/helpers/tmux_server.ts";
import {
  DENO,
  pause,
  type ProcSample,
  ROOT,
  type Row,
  sampleProc,
  stats,
  table,
  wakeupsBetween,
} from "./_harness.ts";
import { compileBun, rssAfter, startAnswered, stopAnswered } from "./_process.ts";

interface Idle {
  cpuMs: number;
  wakeups: number;
  threads: number;
}

async function idleOver(pid: number, seconds: number): Promise<Idle> {
  const a: ProcSample = sampleProc(pid);
  await pause(seconds * 1000);
  const b = sampleProc(pid);
  return { cpuMs: b.cpuMs - a.cpuMs, wakeups: wakeupsBetween(a, b), threads: b.threads };
}

async function bareIdle(seconds: number): Promise<Idle> {
  const child = await startAnswered([DENO, "run", "--quiet", `${ROOT}bench/_bare_reader.ts`]);
  try {
    await pause(8000); // let start-up settle, as for the bridge
    return await idleOver(child.pid, seconds);
  } finally {
    await stopAnswered(child);
  }
}

async function bridgeIdle(seconds: number): Promise<Idle> {
  const server = await startTmuxServer();
  try {
    const dir = `${server.dir}/bridge`;
    await Deno.mkdir(dir);
    const bridge = startBridge(
      ["--url", "http://127.0.0.1:4096", "--dir", dir],
      await tmuxBridgeEnv(server, dir),
    );
    try {
      await bridge.waitFor((l) => l.type === "ready", 30_000);
      await bridge.send({ type: "bridge.ping", id: 1 });
      await bridge.waitFor((l) => l.type === "pong");
      // Start-up leaves finite tails (timers of start-up calls, idle runtime threads ending
      // ~10 s later, seen with strace); idle means after them.
      await pause(8000);
      return await idleOver(bridge.pid, seconds);
    } finally {
      await bridge.endInput();
      await bridge.status;
    }
  } finally {
    await server.close();
  }
}

async function rssWith(sessions: number): Promise<number> {
  const dir = await Deno.makeTempDir({ prefix: "muxbridge-bench-" });
  try {
    const bridge = startBridge([
      "--url",
      "http://127.0.0.1:4096",
      "--dir",
      dir,
      "--backend",
      "none",
    ], {
      HOME: dir,
      MUXBRIDGE_STATE_DIR: `${dir}/state`,
      XDG_CONFIG_HOME: `${dir}/xdg`,
    });
    try {
      await bridge.waitFor((l) => l.type === "ready", 30_000);
      const lines = [JSON.stringify(events.created("ses_rssParent", "parent", null, dir))];
      for (let i = 0; i < sessions; i++) {
        const id = `ses_rss${i}x${"a".repeat(20)}`;
        const title = `child session ${i}: ${"t".repeat(40)}`;
        lines.push(JSON.stringify(events.created(id, title, "ses_rssParent", `${dir}/p${i}`)));
        lines.push(JSON.stringify(events.status(id, "busy")));
      }
      await bridge.sendRaw(`${lines.join("\n")}\n`);
      const skipped = () => bridge.lines.filter((l) => l.type === "pane.skipped").length;
      // Each child is answered (no backend: pane.skipped) once the loop has its record.
      await bridge.waitFor(() => skipped() >= sessions, 30_000);
      await pause(300);
      return sampleProc(bridge.pid).rssKiB;
    } finally {
      await bridge.endInput();
      await bridge.status;
    }
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

/** Idle RSS of the bridge against the bare reader, for `deno run` and for Bun binaries. */
async function memoryRows(): Promise<Row[]> {
  const server = await startTmuxServer();
  const build = await Deno.makeTempDir({ prefix: "muxbridge-bench-bun-" });
  try {
    const dir = `${server.dir}/bridge`;
    await Deno.mkdir(dir);
    const env = await tmuxBridgeEnv(server, dir);
    const bridgeBin = await compileBun(`${ROOT}main.ts`, `${build}/muxbridge`);
    const bareBin = await compileBun(`${ROOT}bench/_bare_reader.ts`, `${build}/bare`);
    const bridgeArgs = ["bridge", "--url", "http://127.0.0.1:4096", "--dir", dir];
    const sides = {
      denoBare: [DENO, "run", "--quiet", `${ROOT}bench/_bare_reader.ts`],
      denoBridge: [DENO, "run", "--allow-all", "--quiet", `${ROOT}main.ts`, ...bridgeArgs],
      bunBare: [bareBin],
      bunBridge: [bridgeBin, ...bridgeArgs],
    };
    const samples: Record<keyof typeof sides, number[]> = {
      denoBare: [],
      denoBridge: [],
      bunBare: [],
      bunBridge: [],
    };
    for (let round = 0; round < 3; round++) {
      for (const [key, argv] of Object.entries(sides)) {
        samples[key as keyof typeof sides].push(await rssAfter(argv, env, 3000));
      }
    }
    const m = (k: keyof typeof sides) => stats(samples[k]).median;
    const row = (runtime: string, bare: number, bridge: number): Row[] => [
      {
        bench: "memory",
        metric: `${runtime}: bare runtime waiting on stdin, RSS`,
        value: `${bare.toFixed(1)} MiB`,
        baseline: "",
        ratio: "",
        goal: "",
        ok: null,
      },
      {
        bench: "memory",
        metric: `${runtime}: idle bridge (tmux backend, no session), RSS`,
        value: `${bridge.toFixed(1)} MiB`,
        baseline: `${bare.toFixed(1)} MiB`,
        ratio: `${(bridge / bare).toFixed(2)}x`,
        goal: "≤ 1.3x",
        ok: bridge <= 1.3 * bare,
      },
    ];
    return [
      ...row("deno run", m("denoBare"), m("denoBridge")),
      ...row("Bun binary", m("bunBare"), m("bunBridge")),
    ];
  } finally {
    await Deno.remove(build, { recursive: true }).catch(() => {});
    await server.close();
  }
}

/**
 * Runs the benchmark.
 *
 * @param seconds The quiet period sampled.
 * @returns The report rows.
 */
export async function benchIdle(seconds = 10): Promise<Row[]> {
  const bare = await bareIdle(seconds);
  const bridge = await bridgeIdle(seconds);
  const memory = await memoryRows();
  const rss0 = await rssWith(0);
  const rss200 = await rssWith(200);
  const bench = `idle cost over ${seconds} s`;
  const perSec = (n: number) => (n / seconds).toFixed(1);
  const grown = (rss200 - rss0) / 1024;
  return [
    {
      bench,
      metric: `bare runtime waiting on stdin (${bare.threads} threads): CPU / wakeups per s`,
      value: `${bare.cpuMs.toFixed(0)} ms / ${perSec(bare.wakeups)}`,
      baseline: "",
      ratio: "",
      goal: "",
      ok: null,
    },
    {
      bench,
      metric: `bridge, tmux backend, no session (${bridge.threads} threads): CPU / wakeups per s`,
      value: `${bridge.cpuMs.toFixed(0)} ms / ${perSec(bridge.wakeups)}`,
      baseline: `${bare.cpuMs.toFixed(0)} ms / ${perSec(bare.wakeups)}`,
      ratio: bare.wakeups > 0 ? `${(bridge.wakeups / bare.wakeups).toFixed(2)}x` : "",
      goal: "no more than the bare runtime",
      ok: bridge.cpuMs <= bare.cpuMs + 10 && bridge.wakeups <= bare.wakeups + seconds,
    },
    ...memory,
    {
      bench: "memory",
      metric: "deno run: bridge RSS, 0 tracked sessions (backend none)",
      value: `${(rss0 / 1024).toFixed(1)} MiB`,
      baseline: "",
      ratio: "",
      goal: "",
      ok: null,
    },
    {
      bench: "memory",
      metric: "deno run: bridge RSS, 200 tracked sessions (backend none)",
      value: `${(rss200 / 1024).toFixed(1)} MiB`,
      baseline: `${(rss0 / 1024).toFixed(1)} MiB`,
      ratio: `+${grown.toFixed(1)} MiB (${((rss200 - rss0) / 200).toFixed(1)} KiB/session)`,
      goal: "≤ +10 MiB",
      ok: grown <= 10,
    },
  ];
}

if (import.meta.main) {
  console.log(table(await benchIdle(Number(Deno.args[0] ?? 10))));
}
