/**
 * Benchmark: opening a pane, and a pane's whole life (open, then a graceful close), through
 * muxbridge's tmux backend against the bare tmux calls the same work needs, on a private tmux
 * server. The variants run interleaved (round-robin, so load on the machine hits them alike):
 *
 * - bare open: the calls a pane needs, one tmux process each — `split-window -d -P`, the two
 *   ownership marks (`set-option -p`, one call), the title (`select-pane -T`) and the layout
 *   (`select-layout`);
 * - muxbridge open: `backend.spawn` (the same work in one call once the session is listed);
 * - bare life: `split-window` then `kill-pane`, two processes;
 * - muxbridge life: `backend.spawn` and `closePane` with the program recorded as the bridge
 *   records it (interrupt, wait for the program, one call that kills and lists), with a program
 *   that exits on Ctrl+C at once. Between open and close, both lives wait (untimed) until the
 *   pane's program runs.
 *
 * A pane opened by an "open" variant is closed after the measurement (not timed), by the same
 * side: muxbridge's through `backend.kill`, as its closes always go.
 *
 * Run: `deno run -A bench/pane_tmux.ts [N]`
 *
 * @module
 */

import { createTmuxBackend } from "../backends/tmux/backend.ts";
import type { Backend } from "../lib/backend/backend.ts";
import { createRealClock, waitFor } from "../lib/sys/clock.ts";
import { resolveConfig } from "../tests/helpers/config.ts";
import type { Runner } from "../lib/sys/exec.ts";
import { silentLogger } from "../lib/sys/log.ts";
import { closePane } from "../lib/session/close_pane.ts";
import { createProcesses } from "../lib/sys/processes.ts";
import { startTmuxServer, type TmuxServer } from "../tests/helpers/tmux_server.ts";
import { ms, ratio, type Row, stats, table } from "./_harness.ts";
import { validateSessionId } from "../lib/sys/validate.ts";

const clock = createRealClock();
const processes = createProcesses();

/** Builds a tmux backend on the server, counting tmux processes. */
export function benchBackend(
  server: TmuxServer,
  counter: { forks: number },
  extra: Record<string, unknown> = {},
): Backend {
  const run: Runner = (argv, opts) => {
    counter.forks++;
    return server.runner(argv, opts);
  };
  return createTmuxBackend({
    run,
    env: () => undefined,
    clock,
    config: resolveConfig({
      env: () => undefined,
      flags: {
        tmux: { socket_name: server.socketName, target: server.anchorPane },
        ...extra,
      },
    }),
    identity: { backend: null, layers: [], harness: { name: null } },
    log: silentLogger,
  });
}

/** What a timed round returns: its own duration, work after it not counted. */
type Timed = () => Promise<number>;

/**
 * Runs timed variants round-robin (each round starts one variant later): `warmup` rounds not
 * kept, then `n` kept.
 */
async function roundRobin(
  variants: ReadonlyArray<readonly [string, Timed]>,
  n: number,
  warmup: number,
): Promise<Map<string, number[]>> {
  const samples = new Map<string, number[]>(variants.map(([name]) => [name, []]));
  for (let round = 0; round < n + warmup; round++) {
    for (let i = 0; i < variants.length; i++) {
      const [name, fn] = variants[(round + i) % variants.length];
      const took = await fn();
      if (round >= warmup) samples.get(name)!.push(took);
    }
  }
  return samples;
}

/** A spawn request as the bridge makes it (a password in the pane's environment). */
const request = (cwd: string) => ({
  sessionId: validateSessionId("ses_bench"),
  title: "bench",
  argv: ["sleep", "100000"],
  cwd,
  env: { OPENCODE_SERVER_PASSWORD: "bench" },
  owner: "cli",
});

/**
 * Runs the benchmark.
 *
 * @param n Measured panes per variant.
 * @returns The report rows.
 */
