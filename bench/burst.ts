/**
 * Benchmark: a burst of 50 child sessions created at once, through the real bridge process
 * (`main.ts bridge`) on a private tmux server: time until every pane is open, duplicate panes
 * (must be 0), and panes left after shutdown (must be 0). The baseline is 50 bare
 * `tmux new-window -d` processes in a row, measured in the same run. The OpenCode server is the
 * loopback fake (every child known and busy).
 *
 * The bridge and the baseline take turns, `rounds` times each (paired, so load on the machine
 * hits both alike); the medians are reported.
 *
 * Run: `deno run -A bench/burst.ts [N] [ROUNDS]`
 *
 * @module
 */

import { createRealClock, waitFor } from "../lib/sys/clock.ts";
import { events, startBridge } from "../tests/helpers/bridge_process.ts";
import { serveFakeOpencode } from "../tests/helpers/fake_opencode_server.ts";
import { tmuxBridgeEnv } from "../tests/helpers/real_life.ts";
import { startTmuxServer, type TmuxServer } from "../tests/helpers/tmux_server.ts";
import { ms, ratio, type Row, sampleProc, stats, table, writeScript } from "./_harness.ts";

const clock = createRealClock();
const PARENT = "ses_burstParent";

/** Marked panes per session id, from tmux itself. */
async function markedPanes(server: TmuxServer): Promise<Map<string, string[]>> {
  const out = await server.tmux(["list-panes", "-a", "-F", "#{pane_id} #{@muxbridge-session}"]);
  const map = new Map<string, string[]>();
  for (const line of out.trim().split("\n")) {
    const [pane, session] = line.split(" ");
    if (!session) continue;
    map.set(session, [...(map.get(session) ?? []), pane]);
  }
  return map;
}

interface BurstResult {
  openMs: number;
  duplicates: number;
  left: number;
  records: number;
  rssKiB: number;
  failed: number;
}

async function burstOnce(n: number): Promise<BurstResult> {
  const server = await startTmuxServer({ width: 240, height: 60 });
  // The bridge asks the OpenCode server about each child before opening its pane.
  const oc = serveFakeOpencode();
  oc.fake.knowAll = true;
  try {
    const dir = `${server.dir}/bridge`;
    await Deno.mkdir(dir);
    const program = await writeScript(`${dir}/attach`, "exec sleep 100000");
    const env = await tmuxBridgeEnv(server, dir, {
      opencode_bin: program,
      log_level: "warn",
    });
    const state = env.MUXBRIDGE_STATE_DIR;
    const bridge = startBridge(["--url", oc.url, "--dir", dir], env);
    try {
      await bridge.waitFor((l) => l.type === "ready", 30_000);
      const ids = Array.from({ length: n }, (_, i) => `ses_burst${i}`);
      for (const id of ids) oc.fake.busy(id);
      const text = [
        events.created(PARENT, "parent", null, dir),
        ...ids.flatMap((
          id,
        ) => [events.created(id, `child ${id}`, PARENT, dir), events.status(id, "busy")]),
      ].map((e) => JSON.stringify(e)).join("\n") + "\n";
      const start = performance.now();
      await bridge.sendRaw(text);
      const done = (l: Record<string, unknown>) =>
        l.type === "pane.opened" || l.type === "pane.failed";
      await waitFor(clock, () => bridge.lines.filter(done).length >= n, {
        deadline: clock.now() + 120_000,
        maxIntervalMs: 5,
      });
      const opened = bridge.lines.flatMap((l, i) => l.type === "pane.opened" ? [i] : []);
      const openMs = (opened.length ? bridge.arrivals[opened.at(-1)!] : performance.now()) - start;
      const failed = bridge.lines.filter((l) => l.type === "pane.failed").length;
      const perSession = new Map<string, number>();
      for (const i of opened) {
        const sid = String(bridge.lines[i].sessionID);
        perSession.set(sid, (perSession.get(sid) ?? 0) + 1);
      }
      const live = await markedPanes(server);
      let duplicates = 0;
      for (const id of ids) {
        duplicates += Math.max(0, (perSession.get(id) ?? 0) - 1);
        duplicates += Math.max(0, (live.get(id)?.length ?? 0) - 1);
      }
      const rssKiB = sampleProc(bridge.pid).rssKiB;
      await bridge.endInput();
      await bridge.waitFor((l) => l.type === "bye", 120_000);
      await bridge.status;
      const left = [...(await markedPanes(server)).values()].reduce((a, p) => a + p.length, 0);
      let records = 0;
      try {
        for await (const e of Deno.readDir(state)) if (e.isFile) records++;
      } catch { /* no state dir: no records */ }
      return { openMs, duplicates, left, records, rssKiB, failed };
    } finally {
      bridge.kill("SIGKILL");
      await bridge.status.catch(() => {});
    }
  } finally {
    await oc.close();
    await server.close();
  }
}

async function bareWindows(n: number): Promise<number> {
  const server = await startTmuxServer({ width: 240, height: 60 });
  try {
    const start = performance.now();
    const ids: string[] = [];
    for (let i = 0; i < n; i++) {
      const id = await server.tmux([
        "new-window",
        "-d",
        "-P",
        "-F",
        "#{pane_id}",
        "-t",
        "t:",
        "sleep",
        "100000",
      ]);
      ids.push(id.trim());
    }
    const elapsed = performance.now() - start;
    for (const id of ids) await server.run(["kill-pane", "-t", id]);
    return elapsed;
  } finally {
    await server.close();
  }
}

/**
 * Runs the benchmark.
 *
 * @param n Children in the burst.
 * @param rounds Bursts of each side, taking turns.
 * @returns The report rows.
 */
export async function benchBurst(n = 50, rounds = 3): Promise<Row[]> {
  const bare: number[] = [];
  const runs: BurstResult[] = [];
  for (let i = 0; i < rounds; i++) {
    bare.push(await bareWindows(n));
    runs.push(await burstOnce(n));
  }
  const open = stats(runs.map((r) => r.openMs)).median;
  const base = stats(bare).median;
  const sum = (f: (r: BurstResult) => number) => runs.reduce((a, r) => a + f(r), 0);
  const failed = sum((r) => r.failed);
  const [duplicates, left, records] = [
    sum((r) => r.duplicates),
    sum((r) => r.left),
    sum((r) => r.records),
  ];
  const bench = `burst of ${n} children (bridge process, ${rounds} rounds)`;
  return [
    {
      bench,
      metric: `bare: ${n} × tmux new-window -d, one process each in a row`,
      value: ms(base),
      baseline: "",
      ratio: "",
      goal: "",
      ok: null,
    },
    {
      bench,
      metric: `bridge: created → every pane.opened (${failed} failed)`,
      value: ms(open),
      baseline: ms(base),
      ratio: ratio(open, base),
      goal: "≤ 1.2x",
      ok: open <= 1.2 * base && failed === 0,
    },
    {
      bench,
      metric: "duplicate panes / panes left after bye / records left (all rounds)",
      value: `${duplicates} / ${left} / ${records}`,
      baseline: "",
      ratio: "",
      goal: "0 / 0 / 0",
      ok: duplicates === 0 && left === 0 && records === 0,
    },
    {
      bench,
      metric: `bridge RSS with ${n} open panes`,
      value: `${(stats(runs.map((r) => r.rssKiB)).median / 1024).toFixed(1)} MiB`,
      baseline: "",
      ratio: "",
      goal: "",
      ok: null,
    },
  ];
}

if (import.meta.main) {
  console.log(table(await benchBurst(Number(Deno.args[0] ?? 50), Number(Deno.args[1] ?? 3))));
}
