/**
 * Benchmark (not a test): cold start of muxbridge. For each command, N runs of
 * `muxbridge --version` (spawn to exit) and of `muxbridge bridge` (spawn to its `ready` line on
 * stdout, then end of input), reporting min / median / p90 wall time in milliseconds. The bridge
 * runs with `MUXBRIDGE_BACKEND=none` in a temporary HOME, so it touches no multiplexer.
 *
 * Run: `./node_modules/.bin/deno run --allow-all scripts/bench_startup.ts [N] [--write] [-- CMD...]`
 * (default N 20, CMD `dist/muxbridge`; e.g. `-- deno run -A main.ts` for the development path).
 *
 * `--write` measures the binary (`dist/muxbridge`, built first with `deno task build:bun`) and
 * the development path (`deno run -A main.ts`), and rewrites the `startup` block of
 * docs/performance.md with the numbers, the date, the machine, its load and this command: the
 * start-up figures come from here and nowhere else.
 *
 * @module
 */

import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import os, { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { writeDocBlock } from "./_readme_blocks.ts";

/** The command that rewrites the `startup` block (shown in it). */
export const WRITE_COMMAND = "./node_modules/.bin/deno run -A scripts/bench_startup.ts --write";

/** min / median / p90 of samples, in ms. */
export interface Stats {
  /** Fastest run. */
  min: number;
  /** Median run. */
  median: number;
  /** 90th percentile. */
  p90: number;
  /** Runs. */
  n: number;
}

/**
 * Summarises samples.
 *
 * @param samples Milliseconds.
 * @returns min, median, p90.
 */
export function stats(samples: readonly number[]): Stats {
  const s = [...samples].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.floor(q * s.length))];
  return { min: s[0], median: at(0.5), p90: at(0.9), n: s.length };
}

/**
 * Formats stats as one table cell.
 *
 * @param st The stats.
 * @returns `median X ms (min Y, p90 Z; N runs)`.
 */
export function cellOf(st: Stats): string {
  const ms = (v: number) => v.toFixed(0);
  return `median ${ms(st.median)} ms (min ${ms(st.min)}, p90 ${ms(st.p90)}; ${st.n} runs)`;
}

/** Milliseconds from spawn until exit, or until the first stdout line (`untilReady`). */
function time(
  cmd: readonly string[],
  args: string[],
  untilReady: boolean,
  env: Record<string, string>,
): Promise<number> {
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

/**
 * Measures `--version` and `bridge` → `ready` of one command, each after one warm-up run.
 *
 * @param cmd The muxbridge command (binary, or `deno run -A main.ts`).
 * @param n Runs of each.
 * @returns The stats of both.
 */
export async function measure(
  cmd: readonly string[],
  n: number,
): Promise<{ version: Stats; ready: Stats }> {
  const home = mkdtempSync(join(tmpdir(), "muxbridge-bench-"));
  const env = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: home,
    XDG_CONFIG_HOME: join(home, "config"),
    XDG_STATE_HOME: join(home, "state"),
    MUXBRIDGE_BACKEND: "none",
  };
  try {
    const out: Record<string, Stats> = {};
    for (
      const [label, args, ready] of [["version", ["--version"], false], [
        "ready",
        ["bridge"],
        true,
      ]] as const
    ) {
      await time(cmd, [...args], ready, env); // warm the page cache once
      const samples: number[] = [];
      for (let i = 0; i < n; i++) samples.push(await time(cmd, [...args], ready, env));
      out[label] = stats(samples);
    }
    return { version: out.version, ready: out.ready };
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

/** `bun 1.4.5`: what `version --json` says the binary runs on. */
async function runtimeOf(bin: string): Promise<string> {
  const out = await new Deno.Command(bin, { args: ["version", "--json"], stdout: "piped" })
    .output();
  return JSON.parse(new TextDecoder().decode(out.stdout)).runtime;
}

async function write(n: number): Promise<void> {
  const bin = "dist/muxbridge";
  const size = statSync(bin).size;
  const runtime = await runtimeOf(bin);
  const dev = [Deno.execPath(), "run", "-A", "main.ts"];
  const load = () => os.loadavg().slice(0, 1)[0].toFixed(1);
  const before = load();
  const started = new Date();
  const binary = await measure([bin], n);
  const source = await measure(dev, n);
  const after = load();
  const cpu = os.cpus();
  const body = [
    `Measured ${
      started.toISOString().slice(0, 16)
    }Z by \`${WRITE_COMMAND}\` (after \`npx deno task build:bun\`)`,
    `on ${
      cpu[0]?.model.trim() ?? "an unknown CPU"
    } × ${cpu.length}, ${os.platform()} ${os.arch()}; load average ${before} before, ${after} after`,
    `(wall times on a machine shared with other jobs are inflated by its load). Each run is timed from spawn to exit,`,
    `or to the first stdout line for \`bridge\`, after one warm-up run; \`MUXBRIDGE_BACKEND=none\`, a temporary HOME.`,
    "",
    "| what | number |",
    "|---|---|",
    `| \`dist/muxbridge\` size (${os.platform()}-${os.arch()}, ${runtime}) | ${
      (size / 1e6).toFixed(1)
    } MB |`,
    `| \`muxbridge --version\` | ${cellOf(binary.version)} |`,
    `| \`muxbridge bridge\` until its \`ready\` line | ${cellOf(binary.ready)} |`,
    `| for scale: \`deno run -A main.ts --version\` | ${cellOf(source.version)} |`,
    `| for scale: \`deno run -A main.ts bridge\` until \`ready\` | ${cellOf(source.ready)} |`,
  ].join("\n");
  const { file, changed } = writeDocBlock("startup", body);
  console.log(body);
  console.log(changed ? `\n${file}: startup block rewritten` : `\n${file}: unchanged`);
}

if (import.meta.main) {
  const argv = process.argv.slice(2);
  const dash = argv.indexOf("--");
  const own = dash >= 0 ? argv.slice(0, dash) : argv;
  const n = Number(own.find((a) => /^\d+$/.test(a)) ?? 20);
  if (own.includes("--write")) {
    await write(n);
  } else {
    const cmd = dash >= 0 ? argv.slice(dash + 1) : ["dist/muxbridge"];
    if (cmd.length === 1) {
      process.stdout.write(`${cmd[0]}: ${(statSync(cmd[0]).size / 1e6).toFixed(1)} MB\n`);
    }
    const r = await measure(cmd, n);
    process.stdout.write(`${cmd.join(" ")} --version: ${cellOf(r.version)}\n`);
    process.stdout.write(`${cmd.join(" ")} bridge → ready: ${cellOf(r.ready)}\n`);
  }
}
