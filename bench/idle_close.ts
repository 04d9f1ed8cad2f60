/**
 * Benchmark: how soon a pane closes once its child turns idle, with `idle_close_delay_ms: 0` and
 * `min_pane_lifetime_ms: 0`, through the real bridge process (`main.ts bridge`, or the binary
 * `MUXBRIDGE_TEST_BIN` names) on a private tmux server, against the bare work a close needs:
 * `tmux send-keys C-c` then `tmux kill-pane` on a pane running the same program.
 *
 * The bridge side is timed from writing `session.status idle` to its stdin until its
 * `pane.closed` line arrives: the line read, the idle confirmation (one status read from the
 * loopback fake OpenCode server), the interrupt, the wait for the program, the kill, the record
 * removed. Bridge and bare closes take turns.
 *
 * Run: `deno run -A bench/idle_close.ts [N]`
 *
 * @module
 */

import { events, startBridge } from "../tests/helpers/bridge_process.ts";
import { serveFakeOpencode } from "../tests/helpers/fake_opencode_server.ts";
import { tmuxBridgeEnv } from "../tests/helpers/real_life.ts";
import { startTmuxServer } from "../tests/helpers/tmux_server.ts";
import { ms, type Row, stats, table, writeScript } from "./_harness.ts";

const PARENT = "ses_idleParent";

/**
 * Runs the benchmark.
 *
 * @param n Closes of each side.
 * @returns The report rows.
 */
export async function benchIdleClose(n = 15): Promise<Row[]> {
  const server = await startTmuxServer({ width: 200, height: 50 });
  const oc = serveFakeOpencode();
  try {
    const dir = `${server.dir}/bridge`;
    await Deno.mkdir(dir);
    const program = await writeScript(`${dir}/attach`, "exec sleep 100000");
    const env = await tmuxBridgeEnv(server, dir, {
      opencode_bin: program,
      idle_close_delay_ms: 0,
      min_pane_lifetime_ms: 0,
      log_level: "warn",
    });
    const bridge = startBridge(["--url", oc.url, "--dir", dir], env);
    const bridgeMs: number[] = [];
    const bareMs: number[] = [];
    try {
      await bridge.waitFor((l) => l.type === "ready", 30_000);
      await bridge.send(events.created(PARENT, "parent", null, dir));
      const warmup = 2;
      for (let i = 0; i < n + warmup; i++) {
        // The bridge: a busy child gets its pane; then it turns idle.
        const id = `ses_idle${i}`;
        oc.fake.busy(id);
        await bridge.send(events.created(id, `child ${i}`, PARENT, dir));
        await bridge.send(events.status(id, "busy"));
        await bridge.waitFor((l) => l.type === "pane.opened" && l.sessionID === id, 30_000);
        oc.fake.idle(id);
        const start = performance.now();
        await bridge.send(events.status(id, "idle"));
        const closed = (l: Record<string, unknown>) =>
          l.type === "pane.closed" && l.sessionID === id;
        await bridge.waitFor(closed, 30_000);
        const took = bridge.arrivals[bridge.lines.findIndex(closed)] - start;
        // Bare: the same program in a pane, interrupted and killed by two tmux calls.
        const pane = (await server.tmux([
          "split-window",
          "-d",
          "-P",
          "-F",
          "#{pane_id}",
          "-t",
          server.anchorPane,
          "--",
          program,
        ])).trim();
        const bare = performance.now();
        await server.run(["send-keys", "-t", pane, "C-c"]);
        await server.run(["kill-pane", "-t", pane]);
        const bareTook = performance.now() - bare;
        if (i >= warmup) {
          bridgeMs.push(took);
          bareMs.push(bareTook);
        }
      }
    } finally {
      await bridge.endInput();
      await bridge.waitFor((l) => l.type === "bye", 30_000).catch(() => {});
      await bridge.status;
    }
    const b = stats(bridgeMs).median;
    const bare = stats(bareMs).median;
    const bench = `close after idle, idle_close_delay_ms 0 (N=${n})`;
    return [
      {
        bench,
        metric: "bare: tmux send-keys C-c + kill-pane (2 processes)",
        value: ms(bare),
        baseline: "",
        ratio: "",
        goal: "",
        ok: null,
      },
      {
        bench,
        metric: "bridge: session.status idle written → pane.closed read",
        value: ms(b),
        baseline: ms(bare),
        ratio: `+${(b - bare).toFixed(1)} ms`,
        goal: "≤ bare + 50 ms",
        ok: b <= bare + 50,
      },
    ];
  } finally {
    await oc.close();
    await server.close();
  }
}

if (import.meta.main) {
  console.log(table(await benchIdleClose(Number(Deno.args[0] ?? 15))));
}
