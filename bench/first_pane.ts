/**
 * Benchmark: a child's first pane against a real `opencode serve` (OpenCode 1.18.33) in a private
 * tmux, muxbridge's way against a bare `opencode attach` split by hand, interleaved round by
 * round on a fresh server each round (so the load on the machine hits both alike):
 *
 * - split → first text on screen: muxbridge's start command names the child at once
 *   (`lib/session/pane_program.ts`); a bare attach shows nothing until it draws;
 * - split → attach's first draw, first pane of a fresh server: muxbridge has the server load
 *   what attach asks first while it waits for its first child (`OpencodeClient.warm`); the bare
 *   attach finds the server cold (its `GET /agent`, `/provider` and `/config/providers` took ~10 s
 *   on a loaded machine the first time, a tenth of a second after);
 * - split → attach's first draw, a later pane (the server warm for both).
 *
 * Each variant gets its own fresh server in a round; the warm-up is not timed (it runs before the
 * child exists, while the bridge waits). Ratios are muxbridge / bare; nothing is asserted.
 *
 * Run: `deno run -A bench/first_pane.ts [rounds]`
 *
 * @module
 */

import os from "node:os";
import { createOpencodeClient } from "../lib/opencode/client.ts";
import { V1 } from "../lib/opencode/v1/line.ts";
import { attachingLine, holdArgv } from "../lib/session/pane_program.ts";
import { createRealClock, waitFor } from "../lib/sys/clock.ts";
import { opencodeBin, startOpencodeServer } from "../tests/helpers/opencode_server.ts";
import { startTmuxServer, type TmuxServer } from "../tests/helpers/tmux_server.ts";
import { ms, ratio, type Row, stats, table } from "./_harness.ts";

const clock = createRealClock();
/** A bound on a hung attach only. */
const CEILING_MS = 180_000;

/** The times one pane took from its split. */
interface PaneTimes {
  /** To the first text on its screen. */
  text: number;
  /** To attach's first draw (the child's view). */
  drawn: number;
}

/** Splits a pane running `argv` and times its screen until attach draws the child's view. */
async function timePane(tmux: TmuxServer, argv: readonly string[]): Promise<PaneTimes> {
  const t0 = performance.now();
  const pane = (await tmux.tmux([
    "split-window",
    "-d",
    "-P",
    "-F",
    "#{pane_id}",
    "-t",
    tmux.anchorPane,
    "--",
    ...argv,
  ])).trim();
  let text = NaN;
  let screen = "";
  const drawn = await waitFor(clock, async () => {
    // -J: a line the pane wrapped is one line again (the child's line is one).
    screen = (await tmux.run(["capture-pane", "-p", "-J", "-t", pane])).stdout;
    if (Number.isNaN(text) && screen.trim() !== "") text = performance.now() - t0;
    // Attach's first frame: any text but muxbridge's own line.
    return screen.split("\n").some((l) => l.trim() !== "" && !l.startsWith("[muxbridge]"));
  }, { deadline: clock.now() + CEILING_MS, maxIntervalMs: 50 });
  const took = performance.now() - t0;
  await tmux.run(["kill-pane", "-t", pane]);
  if (!drawn) throw new Error(`attach did not draw within ${CEILING_MS} ms:\n${screen}`);
  return { text, drawn: took };
}

/** One round of one variant on a fresh server: the first pane, then a later one. */
async function round(muxbridge: boolean): Promise<{ first: PaneTimes; later: PaneTimes }> {
  const tmux = await startTmuxServer({ width: 160, height: 40 });
  const oc = await startOpencodeServer({ tmux, tmuxWindow: false, startTimeoutMs: CEILING_MS });
  try {
    if (muxbridge) {
      // What the bridge does once it knows the server, before any child (not timed).
      await createOpencodeClient({ url: oc.url, fetch, clock, timeoutMs: CEILING_MS })
        .warm!({ directory: oc.project });
    }
    const parent = await oc.createSession({ title: "bench parent" });
    const pane = async (title: string) => {
      const child = await oc.createSession({ title, parentID: parent.id });
      const attach = V1.pane({
        bin: oc.bin,
        url: oc.url,
        sessionId: child.id,
        dir: oc.project,
        ownsTitle: true,
      }).argv;
      return await timePane(
        tmux,
        muxbridge
          ? holdArgv(attach, { holdMs: 0, banner: attachingLine(title, child.id, oc.url) })
          : attach,
      );
    };
    return { first: await pane("first child"), later: await pane("later child") };
  } finally {
    await oc.close();
    await tmux.close();
  }
}

/**
 * Runs the benchmark.
 *
 * @param rounds Rounds of each variant.
 * @returns The rows.
 */
export async function benchFirstPane(rounds: number): Promise<Row[]> {
  if (!opencodeBin()) throw new Error("opencode is not installed: npm install (opencode-ai)");
  const samples = {
    bare: [] as Array<{ first: PaneTimes; later: PaneTimes }>,
    mux: [] as Array<{ first: PaneTimes; later: PaneTimes }>,
  };
  for (let r = 0; r < rounds; r++) {
    // Alternate which goes first, so that neither always meets the other's leftovers.
    for (const mux of r % 2 === 0 ? [false, true] : [true, false]) {
      const got = await round(mux);
      samples[mux ? "mux" : "bare"].push(got);
      const f = (t: PaneTimes) => `text ${t.text.toFixed(0)} ms, drawn ${t.drawn.toFixed(0)} ms`;
      console.error(
        `  round ${r + 1} ${mux ? "muxbridge" : "bare"}: first pane ${f(got.first)}; later pane ${
          f(got.later)
        }; load ${os.loadavg()[0].toFixed(2)}`,
      );
    }
  }
  const rows: Row[] = [];
  const row = (metric: string, pick: (s: { first: PaneTimes; later: PaneTimes }) => number) => {
    const bare = stats(samples.bare.map(pick)).median;
    const mux = stats(samples.mux.map(pick)).median;
    rows.push({
      bench: "first pane (real opencode serve)",
      metric: `${metric}, bare attach`,
      value: ms(bare),
      baseline: "",
      ratio: "",
      goal: "",
      ok: null,
    }, {
      bench: "first pane (real opencode serve)",
      metric: `${metric}, muxbridge`,
      value: ms(mux),
      baseline: ms(bare),
      ratio: ratio(mux, bare),
      goal: "",
      ok: null,
    });
  };
  row("split → first text, first pane", (s) => s.first.text);
  row("split → attach drawn, first pane", (s) => s.first.drawn);
  row("split → attach drawn, later pane", (s) => s.later.drawn);
  return rows;
}

if (import.meta.main) {
  const rounds = Number(Deno.args[0] ?? 3);
  const load = () => os.loadavg().map((l) => l.toFixed(2)).join(" ");
  console.error(`load average before: ${load()}`);
  console.log(table(await benchFirstPane(rounds)));
  console.error(`load average after: ${load()}`);
}
