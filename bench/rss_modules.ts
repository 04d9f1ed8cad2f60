/**
 * Diagnostic (not part of `deno task bench`): where an idle bridge's memory goes. Starts a bare
 * process that waits on its stdin (`_rss_probe.ts`) after importing a set of muxbridge's modules,
 * under `deno run` and under `bun run`, and prints its settled RSS next to the bare process's, so
 * the cost of the runtime, of zod, of the bridge's own code and of what lazy loading leaves out
 * can be told apart. Three samples of each, the median printed.
 *
 * Run: `deno run -A bench/rss_modules.ts`
 *
 * @module
 */

import { DENO, pause, ROOT, sampleProc, stats } from "./_harness.ts";

const PROBE = `${ROOT}bench/_rss_probe.ts`;
const BUN = `${ROOT}node_modules/.bin/bun`;

/** Module sets, from nothing to everything main.ts could load. */
const SETS: Array<[string, string, string?]> = [
  ["bare (waits on stdin)", ""],
  ["+ spawn a process and a fetch (runtime features the bridge uses)", "", "spawn,fetch"],
  ["+ zod", "zod"],
  ["+ lib/config.ts (zod schemas)", "../lib/config.ts"],
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

async function rss(argv: string[]): Promise<number> {
  const child = new Deno.Command(argv[0], {
    args: argv.slice(1),
    stdin: "piped",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  try {
    const reader = child.stdout.getReader();
    await reader.read();
    await pause(1500);
    const kib = sampleProc(child.pid).rssKiB;
    reader.releaseLock();
    return kib / 1024;
  } finally {
    await child.stdin.close().catch(() => {});
    await child.status;
    await child.stdout.cancel().catch(() => {});
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
      for (let i = 0; i < 3; i++) samples.push(await rss(argv(modules, features ?? "")));
      const m = stats(samples).median;
      if (modules === "" && !features) bare = m;
      const over = modules === "" && !features ? "" : `+${(m - bare).toFixed(1)}`;
      console.log(`| ${runtime} | ${label} | ${m.toFixed(1)} | ${over} |`);
    }
  }
}
