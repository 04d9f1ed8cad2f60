/**
 * Benchmark (not a test): cold start of muxbridge. For each command, N runs of
 * `muxbridge --version` (spawn to exit) and of `muxbridge bridge` (spawn to its `ready` line on
 * stdout, then end of input), reporting min / median / p90 in milliseconds. The bridge runs with
 * `MUXBRIDGE_BACKEND=none` in a temporary HOME, so it touches no multiplexer.
 *
 * Run: `./node_modules/.bin/deno run --allow-all scripts/bench_startup.ts [N] [-- CMD...]`
 * (default N 20, CMD `dist/muxbridge`; e.g. `-- deno run -A main.ts` for the development path).
 *
 * @module
 */

import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";

const argv = process.argv.slice(2);
const dash = argv.indexOf("--");
const n = Number(argv[0] && argv[0] !== "--" ? argv[0] : 20);
const cmd = dash >= 0 ? argv.slice(dash + 1) : ["dist/muxbridge"];
const home = mkdtempSync(join(tmpdir(), "muxbridge-bench-"));
const env = {
  PATH: process.env.PATH ?? "/usr/bin:/bin",
  HOME: home,
  XDG_CONFIG_HOME: join(home, "config"),
  XDG_STATE_HOME: join(home, "state"),
  MUXBRIDGE_BACKEND: "none",
};

/** Milliseconds from spawn until `done` resolves. */
function time(args: string[], untilReady: boolean): Promise<number> {
  return new Promise((resolve, reject) => {
    const start = performance.now();
    const child = spawn(cmd[0], [...cmd.slice(1), ...args], {
      env,
      stdio: [untilReady ? "pipe" : "ignore", "pipe", "ignore"],
    });
    let buf = "";
    let readyAt: number | null = null;
    child.stdout?.on("data", (chunk: Uint8Array) => {
      if (readyAt !== null) return;
      buf += new TextDecoder().decode(chunk);
      if (untilReady && buf.includes("\n")) {
        readyAt = performance.now() - start;
        if (!buf.startsWith('{"type":"ready"')) reject(new Error(`first line: ${buf}`));
        child.stdin?.end();
      }
    });
    child.on("error", reject);
    child.on("close", (code) => {
      if (code !== 0) return reject(new Error(`${args.join(" ")} exited ${code}`));
      resolve(untilReady ? readyAt ?? NaN : performance.now() - start);
    });
  });
}

function stats(samples: number[]): string {
  const s = [...samples].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.floor(q * s.length))];
  return `min ${s[0].toFixed(0)}  median ${at(0.5).toFixed(0)}  p90 ${at(0.9).toFixed(0)} ms`;
}

try {
  if (cmd.length === 1) {
    process.stdout.write(`${cmd[0]}: ${(statSync(cmd[0]).size / 1e6).toFixed(1)} MB\n`);
  }
  for (
    const [label, args, ready] of [
      ["--version", ["--version"], false],
      ["bridge → ready", ["bridge"], true],
    ] as const
  ) {
    await time([...args], ready); // warm the page cache once
    const samples: number[] = [];
    for (let i = 0; i < n; i++) samples.push(await time([...args], ready));
    process.stdout.write(`${cmd.join(" ")} ${label}: ${stats(samples)} (${n} runs)\n`);
  }
} finally {
  rmSync(home, { recursive: true, force: true });
}
