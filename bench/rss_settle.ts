/**
 * Diagnostic (not part of `deno task bench`): how an idle bridge's RSS moves after start-up,
 * against a bare process of the same runtime waiting on its stdin. `bench/idle.ts` samples 3 s
 * after each process answered; this one samples the four processes of its memory rows (`deno run`
 * and the Bun binary, bare and bridge, tmux backend, no session) side by side, 3 to 60 s after
 * they answered, to show whether the runtime gives start-up's memory back while idle.
 *
 * Run: `deno run -A bench/rss_settle.ts`
 *
 * @module
 */

import { tmuxBridgeEnv } from "../tests/helpers/real_life.ts";
import { startTmuxServer } from "../tests/helpers/tmux_server.ts";
import { DENO, pause, ROOT, sampleProc } from "./_harness.ts";
import { compileBun, startAnswered, stopAnswered } from "./_process.ts";

/** Seconds after the first stdout line at which RSS is read. */
const AT = [3, 10, 20, 30, 45, 60];

if (import.meta.main) {
  const server = await startTmuxServer();
  const build = await Deno.makeTempDir({ prefix: "muxbridge-bench-settle-" });
  const children: Deno.ChildProcess[] = [];
  try {
    const dir = `${server.dir}/bridge`;
    await Deno.mkdir(dir);
    const env = await tmuxBridgeEnv(server, dir);
    const bridgeArgs = ["bridge", "--url", "http://127.0.0.1:4096", "--dir", dir];
    const sides: Array<[string, string[]]> = [
      ["deno run: bare", [DENO, "run", "--quiet", `${ROOT}bench/_bare_reader.ts`]],
      ["deno run: bridge", [
        DENO,
        "run",
        "--allow-all",
        "--quiet",
        `${ROOT}main.ts`,
        ...bridgeArgs,
      ]],
      ["Bun binary: bare", [await compileBun(`${ROOT}bench/_bare_reader.ts`, `${build}/bare`)]],
      [
        "Bun binary: bridge",
        [await compileBun(`${ROOT}main.ts`, `${build}/muxbridge`), ...bridgeArgs],
      ],
    ];
    // One start of each `deno run` side first: its HOME is fresh, and a start that transpiles
    // (the emit cache is per HOME) is not what an idle bridge looks like.
    for (const [, argv] of sides.slice(0, 2)) await stopAnswered(await startAnswered(argv, env));
    const rows: string[] = [];
    const started = await Promise.all(sides.map(async ([label, argv]) => {
      const child = await startAnswered(argv, env);
      children.push(child);
      return { label, pid: child.pid, at: performance.now() };
    }));
    const rss: string[][] = started.map(() => []);
    for (const s of AT) {
      for (const [i, p] of started.entries()) {
        await pause(Math.max(0, p.at + s * 1000 - performance.now()));
        rss[i].push((sampleProc(p.pid).rssKiB / 1024).toFixed(1));
      }
    }
    rows.push(`| process | ${AT.map((s) => `${s} s`).join(" | ")} |`);
    rows.push(`|---|${AT.map(() => "---").join("|")}|`);
    for (const [i, p] of started.entries()) rows.push(`| ${p.label} | ${rss[i].join(" | ")} |`);
    console.log(rows.join("\n"));
  } finally {
    for (const child of children) await stopAnswered(child);
    await Deno.remove(build, { recursive: true }).catch(() => {});
    await server.close();
  }
}
