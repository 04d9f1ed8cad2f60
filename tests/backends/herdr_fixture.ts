/**
 * A private "herdr server" for tests: a state file for the fake herdr CLI
 * (`tests/fakes/bin/herdr`), a runner that points the fake at it, optionally the fake API socket
 * server (`tests/fakes/herdr_socket.ts`, a process of its own) on the same state, and a backend on
 * top. Always `close()` it: that stops the socket server and kills every pane process the fakes
 * started.
 *
 * @module
 */

import { fileURLToPath } from "node:url";
import { createHerdrBackend } from "../../backends/herdr/backend.ts";
import type { Backend, BackendDeps } from "../../lib/backend/backend.ts";
import { createRealClock } from "../../lib/sys/clock.ts";
import type { ConfigLayer } from "../../lib/config/config.ts";
import { type FullConfig, resolveConfig } from "../helpers/config.ts";
import type { UnixRequester } from "../../lib/sys/unix_request.ts";
import type { Runner } from "../../lib/sys/exec.ts";
import type { Identity } from "../../lib/backend/identity.ts";
import { type Logger, silentLogger } from "../../lib/sys/log.ts";
import type { FakeHerdrState } from "../fakes/herdr_model.ts";
import { writeFakeCliFiles } from "./_fake_cli_files.ts";

export type { FakeHerdrState };

/** The fake herdr CLI. */
export const FAKE_HERDR = fileURLToPath(new URL("../fakes/bin/herdr", import.meta.url));

/** The fake herdr API socket server. */
export const FAKE_HERDR_SOCKET = fileURLToPath(
  new URL("../fakes/herdr_socket.ts", import.meta.url),
);

/** Options of {@linkcode startFakeHerdr}. */
export interface FakeHerdrOptions {
  /** The version the fake reports. @default "0.9.1" */
  version?: string;
  /** The user's shell that reads typed lines in new panes. @default "/bin/sh" */
  shell?: string;
  /** Start the fake API socket server on the state's socket. @default false */
  socket?: boolean;
}

/** A running fake server. */
export interface FakeHerdr {
  /** Scratch directory (state, log, socket path, programs). */
  dir: string;
  /** The socket path the server "listens" on. */
  socket: string;
  /** Variables every call of the fake gets; tests set `FAKE_HERDR_FAULT` here. */
  env: Record<string, string>;
  /** A real runner that points the fake at this server. */
  runner: Runner;
  /** Every argv the fake received, in order (without the binary). */
  calls(): Promise<string[][]>;
  /** The raw state. */
  state(): Promise<FakeHerdrState>;
  /** Changes the state (call it between backend operations only). */
  update(fn: (state: FakeHerdrState) => void): Promise<void>;
  /** The identity of a process in pane `w1:p1` of this server. */
  identity(): Identity;
  /** A backend on this server, muxbridge running in pane `w1:p1` (`seams`: its runner, socket). */
  backend(
    flags?: ConfigLayer,
    identity?: Identity,
    log?: Logger,
    seams?: { run?: Runner; unixRequest?: UnixRequester },
  ): Backend;
  /** Starts the fake API socket server (again) on the state's socket. */
  startSocket(): Promise<void>;
  /**
   * Stops the socket server. `kill` (SIGKILL) leaves its socket file behind, so connections are
   * refused; otherwise (SIGTERM) it removes the file.
   */
  stopSocket(kill?: boolean): Promise<void>;
  /**
   * "Restarts" the server on the same socket: every pane process is killed, pane ids count from
   * `w1:p2` again, and the socket file is made anew (the socket server, if it ran, runs again;
   * else a socket file nothing listens on, as `leaveSocketFile` makes it).
   */
  restart(): Promise<void>;
  /**
   * Leaves a socket file at the socket path that nothing listens on (connections are refused):
   * the server's socket, for a backend that must use the CLI (`herdr.transport` auto falls back).
   */
  leaveSocketFile(): Promise<void>;
  /** Opens a pane of the user's through the fake CLI: its shell runs `sleep 424242`. */
  userPane(): Promise<{ paneId: string; pid: number }>;
  /** Kills every pane process and removes the directory. */
  close(): Promise<void>;
}

/**
 * Starts a fake herdr server with workspace `w1`, tab `w1:t1` and the caller's pane `w1:p1`.
 *
 * @param options Version and shell.
 * @returns The server.
 */
