/**
 * Benchmark: one pane's life (open, then a graceful close) through muxbridge's tmux backend,
 * against the bare tmux calls it needs, on a private tmux server.
 *
 * Four variants run interleaved (round-robin, so load on the machine hits them alike):
 * - bare CLI: `tmux split-window -d -P -F '#{pane_id}' …` then `tmux kill-pane`, two processes;
 * - bare control: the same two commands over a raw control-mode client (tmux's own floor);
 * - bare control, graceful: split, Ctrl+C, then list the pane until it is gone, over the raw
 *   client (the least a graceful close can cost: it includes the program's own exit);
 * - muxbridge, a process per command (`tmux.control_mode: false`, the default);
 * - muxbridge, `tmux.control_mode: true` (opt-in: a control client attached while panes open,
 *   detached before a close; see `backends/tmux/_command.ts` for why).
 * muxbridge runs `backend.spawn` (anchor listing, split, title and marks) and `closePane` (inspect,
 * Ctrl+C, wait until gone, verify) with a program that exits at once on Ctrl+C.
 *
 * Run: `deno run -A bench/pane_tmux.ts [N]`
 *
 * @module
 */

import { createTmuxBackend } from "../backends/tmux.ts";
import { connectControl } from "../backends/tmux/_control.ts";
import { commandLine } from "../backends/tmux/_command.ts";
import type { Backend } from "../lib/backend.ts";
import { createRealClock } from "../lib/sys/clock.ts";
import { resolveConfig } from "../lib/config.ts";
import type { Runner } from "../lib/sys/exec.ts";
import { silentLogger } from "../lib/sys/log.ts";
import { startTmuxServer, type TmuxServer } from "../tests/helpers/tmux_server.ts";
import {
  type CloseTally,
  interleaved,
  ms,
  paneLife,
  ratio,
  type Row,
  stats,
  table,
} from "./_harness.ts";

const clock = createRealClock();

/** Builds a tmux backend on the server, counting tmux processes. */
export function benchBackend(
  server: TmuxServer,
  control: boolean,
  counter: { forks: number },
  extra: Record<string, unknown> = {},
): Backend {
  const run: Runner = (argv, opts) => {
    counter.forks++;
    return server.runner(argv, opts);
  };
  return createTmuxBackend({
    run,
    openChannel: server.openChannel,
    env: () => undefined,
    clock,
    config: resolveConfig({
      env: () => undefined,
      flags: {
        tmux: { socket_name: server.socketName, target: server.anchorPane, control_mode: control },
        ...extra,
      },
    }),
    identity: { backend: null, layers: [], harness: { name: null } },
    log: silentLogger,
  });
}

/**
 * Runs the benchmark.
 *
 * @param n Measured panes per variant.
 * @returns The report rows.
 */
