/**
 * A private tmux server for tests: its own socket name (`-L muxbridge-test-<random>`), its own
 * `TMUX_TMPDIR` and `HOME`, no config file (`-f /dev/null`), and `TMUX` emptied in every call so
 * a test never talks to the user's tmux. `close()` always kills the server and removes the
 * temporary directories.
 *
 * @module
 */

import { createRealClock, waitFor } from "../../lib/sys/clock.ts";
import { createRunner, type Runner, type RunResult } from "../../lib/sys/exec.ts";
import { createProcesses } from "../../lib/sys/processes.ts";

/** Options of {@linkcode startTmuxServer}. */
export interface TmuxServerOptions {
  /** Window width. @default 200 */
  width?: number;
  /** Window height. @default 50 */
  height?: number;
  /** The anchor pane's program. @default ["sleep", "100000"] */
  program?: readonly string[];
  /** The tmux binary. @default "tmux" */
  bin?: string;
}

/** A running private tmux server. */
export interface TmuxServer {
  /** The `-L` socket name (for config `tmux.socket_name`). */
  socketName: string;
  /** The server's socket path (for `-S`, config `tmux.socket_path` or a fake `$TMUX`). */
  socketPath: string;
  /** The server's pid. */
  serverPid: number;
  /** The first pane (`%0`-like id) of session `t`: the anchor. */
  anchorPane: string;
  /** A scratch directory removed by `close()`. */
  dir: string;
  /** Variables every tmux call (and the server, hence its panes) gets. */
  env: Readonly<Record<string, string>>;
  /** The real runner with {@linkcode TmuxServer.env} added to every call. */
  runner: Runner;
  /** Runs `tmux -L <socket> …args`; resolves for any exit code. */
  run(args: readonly string[]): Promise<RunResult>;
  /** Runs `tmux -L <socket> …args` and returns stdout; throws on a non-zero exit. */
  tmux(args: readonly string[]): Promise<string>;
  /**
   * Splits the anchor pane into a pane of "the user's" (not muxbridge's) running `sleep`.
   *
   * @param side `-h` (side by side) or `-v` (stacked). @default "-v"
   * @returns Its `%N` id.
   */
  userPane(side?: "-h" | "-v"): Promise<string>;
  /**
   * Kills the server and starts a new one on the same socket with session `t` again: its panes
   * (and the programs that end with them) are gone, and pane ids start again at `%0`, the
   * anchor. {@linkcode TmuxServer.serverPid} is the new server's afterwards.
   */
  restart(): Promise<void>;
  /** Kills the server (if it still runs), waits for it to exit and removes the directories. */
  close(): Promise<void>;
}

const TIMEOUT_MS = 5000;

/**
 * Starts a private tmux server with one detached session `t` of the given size.
 *
 * @param options Size, anchor program, binary.
 * @returns The server; always `await server.close()` (in a `finally`).
 */
export async function startTmuxServer(options: TmuxServerOptions = {}): Promise<TmuxServer> {
  const base = await Deno.makeTempDir({ prefix: "muxbridge-tmux-" });
  const home = `${base}/home`;
  const tmpdir = `${base}/sock`;
  const dir = `${base}/work`;
  await Promise.all([home, tmpdir, dir].map((d) => Deno.mkdir(d)));
  const socketName = `muxbridge-test-${crypto.randomUUID().slice(0, 8)}`;
  const bin = options.bin ?? "tmux";
  // Empty TMUX counts as unset when tmux picks its server, not when it guesses whether output
  // may be UTF-8 (any TMUX says yes; tests/e2e_cli_test.ts runs a client without it). The
  // runner can add variables but not remove them.
  const env = { HOME: home, TMUX_TMPDIR: tmpdir, TMUX: "", TMUX_PANE: "" };
  const real = createRunner();
  const runner: Runner = (argv, opts) => real(argv, { ...opts, env: { ...env, ...opts.env } });
  const run = (args: readonly string[]) =>
    runner([bin, "-L", socketName, ...args], { timeoutMs: TIMEOUT_MS });
  const tmux = async (args: readonly string[]) => {
    const r = await run(args);
    if (r.code !== 0) throw new Error(`tmux ${args.join(" ")} exited ${r.code}: ${r.stderr}`);
    return r.stdout;
  };
  let serverPid: number | undefined;
  const stop = async () => {
    await run(["kill-server"]).catch(() => {});
    if (serverPid !== undefined) {
      const pid = serverPid;
      const clock = createRealClock();
      const exited = await waitFor(clock, () => !createProcesses().alive(pid), {
        deadline: clock.now() + 3000,
      });
      if (!exited) Deno.kill(pid, "SIGKILL");
    }
  };
  const close = async () => {
    await stop();
    await Deno.remove(base, { recursive: true }).catch(() => {});
  };
  const start = async () => {
    await tmux([
      "-f",
      "/dev/null",
      "new-session",
      "-d",
      "-s",
      "t",
      "-x",
      String(options.width ?? 200),
      "-y",
      String(options.height ?? 50),
      "-c",
      dir,
      ...(options.program ?? ["sleep", "100000"]),
    ]);
    const info = await tmux([
      "display-message",
      "-p",
      "-t",
      "t",
      "#{pid}\t#{pane_id}\t#{socket_path}",
    ]);
    const [pid, anchorPane, socketPath] = info.trim().split("\t");
    serverPid = Number(pid);
    return { anchorPane, socketPath };
  };
  try {
    const { anchorPane, socketPath } = await start();
    const server: TmuxServer = {
      socketName,
      socketPath,
      serverPid: serverPid!,
      anchorPane,
      dir,
      env,
      runner,
      run,
      tmux,
      userPane: async (side = "-v") =>
        (await tmux([
          "split-window",
          side,
          "-d",
          "-P",
          "-F",
          "#{pane_id}",
          "-t",
          anchorPane,
          "--",
          "sleep",
          "100000",
        ])).trim(),
      async restart() {
        await stop();
        await start();
        server.serverPid = serverPid!;
      },
      close,
    };
    return server;
  } catch (err) {
    await close();
    throw err;
  }
}
