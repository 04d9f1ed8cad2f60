/**
 * Benchmark: one pane's life (open, then a graceful close) through muxbridge's kitty backend on
 * the REAL kitty (0.26.5 here, under Xvfb), over kitty's socket against through `kitty @`.
 *
 * Variants, run interleaved (round-robin, so load on the machine hits them alike), on one kitty:
 * - muxbridge over `kitty @` (the socket seam refuses, as when nothing listens on a path: every
 *   call starts a `kitty @` process, as before the socket was spoken);
 * - muxbridge over the socket (the default);
 * - one bare `kitty @ ls`, for the cost of one process start.
 *
 * Besides the wall time it reports the CPU spent by this process and its reaped children (the
 * `kitty @` processes) per pane, from `/proc/self/stat`: kitty's own work is the same for both.
 *
 * Run: `deno run -A bench/pane_kitty.ts [N]`
 *
 * @module
 */

import { createKittyBackend } from "../backends/kitty/backend.ts";
import type { Backend } from "../lib/backend/backend.ts";
import { createRealClock } from "../lib/sys/clock.ts";
import type { Runner } from "../lib/sys/exec.ts";
import { silentLogger } from "../lib/sys/log.ts";
import { unixRequest, type UnixRequester } from "../lib/sys/unix_request.ts";
import { resolveConfig } from "../tests/helpers/config.ts";
import { type KittyServer, startKittyServer } from "../tests/helpers/kitty_server.ts";
import {
  type CloseTally,
  closeTallyRow,
  interleaved,
  ms,
  paneLife,
  ratio,
  type Row,
  stats,
  table,
} from "./_harness.ts";

const clock = createRealClock();

/** CPU seconds of this process and its reaped children so far (`/proc/self/stat`). */
function cpuSeconds(): number {
  const stat = Deno.readTextFileSync("/proc/self/stat");
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // utime, stime, cutime, cstime: fields 14-17, in clock ticks (100 per second on Linux).
  return (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) / 100;
}

const refuse: UnixRequester = () =>
  Promise.resolve({ ok: false, reason: "unreachable", sent: false, detail: "refused (bench)" });

/** A kitty backend on the bench's kitty, counting `kitty @` processes. */
function benchBackend(server: KittyServer, send: UnixRequester, count: { rc: number }): Backend {
  const run: Runner = (argv, opts) => {
    if (argv.includes("@")) count.rc++;
    return server.runner(argv, opts);
  };
  return createKittyBackend({
    run,
    env: (name) => server.env[name],
    clock,
    config: resolveConfig({
      env: () => undefined,
      flags: {
        backend: "kitty",
        command_timeout_ms: 15_000,
        kitty: { listen_on: server.address, window_id: Number(server.anchorWindow) },
        state_dir: `${server.dir}/state`,
      },
    }),
    identity: {
      backend: "kitty",
      layers: [{ backend: "kitty", paneId: server.anchorWindow, socket: server.address }],
      harness: { name: null },
    },
    log: silentLogger,
  }, { unixRequest: send });
}

/**
 * Runs the benchmark.
 *
 * @param n Measured panes per variant.
 * @returns The report rows.
 */
export async function benchPaneKitty(n = 10): Promise<Row[]> {
  const server = await startKittyServer();
  try {
    const counts = { cli: { rc: 0 }, socket: { rc: 0 } };
    const viaCli = benchBackend(server, refuse, counts.cli);
    const viaSocket = benchBackend(server, unixRequest, counts.socket);
    await viaCli.probe();
    await viaSocket.probe();
    const closes: CloseTally<"cli" | "socket"> = { killed: { cli: 0, socket: 0 }, errors: [] };
    const cpu = { cli: 0, socket: 0 };
    const counted = (key: "cli" | "socket", fn: () => Promise<void>) => async () => {
      const before = cpuSeconds();
      await fn();
      cpu[key] += cpuSeconds() - before;
    };
    const variants: Array<[string, () => Promise<void>]> = [
      ["kitty @", counted("cli", paneLife(viaCli, server.dir, "cli", closes))],
      ["socket", counted("socket", paneLife(viaSocket, server.dir, "socket", closes))],
      ["bare kitty @ ls", async () => {
        const r = await server.runner(["kitty", "@", "--to", server.address, "ls"], {
          timeoutMs: 30_000,
        });
        if (r.code !== 0) throw new Error(r.stderr);
      }],
    ];
    let before = structuredClone(counts);
    const samples = await interleaved(variants, n, 1, () => {
      before = structuredClone(counts);
      cpu.cli = 0;
      cpu.socket = 0;
    });
    for (const e of closes.errors) console.error(`close failed: ${e}`);
    const s = Object.fromEntries([...samples].map(([k, v]) => [k, stats(v)]));
    const bench = `kitty pane open+close, real kitty 0.26.5 (N=${n})`;
    const rc = (key: "cli" | "socket") => ((counts[key].rc - before[key].rc) / n).toFixed(1);
    const row = (metric: string, value: string, baseline = "", r = ""): Row => ({
      bench,
      metric,
      value,
      baseline,
      ratio: r,
      goal: "",
      ok: null,
    });
    const cliLife = s["kitty @"].median;
    const socketLife = s["socket"].median;
    const cpuPer = (key: "cli" | "socket") => (cpu[key] / n) * 1000;
    return [
      row(`muxbridge through kitty @ (${rc("cli")} kitty @ processes/pane)`, ms(cliLife)),
      row(
        `muxbridge over kitty's socket (${rc("socket")} kitty @ processes/pane)`,
        ms(socketLife),
        ms(cliLife),
        ratio(socketLife, cliLife),
      ),
      row("CPU per pane through kitty @ (muxbridge + its kitty @ processes)", ms(cpuPer("cli"))),
      row(
        "CPU per pane over the socket (muxbridge)",
        ms(cpuPer("socket")),
        ms(cpuPer("cli")),
        ratio(cpuPer("socket"), cpuPer("cli")),
      ),
      row("one bare `kitty @ ls` process", ms(s["bare kitty @ ls"].median)),
      closeTallyRow(bench, closes),
    ];
  } finally {
    await server.close();
  }
}

if (import.meta.main) {
  console.log(table(await benchPaneKitty(Number(Deno.args[0] ?? 10))));
}
