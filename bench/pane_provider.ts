/**
 * Benchmark: one pane's life (open, then a graceful close) through the pane-provider protocol —
 * the provider backend talking JSON-RPC to the example tmux provider
 * (`examples/providers/tmux/provider.ts`, a long-lived Deno process) — against muxbridge's own
 * tmux backend, on the same private tmux server, in the same run.
 *
 * Both variants run interleaved (round-robin, so load on the machine hits them alike):
 * `backend.spawn` of a `sleep` with a password in its environment, then `closePane` with a
 * 250 ms grace (`bench/_harness.ts` `paneLife`). The provider is started and past its handshake
 * before the first measured round: its start is a one-time cost per bridge, reported on its own.
 *
 * Run: `deno run -A bench/pane_provider.ts [N]`
 *
 * @module
 */

import { createProviderBackend } from "../backends/provider/backend.ts";
import { createTmuxBackend } from "../backends/tmux/backend.ts";
import { createRealClock } from "../lib/sys/clock.ts";
import { resolveConfig } from "../tests/helpers/config.ts";
import { silentLogger } from "../lib/sys/log.ts";
import { startTmuxServer } from "../tests/helpers/tmux_server.ts";
import {
  denoProvider,
  openerWith,
  providerDeps,
  TMUX_PROVIDER,
} from "../tests/backends/provider_fixture.ts";
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

/**
 * Runs the benchmark.
 *
 * @param n Measured panes per variant.
 * @returns The report rows.
 */
export async function benchPaneProvider(n = 30): Promise<Row[]> {
  const server = await startTmuxServer();
  const tmux = createTmuxBackend({
    run: server.runner,
    env: () => undefined,
    clock,
    config: resolveConfig({
      env: () => undefined,
      flags: { tmux: { socket_name: server.socketName, target: server.anchorPane } },
    }),
    identity: { backend: null, layers: [], harness: { name: null } },
    log: silentLogger,
  });
  const provider = createProviderBackend(
    providerDeps(
      denoProvider(TMUX_PROVIDER, ["-L", server.socketName, "--target", server.anchorPane]),
      { command_timeout_ms: 10_000 },
    ),
    { open: openerWith(server.env) },
  );
  try {
    await tmux.probe();
    const t0 = performance.now();
    await provider.probe();
    const startMs = performance.now() - t0;
    const closes: CloseTally<"tmux" | "provider"> = {
      killed: { tmux: 0, provider: 0 },
      errors: [],
    };
    const samples = await interleaved(
      [
        ["tmux backend", paneLife(tmux, server.dir, "tmux", closes)],
        ["provider (tmux example)", paneLife(provider, server.dir, "provider", closes)],
      ],
      n,
      3,
    );
    for (const e of closes.errors) console.error(`close failed: ${e}`);
    const base = stats(samples.get("tmux backend")!);
    const via = stats(samples.get("provider (tmux example)")!);
    const bench = `pane open+close via provider (N=${n})`;
    return [
      {
        bench,
        metric: "tmux backend (baseline)",
        value: ms(base.median),
        baseline: "",
        ratio: "",
        goal: "",
        ok: null,
      },
      {
        bench,
        metric: "provider backend → example tmux provider (JSON-RPC over a pipe)",
        value: ms(via.median),
        baseline: ms(base.median),
        ratio: ratio(via.median, base.median),
        goal: "",
        ok: null,
      },
      {
        bench,
        metric: "provider start + handshake, once per bridge (Deno)",
        value: ms(startMs),
        baseline: "",
        ratio: "",
        goal: "",
        ok: null,
      },
      closeTallyRow(bench, closes),
    ];
  } finally {
    await provider.dispose?.();
    await server.close();
  }
}

if (import.meta.main) {
  console.log(table(await benchPaneProvider(Number(Deno.args[0] ?? 30))));
}
