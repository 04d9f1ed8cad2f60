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
