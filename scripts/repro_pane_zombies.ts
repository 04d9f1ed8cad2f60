/**
 * Reproduction (not a test): do closed panes leave zombies, and whose are they? Opens pairs of
 * panes running the real `opencode attach` (a real `opencode serve` on loopback with the tests'
 * mock model, a private tmux server), closes them, and watches each pane program in `/proc`
 * every 20 ms: its state, its thread count, and when it disappears (is reaped). Prints one line
 * per program and a summary; `docs/zombies.md` explains what it shows.
 *
 * Run: `./node_modules/.bin/deno run -A scripts/repro_pane_zombies.ts [--rounds N] [--manual]
 * [--strace FILE]`
 *
 * - `--manual`: close without muxbridge, the way its close does it by hand (Ctrl+C, grace,
 *   `kill-pane`, SIGTERM to the surviving program's group), to show the result is tmux's.
 * - `--strace FILE`: trace the tmux server's `wait4` calls and the SIGCHLDs it gets.
 *
 * @module
 */

import { parseArgs } from "node:util";
import { runCli } from "../tests/helpers/cli_process.ts";
import { startOpencodeServer } from "../tests/helpers/opencode_server.ts";
import { startTmuxServer } from "../tests/helpers/tmux_server.ts";

const args = parseArgs({
  args: Deno.args,
  options: {
    rounds: { type: "string", default: "8" },
    manual: { type: "boolean", default: false },
    strace: { type: "string" },
  },
});
const rounds = Number(args.values.rounds);
const t0 = performance.now();
const ms = () => Math.round(performance.now() - t0);
const sleep = (n: number) => new Promise((r) => setTimeout(r, n));

/** `Z/1`: state and thread count of a process, or null once it is gone (reaped). */
function stateOf(pid: number): string | null {
  try {
    const status = Deno.readTextFileSync(`/proc/${pid}/status`);
    return `${/State:\s+(\S)/.exec(status)?.[1]}/${/Threads:\s+(\d+)/.exec(status)?.[1]}`;
  } catch {
    return null;
  }
}

/** What was seen of one pane program. */
interface Watched {
  pane: string;
  pid: number;
  closedAt?: number;
  /** First seen as a zombie with its last thread gone (only its parent can remove it now). */
  deadAt?: number;
  goneAt?: number;
}

const watched: Watched[] = [];
let sampling = true;
let stoppedAt = 0;
const sampler = (async () => {
  while (sampling) {
    for (const w of watched) {
      if (w.goneAt !== undefined) continue;
      const s = stateOf(w.pid);
      if (s === null) w.goneAt = ms();
      else if (s === "Z/1" && w.deadAt === undefined) w.deadAt = ms();
    }
    await sleep(20);
  }
})();

const tmux = await startTmuxServer({ width: 200, height: 50 });
const strace = args.values.strace
  ? new Deno.Command("strace", {
    args: ["-tt", "-e", "trace=wait4", "-e", "signal=SIGCHLD", "-o", args.values.strace, "-p"]
      .concat(String(tmux.serverPid)),
    stdout: "null",
    stderr: "null",
  }).spawn()
  : null;
const server = await startOpencodeServer({ tmux, tmuxWindow: false });
try {
  const config = `${tmux.dir}/config.json`;
  await Deno.writeTextFile(
    config,
    JSON.stringify({
      backend: "tmux",
      tmux: { socket_name: tmux.socketName, target: tmux.anchorPane },
      opencode_bin: server.bin,
    }),
  );
  const env = {
    ...tmux.env,
    LANG: "C.UTF-8",
    MUXBRIDGE_CONFIG: config,
    MUXBRIDGE_STATE_DIR: `${tmux.dir}/state`,
  };
  const parent = await server.createSession({ title: "zombie parent" });
  for (let round = 0; round < rounds; round++) {
    const panes: Watched[] = [];
    for (const title of ["child one", "child two"]) {
      const child = await server.createSession({ title, parentID: parent.id });
      const r = await runCli([
        "spawn",
        "--session",
        child.id,
        "--url",
        server.url,
        "--dir",
        server.project,
        "--json",
      ], { env });
      if (r.code !== 0) throw new Error(r.stderr);
      const pane = JSON.parse(r.stdout).paneId as string;
      const pid = Number(
        (await tmux.tmux(["display-message", "-p", "-t", pane, "#{pane_pid}"])).trim(),
      );
      panes.push({ pane, pid });
    }
    // Let both TUIs start and draw.
    for (const p of panes) {
      for (let i = 0; i < 100; i++) {
        if (/child (one|two)/.test(await tmux.tmux(["capture-pane", "-p", "-t", p.pane]))) break;
        await sleep(100);
      }
    }
    watched.push(...panes);
    for (const p of panes) {
      if (args.values.manual) {
        await tmux.tmux(["send-keys", "-t", p.pane, "C-c"]);
        await sleep(250);
        await tmux.run(["kill-pane", "-t", p.pane]);
        await sleep(100);
        try {
          Deno.kill(-p.pid, "SIGTERM");
        } catch { /* gone */ }
      } else {
        const r = await runCli(["close", p.pane], { env });
        if (r.code !== 0) throw new Error(r.stderr);
      }
      p.closedAt = ms();
    }
    await sleep(3000);
  }
  await sleep(2000);
} finally {
  sampling = false;
  await sampler;
  stoppedAt = ms();
  strace?.kill("SIGINT");
  await strace?.status;
  await server.close();
  await tmux.close();
}

let late = 0;
for (const w of watched) {
  const zombie = w.deadAt !== undefined ? (w.goneAt ?? stoppedAt) - w.deadAt : 0;
  if (zombie > 100) late++;
  console.log(
    `${w.pane} pid ${w.pid}: closed at ${w.closedAt} ms; a zombie (last thread gone) from ${
      w.deadAt ?? "-"
    } ms; reaped at ${w.goneAt ?? "never (tmux server stopped first)"} ms` +
      (zombie > 100 ? `  <- unreaped for ${zombie} ms` : ""),
  );
}
console.log(
  `${watched.length} pane programs closed ${
    args.values.manual ? "by hand (no muxbridge)" : "by `muxbridge close`"
  }; ${late} stayed zombies for more than 100 ms`,
);
