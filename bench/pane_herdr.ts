/**
 * Benchmark: one pane's life (open, then a graceful close) through muxbridge's herdr backend over
 * herdr's CLI (a process per command) and over herdr's API socket (a connection per request),
 * against the FAKE herdr: the fake CLI (`tests/fakes/bin/herdr`, a Deno script) and the fake
 * socket server (`tests/fakes/herdr_socket.ts`), which share one pane model and state file.
 * herdr itself cannot run here, so these figures show the cost of a process per command saved,
 * not herdr's own latency: the fake CLI starts a Deno runtime per call (tens of ms) where the
 * real CLI is a native binary. The process-start rows and the estimate put that in proportion.
 *
 * Variants, run interleaved (round-robin, so load on the machine hits them alike), on one fake
 * server and state:
 * - bare CLI: `herdr pane split` + `herdr pane close` (2 fake CLI processes);
 * - bare socket: `pane.split` + `pane.close` on the socket (2 connections);
 * - muxbridge, `herdr.transport: cli`: `backend.spawn` (placement listing, split, process info,
 *   the typed launch line, title) and `closePane` (inspect, Ctrl+C, inspect until gone), with a
 *   program that exits on Ctrl+C;
 * - muxbridge, `herdr.transport: socket`: the same over the socket (no process);
 * - process starts: `/bin/true` (the floor of any process) and the fake `herdr --version`.
 *
 * Run: `deno run -A bench/pane_herdr.ts [N]`
 *
 * @module
 */

import { createHerdrBackend } from "../backends/herdr/backend.ts";
import type { Backend } from "../lib/backend/backend.ts";
import { createRealClock } from "../lib/sys/clock.ts";
import { resolveConfig } from "../tests/helpers/config.ts";
import type { Runner } from "../lib/sys/exec.ts";
import { silentLogger } from "../lib/sys/log.ts";
import { unixRequest, type UnixRequester } from "../lib/sys/unix_request.ts";
import { FAKE_HERDR, type FakeHerdr, startFakeHerdr } from "../tests/backends/herdr_fixture.ts";
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

interface Counter {
  processes: number;
  connections: number;
}

/** A herdr backend on the fake server, counting processes and socket connections. */
function benchBackend(server: FakeHerdr, transport: "cli" | "socket", counter: Counter): Backend {
  const run: Runner = (argv, opts) => {
    counter.processes++;
    return server.runner(argv, opts);
  };
  const send: UnixRequester = (path, line, opts) => {
    counter.connections++;
    return unixRequest(path, line, opts);
  };
  return createHerdrBackend({
    run,
    env: () => undefined,
    clock,
    config: resolveConfig({
      env: () => undefined,
      flags: { backend: "herdr", command_timeout_ms: 10_000, herdr: { transport } },
    }),
    identity: server.identity(),
    log: silentLogger,
  }, { unixRequest: send });
}

/**
 * Runs the benchmark.
 *
 * @param n Measured panes per variant.
 * @returns The report rows.
 */
export async function benchPaneHerdr(n = 15): Promise<Row[]> {
  const server = await startFakeHerdr({ socket: true });
  try {
    const counters = {
      cli: { processes: 0, connections: 0 },
      socket: { processes: 0, connections: 0 },
    };
    const viaCli = benchBackend(server, "cli", counters.cli);
    const viaSocket = benchBackend(server, "socket", counters.socket);
    await viaCli.probe();
    await viaSocket.probe();
    const cliEnv = { HERDR_SOCKET_PATH: server.socket };
    const cli = async (args: string[]) => {
      const r = await server.runner([FAKE_HERDR, ...args], { timeoutMs: 10_000, env: cliEnv });
      if (r.code !== 0) throw new Error(r.stderr);
      return r.stdout;
    };
    const wire = async (method: string, params: Record<string, unknown>) => {
      const r = await unixRequest(
        server.socket,
        JSON.stringify({ id: "bench", method, params }),
        { timeoutMs: 10_000 },
      );
      if (!r.ok || !r.line.includes('"result"')) throw new Error(JSON.stringify(r));
      return JSON.parse(r.line);
    };
    const closes: CloseTally<"cli" | "socket"> = { killed: { cli: 0, socket: 0 }, errors: [] };
    const variants: Array<[string, () => Promise<void>]> = [
      ["bare CLI", async () => {
        const out = JSON.parse(
          await cli(["pane", "split", "w1:p1", "--direction", "right", "--no-focus"]),
        );
        await cli(["pane", "close", out.result.pane.pane_id]);
      }],
      ["bare socket", async () => {
        const out = await wire("pane.split", {
          target_pane_id: "w1:p1",
          direction: "right",
          focus: false,
        });
        await wire("pane.close", { pane_id: out.result.pane.pane_id });
      }],
      ["muxbridge, cli", paneLife(viaCli, server.dir, "cli", closes)],
      ["muxbridge, socket", paneLife(viaSocket, server.dir, "socket", closes)],
      ["/bin/true", async () => {
        await server.runner(["/bin/true"], { timeoutMs: 10_000 });
      }],
      ["fake herdr --version", async () => {
        await cli(["--version"]);
      }],
    ];
    let before = structuredClone(counters);
    const samples = await interleaved(variants, n, 2, () => (before = structuredClone(counters)));
    const per = (key: "cli" | "socket", what: keyof Counter) =>
      (counters[key][what] - before[key][what]) / n;
    for (const e of closes.errors) console.error(`close failed: ${e}`);
    const s = Object.fromEntries([...samples].map(([k, v]) => [k, stats(v)]));
    const bench = `herdr pane open+close, fakes (N=${n})`;
    const cliLife = s["muxbridge, cli"].median;
    const socketLife = s["muxbridge, socket"].median;
    const procs = per("cli", "processes");
    // A native herdr CLI would cost, per process, about a bare process start on top of the request
    // the socket path sends anyway (its extra ping connection is left out): a rough lower bound.
    const estimate = socketLife + procs * s["/bin/true"].median;
    const row = (metric: string, value: string, baseline = "", r = ""): Row => ({
      bench,
      metric,
      value,
      baseline,
      ratio: r,
      goal: "",
      ok: null,
    });
    return [
      row("bare fake CLI: pane split + pane close (2 processes)", ms(s["bare CLI"].median)),
      row(
        "bare socket: pane.split + pane.close (2 connections)",
        ms(s["bare socket"].median),
        ms(s["bare CLI"].median),
        ratio(s["bare socket"].median, s["bare CLI"].median),
      ),
      row(
        `muxbridge, herdr.transport cli (${procs.toFixed(1)} processes/pane)`,
        ms(cliLife),
      ),
      row(
        `muxbridge, herdr.transport socket (${
          per("socket", "connections").toFixed(1)
        } connections, ${per("socket", "processes").toFixed(1)} processes/pane)`,
        ms(socketLife),
        ms(cliLife),
        ratio(socketLife, cliLife),
      ),
      row(
        "one process start: /bin/true / the fake herdr CLI (Deno)",
        `${ms(s["/bin/true"].median)} / ${ms(s["fake herdr --version"].median)}`,
      ),
      row(
        "estimate: socket vs a native herdr CLI (socket + processes/pane × /bin/true)",
        ms(socketLife),
        ms(estimate),
        ratio(socketLife, estimate),
      ),
      closeTallyRow(bench, closes),
    ];
  } finally {
    await server.close();
  }
}

if (import.meta.main) {
  console.log(table(await benchPaneHerdr(Number(Deno.args[0] ?? 15))));
}