export async function benchPane(n = 30): Promise<Row[]> {
  const server = await startTmuxServer();
  try {
    const must = async (args: string[]) => {
      const r = await server.run(args);
      if (r.code !== 0) throw new Error(`tmux ${args[0]}: ${r.stderr}`);
      return r.stdout.trim();
    };
    const split = (...program: string[]) => [
      "split-window",
      "-h",
      "-d",
      "-P",
      "-F",
      "#{pane_id} #{pane_pid}",
      "-t",
      server.anchorPane,
      "-c",
      server.dir,
      "-e",
      "OPENCODE_SERVER_PASSWORD=bench",
      "--",
      ...program,
    ];
    const counter = { forks: 0 };
    const backend = benchBackend(server, counter);
    await backend.probe();
    const forks = { open: 0, life: 0 };
    const tally = { killed: 0, errors: [] as string[] };
    /**
     * Waits (not timed) until a pane's program runs `sleep`: a Ctrl+C sent before the program
     * has its terminal is lost, which only a close right after the open meets (real panes close
     * seconds after they open), and the close would then wait out its grace period.
     */
    const started = async (pid: number) => {
      const comm = () => {
        try {
          return Deno.readTextFileSync(`/proc/${pid}/comm`).trim();
        } catch {
          return "";
        }
      };
      await waitFor(clock, () => comm() === "sleep", { deadline: clock.now() + 5000 });
    };
    const lifeOf = (b: Backend, c: { forks: number }, key: "life"): Timed => async () => {
      const before = c.forks;
      const start = performance.now();
      const { paneId, pid } = await b.spawn(request(server.dir));
      let took = performance.now() - start;
      if (pid !== undefined) await started(pid);
      const closing = performance.now();
      try {
        const r = await closePane(b, paneId, {
          graceMs: 250,
          clock,
          processes,
          ...(pid !== undefined ? { pid, pidStart: processes.startTime(pid) } : {}),
        });
        if (r.killed) tally.killed++;
      } catch (err) {
        tally.errors.push((err as Error).message);
      }
      took += performance.now() - closing;
      forks[key] += c.forks - before;
      return took;
    };
    const variants: Array<[string, Timed]> = [
      ["bare open", async () => {
        const start = performance.now();
        const pane = (await must(split("sleep", "100000"))).split(" ")[0];
        await must([
          "set-option",
          "-p",
          "-t",
          pane,
          "@muxbridge-session",
          "ses_bench",
          ";",
          "set-option",
          "-p",
          "-t",
          pane,
          "@muxbridge-owner",
          "cli",
        ]);
        await must(["select-pane", "-t", pane, "-T", "bench"]);
        await must(["select-layout", "-t", server.anchorPane, "main-vertical"]);
        const took = performance.now() - start;
        await must(["kill-pane", "-t", pane]);
        return took;
      }],
      ["muxbridge open", async () => {
        const before = counter.forks;
        const start = performance.now();
        const { paneId } = await backend.spawn(request(server.dir));
        const took = performance.now() - start;
        forks.open += counter.forks - before;
        await backend.kill(paneId);
        return took;
      }],
      ["bare life", async () => {
        const start = performance.now();
        const [pane, pid] = (await must(split("sleep", "100000"))).split(" ");
        let took = performance.now() - start;
        await started(Number(pid));
        const closing = performance.now();
        await must(["kill-pane", "-t", pane]);
        took += performance.now() - closing;
        return took;
      }],
      ["muxbridge life", lifeOf(backend, counter, "life")],
    ];
    const warmup = 3;
    const samples = await roundRobin(variants, n, warmup);
    for (const e of tally.errors) console.error(`close failed: ${e}`);
    const s = Object.fromEntries([...samples].map(([k, v]) => [k, stats(v)]));
    const per = (count: number) => (count / (n + warmup)).toFixed(1);
    const open = `pane open (N=${n})`;
    const life = `pane open + close (N=${n})`;
    return [
      {
        bench: open,
        metric: "bare: split, marks, title, layout, one tmux process each (4)",
        value: ms(s["bare open"].median),
        baseline: "",
        ratio: "",
        goal: "",
        ok: null,
      },
      {
        bench: open,
        metric: `muxbridge spawn (${per(forks.open)} tmux processes per pane)`,
        value: ms(s["muxbridge open"].median),
        baseline: ms(s["bare open"].median),
        ratio: ratio(s["muxbridge open"].median, s["bare open"].median),
        goal: "≤ 1.0x",
        ok: s["muxbridge open"].median <= s["bare open"].median,
      },
      {
        bench: life,
        metric: "bare: split-window + kill-pane (2 processes)",
        value: ms(s["bare life"].median),
        baseline: "",
        ratio: "",
        goal: "",
        ok: null,
      },
      {
        bench: life,
        metric: `muxbridge spawn + graceful close (${per(forks.life)} tmux processes per pane)`,
        value: ms(s["muxbridge life"].median),
        baseline: ms(s["bare life"].median),
        ratio: ratio(s["muxbridge life"].median, s["bare life"].median),
        goal: "≤ 1.2x",
        ok: s["muxbridge life"].median <= 1.2 * s["bare life"].median,
      },
      {
        bench: life,
        metric: "closes that needed the kill / closes that failed",
        value: `${tally.killed} / ${tally.errors.length}`,
        baseline: "",
        ratio: "",
        goal: "0 / 0",
        ok: tally.killed === 0 && tally.errors.length === 0,
      },
    ];
  } finally {
    await server.close();
  }
}

if (import.meta.main) {
  console.log(table(await benchPane(Number(Deno.args[0] ?? 30))));
}