export async function startFakeHerdr(options: FakeHerdrOptions = {}): Promise<FakeHerdr> {
  const dir = await Deno.makeTempDir({ prefix: "muxbridge-herdr-" });
  const socket = `${dir}/herdr.sock`;
  const initial: FakeHerdrState = {
    version: options.version ?? "0.9.1",
    dir,
    socket,
    running: true,
    shell: options.shell ?? "/bin/sh",
    // The server's environment: a pane gets it plus HERDR_* and --env values, nothing else.
    serverEnv: { PATH: "/usr/local/bin:/usr/bin:/bin", HOME: dir, LANG: "C.UTF-8" },
    workspaces: { w1: { nextPane: 2 } },
    panes: [{
      pane_id: "w1:p1",
      workspace_id: "w1",
      tab_id: "w1:t1",
      cwd: dir,
      focused: true,
      // The caller's own pane: the fake did not start it and it stays.
      ...{ terminal_id: "term_1", static: true },
    }],
  };
  const files = await writeFakeCliFiles(dir, "FAKE_HERDR", initial, {
    // Keep the fake's default socket inside the scratch directory.
    XDG_CONFIG_HOME: `${dir}/config`,
  });
  // The runner lets the backend's own variables (HERDR_SOCKET_PATH) win over the fixture's.
  const { statePath, env, runner } = files;
  let server: Deno.ChildProcess | undefined;
  const startSocket = async () => {
    if (server) return;
    const child = new Deno.Command(Deno.execPath(), {
      args: ["run", "--allow-all", "--quiet", "--no-config", FAKE_HERDR_SOCKET, statePath, socket],
      stdin: "null",
      stdout: "piped",
      stderr: "inherit",
    }).spawn();
    const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
    let seen = "";
    while (!seen.includes("ready\n")) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`the fake herdr socket server ended: ${seen}`);
      seen += value;
    }
    reader.releaseLock();
    // Nothing more is printed; drain so the pipe never fills.
    child.stdout.pipeTo(new WritableStream()).catch(() => {});
    server = child;
  };
  const stopSocket = async (kill = false) => {
    const child = server;
    server = undefined;
    if (!child) return;
    try {
      child.kill(kill ? "SIGKILL" : "SIGTERM");
    } catch { /* gone */ }
    await child.status;
  };
  if (options.socket) await startSocket();
  const leaveSocketFile = async () => {
    await Deno.remove(socket).catch(() => {});
    // Bound under another name, renamed into place, closed: the file stays (Deno removes the
    // name it bound, which is gone), and connecting to it is refused.
    const bound = `${dir}/binding.sock`;
    const listener = Deno.listen({ transport: "unix", path: bound });
    await Deno.rename(bound, socket);
    listener.close();
  };
  const cli = (args: string[]) =>
    runner([FAKE_HERDR, ...args], { timeoutMs: 10_000, env: { HERDR_SOCKET_PATH: socket } });
  const identity = (): Identity => ({
    backend: "herdr",
    layers: [{
      backend: "herdr",
      paneId: "w1:p1",
      socket,
      workspaceId: "w1",
      tabId: "w1:t1",
      binPath: FAKE_HERDR,
    }],
    harness: { name: null },
  });
  return {
    dir,
    socket,
    env,
    runner,
    calls: files.calls,
    state: files.readState,
    update: files.update,
    identity,
    backend(
      flags: ConfigLayer = {},
      id: Identity = identity(),
      log: Logger = silentLogger,
      seams: { run?: Runner; unixRequest?: UnixRequester } = {},
    ) {
      const deps: BackendDeps<FullConfig> = {
        run: seams.run ?? runner,
        env: () => undefined,
        clock: createRealClock(),
        config: resolveConfig({
          env: () => undefined,
          // Credentials files go to state_dir: never the real home's state directory.
          flags: {
            backend: "herdr",
            command_timeout_ms: 10_000,
            state_dir: `${dir}/state`,
            ...flags,
          },
        }),
        identity: id,
        log,
      };
      return createHerdrBackend(
        deps,
        seams.unixRequest ? { unixRequest: seams.unixRequest } : {},
      );
    },
    startSocket,
    stopSocket,
    leaveSocketFile,
    async restart() {
      const listening = server !== undefined;
      await stopSocket();
      await files.killStarted();
      await files.update((s) => {
        // Each pane's input pipe goes with it.
        for (const p of s.panes) if (p.fifo) Deno.removeSync(p.fifo);
        s.started = [];
        s.workspaces = { w1: { nextPane: 2 } };
        s.panes = s.panes.filter((p) => p.pane_id === "w1:p1");
      });
      if (listening) await startSocket();
      else await leaveSocketFile();
    },
    async userPane() {
      const split = await cli(["pane", "split", "w1:p1", "--direction", "right", "--no-focus"]);
      if (split.code !== 0) throw new Error(`the user's split failed: ${split.stderr}`);
      const paneId = (JSON.parse(split.stdout) as { result: { pane: { pane_id: string } } })
        .result.pane.pane_id;
      await cli(["pane", "run", paneId, "exec sleep 424242"]);
      const info = await cli(["pane", "process-info", "--pane", paneId]);
      const pid = /"shell_pid":(\d+)/.exec(info.stdout)?.[1];
      if (pid === undefined) {
        throw new Error(`no pid for the user's pane: ${info.stdout}${info.stderr}`);
      }
      return { paneId, pid: Number(pid) };
    },
    async close() {
      try {
        await stopSocket();
        await files.killStarted();
      } finally {
        await Deno.remove(dir, { recursive: true }).catch(() => {});
      }
    },
  };
}