export async function benchPane(n = 30): Promise<Row[]> {
  const server = await startTmuxServer();
  try {
    const split = [
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
    ];
    const raw = await connectControl({
      argv: [
        "tmux",
        "-L",
        server.socketName,
        "-C",
        "attach-session",
        "-E",
        "-f",
        "no-output,ignore-size",
        "-t",
        "t",
      ],
      open: server.openChannel,
      clock,
      timeoutMs: 5000,
      log: silentLogger,
    });
    const counters = { cli: { forks: 0 }, control: { forks: 0 } };
    const viaCli = benchBackend(server, false, counters.cli);
    const viaControl = benchBackend(server, true, counters.control);
    await viaCli.probe();
    await viaControl.probe();
    const closes: CloseTally<"cli" | "control"> = { killed: { cli: 0, control: 0 }, errors: [] };
    const variants: Array<[string, () => Promise<void>]> = [
      ["bare CLI", async () => {
        const s = await server.run(split);
        if (s.code !== 0) throw new Error(s.stderr);
        const k = await server.run(["kill-pane", "-t", s.stdout.trim()]);
        if (k.code !== 0) throw new Error(k.stderr);
      }],
      ["bare control", async () => {
        const s = await raw.request(commandLine([split]));
        if (!s?.ok) throw new Error(s?.stderr ?? "channel ended");
        const k = await raw.request(commandLine([["kill-pane", "-t", s.stdout.trim()]]));
        if (!k?.ok) throw new Error(k?.stderr ?? "channel ended");
      }],
      ["bare control, graceful", async () => {
        // What a graceful close needs at least: Ctrl+C, then ask until the pane is gone.
        const s = await raw.request(commandLine([split]));
        if (!s?.ok) throw new Error(s?.stderr ?? "channel ended");
        const id = s.stdout.trim();
        await raw.request(commandLine([["send-keys", "-t", id, "C-c"]]));
        for (let i = 0; i < 10_000; i++) {
          const l = await raw.request(commandLine([["list-panes", "-t", id, "-F", "#{pane_id}"]]));
          if (!l?.ok) return;
        }
        throw new Error(`pane ${id} did not close on Ctrl+C`);
      }],
      ["muxbridge, process per command", paneLife(viaCli, server.dir, "cli", closes)],
      ["muxbridge, control mode", paneLife(viaControl, server.dir, "control", closes)],
    ];
    const warmup = 3;
    const forksBefore = { cli: counters.cli.forks, control: counters.control.forks };
    const samples = await interleaved(variants, n, warmup);
    const perPane = (key: "cli" | "control") =>
      ((counters[key].forks - forksBefore[key]) / (n + warmup)).toFixed(1);
    closeFailures.push(...closes.errors);
    for (const e of closes.errors) console.error(`close failed: ${e}`);
    await raw.close();
    await viaCli.dispose?.();
    await viaControl.dispose?.();
    const s = Object.fromEntries([...samples].map(([k, v]) => [k, stats(v)]));
    const bare = s["bare CLI"];
    const bareCtl = s["bare control"];
    const cli = s["muxbridge, process per command"];
    const ctl = s["muxbridge, control mode"];
    const graceful = s["bare control, graceful"];
    const bench = `pane open+close (N=${n})`;
    const overheadCli = cli.median - bare.median;
    const overheadCtl = ctl.median - bare.median;
    return [
      {
        bench,
        metric: "bare tmux CLI: split-window + kill-pane (2 processes)",
        value: ms(bare.median),
        baseline: "",
        ratio: "",
        goal: "",
        ok: null,
      },
      {
        bench,
        metric: "bare tmux control mode: the same 2 commands",
        value: ms(bareCtl.median),
        baseline: ms(bare.median),
        ratio: ratio(bareCtl.median, bare.median),
        goal: "",
        ok: null,
      },
      {
        bench,
        metric: "bare tmux control mode: split, Ctrl+C, list until gone",
        value: ms(graceful.median),
        baseline: ms(bare.median),
        ratio: ratio(graceful.median, bare.median),
        goal: "",
        ok: null,
      },
      {
        bench,
        metric: `muxbridge default: a process per command (${perPane("cli")} processes/pane)`,
        value: ms(cli.median),
        baseline: ms(bare.median),
        ratio: ratio(cli.median, bare.median),
        goal: "",
        ok: null,
      },
      {
        bench,
        metric: `muxbridge, tmux.control_mode on (${perPane("control")} processes/pane)`,
        value: ms(ctl.median),
        baseline: ms(bare.median),
        ratio: ratio(ctl.median, bare.median),
        goal: "",
        ok: null,
      },
      {
        bench,
        metric: "muxbridge's own cost per pane, default (− bare CLI)",
        value: ms(overheadCli),
        baseline: "",
        ratio: "",
        goal: "≤ 5 ms",
        ok: overheadCli <= 5,
      },
      {
        bench,
        metric: "muxbridge's own cost per pane, control mode on (− bare CLI)",
        value: ms(overheadCtl),
        baseline: "",
        ratio: "",
        goal: "≤ 5 ms",
        ok: overheadCtl <= 5,
      },
      {
        bench,
        metric: "closes that needed the kill / closes that failed",
        value: `${closes.killed.cli + closes.killed.control} / ${closes.errors.length}`,
        baseline: "",
        ratio: "",
        goal: "0 / 0",
        ok: closes.killed.cli + closes.killed.control === 0 && closes.errors.length === 0,
      },
    ];
  } finally {
    await server.close();
  }
}

/** Close errors of the last run (for the report). */
export const closeFailures: string[] = [];

if (import.meta.main) {
  console.log(table(await benchPane(Number(Deno.args[0] ?? 30))));
}
