/**
 * Diagnostic (not part of `deno task bench`): where an idle bridge's memory goes.
 *
 * Part 1 starts a bare process that waits on its stdin (`_rss_probe.ts`) after importing a set
 * of muxbridge's modules, under `deno run` and under `bun run`, and prints its settled RSS next
 * to the bare process's, so the cost of the runtime, of zod, of building zod schemas, of the
 * bridge's own code and of what lazy loading leaves out can be told apart.
 *
 * Part 2 is the Bun binary, built as `deno task build:bun` builds it and with no JIT policy: an
 * idle bridge (tmux backend, no session, on a private tmux server) under each, and with
 * JavaScriptCore's JIT off (`BUN_JSC_useJIT=0`, a JavaScriptCore option Bun reads from the
 * environment), which tells what the JIT costs an idle bridge.
 *
 * Three samples of each, the median printed.
 *
 * Run: `deno run -A bench/rss_modules.ts`
 *
 * @module
 */

import { BUN_JIT_POLICY } from "../scripts/build_release.ts";
import { tmuxBridgeEnv } from "../tests/helpers/real_life.ts";
import { startTmuxServer } from "../tests/helpers/tmux_server.ts";
import { DENO, ROOT, stats } from "./_harness.ts";
import { compileBun, rssAfter } from "./_process.ts";

const PROBE = `${ROOT}bench/_rss_probe.ts`;
const BUN = `${ROOT}node_modules/.bin/bun`;

/** Module sets, from nothing to everything main.ts could load. */
const SETS: Array<[string, string, string?]> = [
  ["bare (waits on stdin)", ""],
  ["+ spawn a process and a fetch (runtime features the bridge uses)", "", "spawn,fetch"],
  ["+ zod (imported, no schema built)", "zod"],
  ["+ zod/mini instead (imported, no schema built)", "zod/mini", "zodjit"],
  [
    "+ one backend's config section (tmux: the first zod schema built)",
    "../backends/tmux/_traits.ts",
  ],
  ["+ every backend's config section (the registry, backends/mod.ts)", "../backends/mod.ts"],
  ["+ the config resolved (lib/config/config.ts, the registry's schema)", "./_rss_config.ts"],
  [
    "+ the config resolved, zod's generated parsers on (its default)",
    "./_rss_config.ts",
    "zodjit",
  ],
  ["+ the bridge command and what it imports", "../lib/cli/commands/bridge.ts"],
  [
    "+ bridge command, tmux backend (what a bridge loads now)",
    "../lib/cli/commands/bridge.ts,../backends/tmux/backend.ts",
  ],
  [
    "+ every command and every backend (what a bridge loaded before)",
    "../lib/cli/commands/mod.ts,../backends/tmux/backend.ts,../backends/zellij/backend.ts,../backends/herdr/backend.ts,../backends/kitty/backend.ts,../backends/cmux/backend.ts",
  ],
];

/** Part 2: the Bun binary's idle bridge with and without the JIT policy, and with no JIT. */
async function bunBinary(): Promise<void> {
  const server = await startTmuxServer();
  const build = await Deno.makeTempDir({ prefix: "muxbridge-bench-jit-" });
  try {
    const dir = `${server.dir}/bridge`;
    await Deno.mkdir(dir);
    const env = await tmuxBridgeEnv(server, dir);
    const bridge = ["bridge", "--url", "http://127.0.0.1:4096", "--dir", dir];
    const withPolicy = await compileBun(`${ROOT}main.ts`, `${build}/muxbridge`);
    const without = await compileBun(`${ROOT}main.ts`, `${build}/muxbridge-no-policy`, {
      jitPolicy: false,
    });
    const sides: Array<[string, string, Record<string, string>]> = [
      [`as built (${BUN_JIT_POLICY})`, withPolicy, env],
      ["no JIT policy", without, env],
      ["no JIT policy, JIT off (BUN_JSC_useJIT=0)", without, { ...env, BUN_JSC_useJIT: "0" }],
    ];
    const samples = new Map<string, number[]>(sides.map(([label]) => [label, []]));
    for (let round = 0; round < 3; round++) {
      for (const [label, bin, e] of sides) {
        samples.get(label)!.push(await rssAfter([bin, ...bridge], e, 1500));
      }
    }
    for (const [label] of sides) {
      const m = stats(samples.get(label)!).median;
      console.log(`| Bun binary | idle bridge (tmux backend), ${label} | ${m.toFixed(1)} | |`);
    }
  } finally {
    await Deno.remove(build, { recursive: true }).catch(() => {});
    await server.close();
  }
}

if (import.meta.main) {
  const runtimes: Array<[string, (mods: string, features: string) => string[]]> = [
    ["deno run", (m, f) => [DENO, "run", "--allow-all", "--quiet", PROBE, m, f]],
    ["bun run", (m, f) => [BUN, "run", PROBE, m, f]],
  ];
  console.log("| runtime | modules | RSS (MiB) | over bare |");
  console.log("|---|---|---|---|");
  for (const [runtime, argv] of runtimes) {
    let bare = 0;
    for (const [label, modules, features] of SETS) {
      const samples: number[] = [];
      for (let i = 0; i < 3; i++) {
        samples.push(await rssAfter(argv(modules, features ?? ""), undefined, 1500));
      }
      const m = stats(samples).median;
      if (modules === "" && !features) bare = m;
      const over = modules === "" && !features ? "" : `+${(m - bare).toFixed(1)}`;
      console.log(`| ${runtime} | ${label} | ${m.toFixed(1)} | ${over} |`);
    }
  }
  await bunBinary();
}
