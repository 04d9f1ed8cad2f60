/**
 * A private GNU screen session for tests: its own `SCREENDIR` (mode 0700) and `HOME`, a unique
 * session name, one window running `sleep` (the user's). `close()` always ends the session
 * (`-X quit`), ends every program a provider recorded a pid for, and removes the directories.
 *
 * @module
 */

import { createRealClock, waitFor } from "../../lib/sys/clock.ts";
import { createRunner, type RunResult } from "../../lib/sys/exec.ts";

/** A running private screen session. */
export interface ScreenSession {
  /** The session name (for `screen -S`). */
  name: string;
  /** A scratch directory removed by `close()`. */
  dir: string;
  /** A private directory for the provider's state (`--state-dir`). */
  stateDir: string;
  /** The variables every screen call (and the provider) needs: `HOME`, `SCREENDIR`. */
  env: Readonly<Record<string, string>>;
  /** Runs `screen -S <name> …args`; resolves for any exit code. */
  run(args: readonly string[]): Promise<RunResult>;
  /** The numbers of the session's windows. */
  windows(): Promise<string[]>;
  /** Quits the session and starts a new one of the same name (window numbers start again). */
  restart(): Promise<void>;
  /** Opens a window of the user's running `sleep 424242`: its number and the program's pid. */
  userWindow(): Promise<{ paneId: string; pid: number }>;
  /** Ends the session and everything recorded in the state directory; removes the directories. */
  close(): Promise<void>;
}

const run = createRunner();
const clock = createRealClock();

/**
 * Starts a detached screen session with one window.
 *
 * @returns The session; always `await session.close()`.
 */
export async function startScreenSession(): Promise<ScreenSession> {
  const base = await Deno.makeTempDir({ prefix: "muxbridge-screen-" });
  const home = `${base}/home`;
  const screendir = `${base}/sd`;
  const dir = `${base}/work`;
  const stateDir = `${base}/state`;
  for (const d of [home, screendir, dir]) await Deno.mkdir(d, { mode: 0o700 });
  await Deno.chmod(screendir, 0o700);
  const name = `mbx${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`;
  const env = { HOME: home, SCREENDIR: screendir, STY: "", WINDOW: "" };
  const screen = (args: readonly string[]) =>
    run(["screen", "-S", name, ...args], { timeoutMs: 30_000, env });
  const windows = async () => {
    const r = await screen(["-Q", "windows", "%n "]);
    return r.code === 0 ? r.stdout.trim().split(/\s+/).filter((w) => w !== "") : [];
  };
  const userPids: number[] = [];
  const close = async () => {
    await screen(["-X", "quit"]).catch(() => {});
    for (const pid of userPids) {
      try {
        Deno.kill(pid, "SIGKILL");
      } catch { /* gone */ }
    }
    try {
      for await (const e of Deno.readDir(stateDir)) {
        if (!e.name.endsWith(".pid")) continue;
        const pid = Number(await Deno.readTextFile(`${stateDir}/${e.name}`));
        try {
          Deno.kill(-pid, "SIGKILL");
        } catch { /* gone */ }
      }
    } catch { /* no state */ }
    await Deno.remove(base, { recursive: true }).catch(() => {});
  };
  const start = async () => {
    const started = await run(["screen", "-S", name, "-dm", "sh", "-c", "exec sleep 100000"], {
      timeoutMs: 30_000,
      env,
    });
    if (started.code !== 0) throw new Error(`screen -dm exited ${started.code}: ${started.stdout}`);
    const up = await waitFor(clock, async () => (await windows()).length > 0, {
      deadline: clock.now() + 60_000,
    });
    if (!up) throw new Error(`screen session ${name} did not come up`);
  };
  const restart = async () => {
    await screen(["-X", "quit"]);
    await waitFor(clock, async () => (await windows()).length === 0, {
      deadline: clock.now() + 10_000,
    });
    await start();
  };
  let users = 0;
  const userWindow = async () => {
    // A script file, so that screen's own parser never sees `$$`.
    const script = `${base}/user-${++users}.sh`;
    const pidFile = `${script}.pid`;
    await Deno.writeTextFile(script, `echo $$ > '${pidFile}'\nexec sleep 424242\n`);
    const before = new Set(await windows());
    await screen(["-X", "screen", "/bin/sh", script]);
    let found: { paneId: string; pid: number } | undefined;
    await waitFor(clock, async () => {
      const paneId = (await windows()).find((w) => !before.has(w));
      const pid = Number(await Deno.readTextFile(pidFile).catch(() => ""));
      if (paneId !== undefined && pid > 0) found = { paneId, pid };
      return found !== undefined;
    }, { deadline: clock.now() + 10_000 });
    if (!found) throw new Error("the user's window did not come up");
    userPids.push(found.pid);
    return found;
  };
  try {
    await start();
  } catch (err) {
    await close();
    throw err;
  }
  return { name, dir, stateDir, env, run: screen, windows, restart, userWindow, close };
}
