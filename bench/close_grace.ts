/**
 * Benchmark: how long a graceful close takes when the pane's program exits on Ctrl+C at once,
 * against the configured grace period (the close must not wait it out), and when the program
 * ignores Ctrl+C (the close then waits the grace, kills and verifies).
 *
 * Each close runs `closePane` through the tmux backend on a private server, with the program's
 * pid and start stamp recorded as the bridge records them.
 *
 * Run: `deno run -A bench/close_grace.ts [N]`
 *
 * @module
 */

import { createRealClock, waitFor } from "../lib/sys/clock.ts";
import { closePane } from "../lib/session/close_pane.ts";
import { createProcesses } from "../lib/sys/processes.ts";
import { startTmuxServer } from "../tests/helpers/tmux_server.ts";
import { ms, ratio, type Row, stats, table } from "./_harness.ts";
import { benchBackend } from "./pane_tmux.ts";
import { validateSessionId } from "../lib/sys/validate.ts";

const clock = createRealClock();
const processes = createProcesses();

/**
 * Runs the benchmark.
 *
 * @param n Closes per case.
 * @returns The report rows.
 */
export async function benchCloseGrace(n = 15): Promise<Row[]> {
  const server = await startTmuxServer();
  const rows: Row[] = [];
  try {
    const cases = [
      { program: ["sleep", "100000"], what: "exits on Ctrl+C", grace: 250 },
      { program: ["sleep", "100000"], what: "exits on Ctrl+C", grace: 2000 },
      {
        program: ["sh", "-c", "trap '' INT; exec sleep 100000"],
        what: "ignores Ctrl+C",
        grace: 250,
      },
    ];
    {
      const backend = benchBackend(server, { forks: 0 });
      await backend.probe();
      for (const c of cases) {
        const samples: number[] = [];
        let killed = 0;
        for (let i = 0; i < n + 2; i++) {
          const { paneId, pid } = await backend.spawn({
            sessionId: validateSessionId("ses_grace"),
            title: "grace",
            argv: c.program,
            cwd: server.dir,
            env: {},
            owner: "cli",
          });
          if (c.what === "ignores Ctrl+C" && pid !== undefined) {
            // Close only once the trap is in place (SIGINT ignored), or the shell may still die
            // of the interrupt.
            const ignoresInt = () => {
              try {
                const m = /SigIgn:\s+([0-9a-f]+)/.exec(
                  Deno.readTextFileSync(`/proc/${pid}/status`),
                );
                return m !== null && (BigInt(`0x${m[1]}`) & 2n) !== 0n;
              } catch {
                return false;
              }
            };
            await waitFor(clock, ignoresInt, { deadline: clock.now() + 2000 });
          }
          const start = performance.now();
          const r = await closePane(backend, paneId, {
            graceMs: c.grace,
            clock,
            processes,
            ...(pid !== undefined ? { pid, pidStart: processes.startTime(pid) } : {}),
          });
          if (i >= 2) {
            samples.push(performance.now() - start);
            if (r.killed) killed++;
          }
        }
        const st = stats(samples);
        const quick = c.what === "exits on Ctrl+C";
        rows.push({
          bench: `close latency (N=${n})`,
          metric: `program ${c.what}, grace ${c.grace} ms (${killed} killed)`,
          value: ms(st.median),
          baseline: ms(c.grace),
          ratio: ratio(st.median, c.grace),
          goal: quick ? "≤ 0.5x grace" : "≈ grace + kill",
          ok: quick ? st.median <= c.grace / 2 && killed === 0 : killed === n,
        });
      }
    }
  } finally {
    await server.close();
  }
  return rows;
}

if (import.meta.main) {
  console.log(table(await benchCloseGrace(Number(Deno.args[0] ?? 15))));
}
