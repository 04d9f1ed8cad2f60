/**
 * A private, headless kitty for tests: `xvfb-run` starts its own X server, kitty runs with remote
 * control on and listens on a socket in a temporary directory, with its own HOME, XDG dirs and
 * TMPDIR and no config file. Everything runs in one new session (`setsid`), so `close()` stops
 * kitty and Xvfb together, after killing whatever the windows still run (a program that ignores
 * SIGHUP would otherwise outlive kitty), and removes the temporary directory.
 *
 * What it needs on PATH is {@linkcode KITTY_TOOLS}, for `requires` (tests/helpers/requires.ts).
 *
 * @module
 */

import { existsSync } from "node:fs";
import { createRealClock, waitFor } from "../../lib/sys/clock.ts";
import { createRunner, type Runner, type RunResult } from "../../lib/sys/exec.ts";
import { createProcesses } from "../../lib/sys/processes.ts";
import { silentLogger } from "../../lib/sys/log.ts";
import { createKittyCommand } from "../../backends/kitty/_command.ts";
import { resolveConfig } from "./config.ts";
import { type Requirement, tool } from "./requires.ts";

/** Options of {@linkcode startKittyServer}. */
export interface KittyServerOptions {
  /** `enabled_layouts` (the first is the initial layout). @default kitty's default (all) */
  layouts?: readonly string[];
  /** The anchor window's program. @default ["sleep", "100000"] */
  program?: readonly string[];
  /** How long kitty may take to answer (a ceiling for a hung start). @default 60000 */
  startMs?: number;
}

/** A running private kitty. */
export interface KittyServer {
  /** The remote-control address (`unix:<socket>`), for config `kitty.listen_on`. */
  address: string;
  /** The first window's id (the anchor). */
  anchorWindow: string;
  /** A scratch directory removed by `close()`. */
  dir: string;
  /** Variables every call gets (HOME, XDG dirs). */
  env: Readonly<Record<string, string>>;
  /** The real runner with {@linkcode KittyServer.env} added. */
  runner: Runner;
  /** Runs `kitty @ --to <address> …args`; resolves for any exit code. */
  rc(args: readonly string[]): Promise<RunResult>;
  /** The ids of the windows that exist now. */
  windowIds(): Promise<string[]>;
  /** Closes every window but the anchor and waits until they are gone (bounded). */
  closeOthers(): Promise<void>;
  /**
   * Stops kitty (its windows' programs first) and starts a new one on the same address: window
   * ids count from 1 again ({@linkcode KittyServer.anchorWindow} is the new first window).
   */
  restart(): Promise<void>;
  /** Stops kitty and Xvfb and removes the directory. */
  close(): Promise<void>;
  /** Kills kitty's process group and removes the directory at once (for `unload`). */
  killSync(): void;
}

/** What live kitty tests need on PATH (for `requires`). */
export const KITTY_TOOLS: readonly Requirement[] = [
  tool("kitty", "apt-get install -y kitty"),
  tool("xvfb-run", "apt-get install -y xvfb"),
  tool("xauth", "apt-get install -y xauth"),
  tool("setsid", "apt-get install -y util-linux"),
];

const clock = createRealClock();

/** Live processes (not zombies) whose command line mentions `marker` (a unique temp dir). */
function processesOf(marker: string): number[] {
  const found: number[] = [];
  for (const e of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(e.name) || Number(e.name) === Deno.pid) continue;
    try {
      const cmdline = Deno.readTextFileSync(`/proc/${e.name}/cmdline`);
      if (cmdline.includes(marker) && createProcesses().alive(Number(e.name))) {
        found.push(Number(e.name));
      }
    } catch { /* gone */ }
  }
  return found;
}

/** Reads window ids (and their pids) from `ls` JSON without keeping anything else. */
function windowsOf(stdout: string): Array<{ id: string; pid?: number }> {
  const out: Array<{ id: string; pid?: number }> = [];
  for (const os of JSON.parse(stdout) as Array<{ tabs: Array<{ windows: unknown[] }> }>) {
    for (const tab of os.tabs) {
      for (const w of tab.windows as Array<{ id: number; pid?: number }>) {
        out.push({ id: String(w.id), pid: w.pid });
      }
    }
  }
  return out;
}

/**
 * Starts a private kitty and waits until its remote control answers.
 *
 * @param options Layouts, anchor program, start bound.
 * @returns The server; always `await server.close()`.
 */
export async function startKittyServer(options: KittyServerOptions = {}): Promise<KittyServer> {
  const base = await Deno.makeTempDir({ prefix: "muxbridge-kitty-" });
  const dirs = ["home", "config", "runtime", "cache", "tmp", "work"].map((d) => `${base}/${d}`);
  await Promise.all(dirs.map((d) => Deno.mkdir(d, { mode: 0o700 })));
  const [home, config, runtime, cache, tmp, dir] = dirs;
  const socket = `${base}/kitty.sock`;
  const address = `unix:${socket}`;
  const env: Record<string, string> = {
    HOME: home,
    XDG_CONFIG_HOME: config,
    XDG_RUNTIME_DIR: runtime,
    XDG_CACHE_HOME: cache,
    // xvfb-run keeps its Xauthority under $TMPDIR: removed with the base directory.
    TMPDIR: tmp,
    LIBGL_ALWAYS_SOFTWARE: "1",
    KITTY_LISTEN_ON: "",
    KITTY_WINDOW_ID: "",
  };
  const real = createRunner();
  const runner: Runner = (argv, opts) => real(argv, { ...opts, env: { ...env, ...opts.env } });
  // The backend's own runner: over the socket where it carries the call (a `kitty @` start costs
  // 0.3-0.6 s of CPU on 0.26.5), `kitty @` otherwise and while nothing listens yet.
  const command = createKittyCommand({
    run: runner,
    env: (name) => env[name],
    clock,
    config: resolveConfig({
      env: () => undefined,
      flags: {
        backend: "kitty",
        command_timeout_ms: 30_000,
        kitty: { bin: "kitty", listen_on: address },
      },
    }),
    identity: { backend: "kitty", layers: [], harness: { name: null } },
    log: silentLogger,
  });
  const rc = (args: readonly string[]): Promise<RunResult> =>
    command.rc(args).catch((err: Error) => ({ code: 1, stdout: "", stderr: err.message }));
  const layouts = options.layouts ? ["-o", `enabled_layouts=${options.layouts.join(",")}`] : [];
  const args = [
    "xvfb-run",
    "-a",
    "-s",
    "-screen 0 1280x800x24",
    "kitty",
    "--config",
    "NONE",
    "-o",
    "allow_remote_control=yes",
    ...layouts,
    "--listen-on",
    address,
    "--directory",
    dir,
    ...(options.program ?? ["sleep", "100000"]),
  ];
  // One kitty (with its xvfb-run and Xvfb) at a time; `restart` starts another.
  let run!: { group: number; exited: boolean; status: Promise<Deno.CommandStatus> };
  const launch = () => {
    // setsid: kitty, xvfb-run and Xvfb share one new process group, stopped as one.
    const child = new Deno.Command("setsid", {
      args,
      env,
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).spawn();
    const current = { group: child.pid, exited: false, status: child.status };
    current.status = child.status.then((s) => {
      current.exited = true;
      return s;
    });
    run = current;
  };
  const signalGroup = (sig: Deno.Signal) => {
    try {
      Deno.kill(-run.group, sig);
    } catch { /* gone */ }
  };
  const windowIds = async () => {
    const r = await rc(["ls"]);
    if (r.code !== 0) throw new Error(`kitty @ ls exited ${r.code}: ${r.stderr}`);
    return windowsOf(r.stdout).map((w) => w.id);
  };
  let anchorWindow = "";
  const closeOthers = async () => {
    const listed = await rc(["ls"]);
    if (listed.code !== 0) throw new Error(`kitty @ ls exited ${listed.code}: ${listed.stderr}`);
    const others = windowsOf(listed.stdout).filter((w) => w.id !== anchorWindow);
    if (others.length === 0) return;
    for (const w of others) {
      // A program that ignores SIGHUP would outlive its window: end it as well.
      if (w.pid && w.pid > 1) {
        try {
          Deno.kill(-w.pid, "SIGKILL");
        } catch { /* gone */ }
      }
      await rc(["close-window", `--match=id:${w.id}`]);
    }
    await waitFor(clock, async () => (await windowIds()).every((id) => id === anchorWindow), {
      deadline: clock.now() + 5000,
      maxIntervalMs: 100,
    });
  };
  /** Stops the running kitty and everything it started. */
  const stop = async () => {
    // Window programs run in sessions of their own (one pty each): end them first.
    const listed = await rc(["ls"]).catch(() => undefined);
    if (listed?.code === 0) {
      for (const w of windowsOf(listed.stdout)) {
        if (w.pid && w.pid > 1) {
          try {
            Deno.kill(-w.pid, "SIGKILL");
          } catch { /* gone */ }
        }
      }
    }
    signalGroup("SIGTERM");
    const stopped = await waitFor(clock, () => run.exited, { deadline: clock.now() + 5000 });
    if (!stopped) signalGroup("SIGKILL");
    await run.status;
    // Xvfb and kitty are in the same group; make sure none is left.
    const group = run.group;
    await waitFor(clock, () => !createProcesses().alive(group), { deadline: clock.now() + 2000 });
    signalGroup("SIGKILL");
    // kitty 0.26 forks a prewarm process into a session of its own, outside the group; it and
    // any window program that survived carry this server's unique directory in their command
    // line (observed live: the prewarm process outlived the group kill by a few seconds).
    for (const pid of processesOf(base)) {
      try {
        Deno.kill(pid, "SIGKILL");
      } catch { /* gone */ }
    }
    await waitFor(clock, () => processesOf(base).length === 0, { deadline: clock.now() + 3000 });
  };
  const ready = async () => {
    const up = await waitFor(clock, async () => {
      if (run.exited) throw new Error("kitty exited during start-up");
      if (!existsSync(socket)) return false;
      return (await rc(["ls"])).code === 0;
    }, { deadline: clock.now() + (options.startMs ?? 60_000), maxIntervalMs: 200 });
    if (!up) throw new Error("kitty did not answer on its socket in time");
    anchorWindow = (await windowIds())[0];
  };
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await stop();
    await Deno.remove(base, { recursive: true }).catch(() => {});
  };
  launch();
  try {
    await ready();
    const killSync = () => {
      if (closed) return;
      closed = true;
      signalGroup("SIGKILL");
      for (const pid of processesOf(base)) {
        try {
          Deno.kill(pid, "SIGKILL");
        } catch { /* gone */ }
      }
      try {
        Deno.removeSync(base, { recursive: true });
      } catch { /* gone */ }
    };
    const server: KittyServer = {
      address,
      anchorWindow,
      dir,
      env,
      runner,
      rc,
      windowIds,
      closeOthers,
      async restart() {
        await stop();
        await Deno.remove(socket).catch(() => {});
        launch();
        await ready();
        server.anchorWindow = anchorWindow;
      },
      close,
      killSync,
    };
    return server;
  } catch (err) {
    await close();
    throw err;
  }
}

/** One kitty shared by the tests of a file, started on first use and stopped after them all. */
export interface SharedKitty {
  /** The server (started on the first call). */
  get(): Promise<KittyServer>;
}

/**
 * Shares one kitty across the tests of a file (startup dominates: ~2-5 s here). Registers an
 * `afterAll` hook that stops it, and a synchronous `unload` fallback that kills the process group
 * if the file ends another way. Each test still closes its own windows.
 *
 * @param options Server options.
 * @returns The shared handle.
 */
export function sharedKittyServer(options: KittyServerOptions = {}): SharedKitty {
  let started: Promise<KittyServer> | undefined;
  Deno.test.afterAll(async () => {
    if (started) await (await started.catch(() => undefined))?.close();
  });
  let server: KittyServer | undefined;
  globalThis.addEventListener("unload", () => server?.killSync());
  return {
    get: () =>
      started ??= startKittyServer(options).then((s) => {
        server = s;
        return s;
      }),
  };
}
