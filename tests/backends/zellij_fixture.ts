/**
 * A private "zellij session" for tests: a state file for the fake zellij CLI
 * (`tests/fakes/bin/zellij`), a runner that points the fake at it, and a backend on top. Always
 * `close()` it: that kills every pane program the fake started.
 *
 * @module
 */

import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { createZellijBackend } from "../../backends/zellij.ts";
import type { Backend, BackendDeps } from "../../lib/backend.ts";
import { createRealClock } from "../../lib/clock.ts";
import { type ConfigLayer, resolveConfig } from "../../lib/config.ts";
import { createRunner, type Runner } from "../../lib/exec.ts";
import type { Identity } from "../../lib/identity.ts";
import { silentLogger } from "../../lib/log.ts";

/** The fake zellij CLI. */
export const FAKE_ZELLIJ = fileURLToPath(new URL("../fakes/bin/zellij", import.meta.url));

/** The session the fixture creates. */
export const FAKE_SESSION = "muxbridge-test";

/** Options of {@linkcode startFakeZellij}. */
export interface FakeZellijOptions {
  /** The version the fake reports. @default "0.45.0" */
  version?: string;
}

/** A running fake session. */
export interface FakeZellij {
  /** Scratch directory (state, log, programs). */
  dir: string;
  /** The state file. */
  statePath: string;
  /** Variables every call of the fake gets; tests set `FAKE_ZELLIJ_FAULT` here. */
  env: Record<string, string>;
  /** A real runner that points the fake at this session. */
  runner: Runner;
  /** Every argv the fake received, in order (without the binary). */
  calls(): Promise<string[][]>;
  /** The raw state. */
  state(): Promise<FakeState>;
  /** Changes the state (under no lock: call it between backend operations only). */
  update(fn: (state: FakeState) => void): Promise<void>;
  /** A backend on this session, muxbridge running in pane `terminal_0`. */
  backend(flags?: ConfigLayer, identity?: Identity): Backend;
  /** Kills every pane program and removes the directory. */
  close(): Promise<void>;
}

/** The fake's state file (see `tests/fakes/bin/zellij`). */
export interface FakeState {
  version?: string;
  /** Every pane program the fake started (each a process-group leader). */
  started?: number[];
  serverEnv: Record<string, string>;
  sessions: Record<string, {
    name: string;
    nextTerminal: number;
    tabs: Array<{ id: number; position: number; name: string; active?: boolean }>;
    panes: Array<{
      id: number;
      plugin: boolean;
      tab_id: number;
      title: string;
      exited: boolean;
      focused: boolean;
      pid?: number;
      cwd?: string;
      command?: string[];
      closeOnExit?: boolean;
    }>;
  }>;
}

/** Parses the fake's argv log: count, NUL, then each element followed by NUL. */
export function parseArgvLog(text: string): string[][] {
  const parts = text.split("\0");
  const calls: string[][] = [];
  let i = 0;
  while (i < parts.length - 1) {
    const n = Number(parts[i]);
    calls.push(parts.slice(i + 1, i + 1 + n));
    i += n + 1;
  }
  return calls;
}

/** The identity of a process running in pane `terminal_0` of the fixture's session. */
export function insideSession(): Identity {
  return {
    backend: "zellij",
    layers: [{ backend: "zellij", paneId: "terminal_0", session: FAKE_SESSION }],
    harness: { name: null },
  };
}

/**
 * Starts a fake zellij session with one tab holding the caller's pane (`terminal_0`) and a
 * tab-bar plugin pane.
 *
 * @param options The version to report.
 * @returns The session.
 */
export async function startFakeZellij(options: FakeZellijOptions = {}): Promise<FakeZellij> {
  const dir = await Deno.makeTempDir({ prefix: "muxbridge-zellij-" });
  const statePath = `${dir}/state.json`;
  const logPath = `${dir}/argv.log`;
  const initial: FakeState = {
    version: options.version ?? "0.45.0",
    // zellij panes get the server's environment, not the caller's: a small, fixed one.
    serverEnv: { PATH: "/usr/local/bin:/usr/bin:/bin", HOME: dir, LANG: "C.UTF-8" },
    sessions: {
      [FAKE_SESSION]: {
        name: FAKE_SESSION,
        nextTerminal: 1,
        tabs: [{ id: 0, position: 0, name: "Tab #1", active: true }],
        panes: [
          { id: 0, plugin: false, tab_id: 0, title: "~", exited: false, focused: true },
          { id: 1, plugin: true, tab_id: 0, title: "tab-bar", exited: false, focused: false },
        ],
      },
    },
  };
  await Deno.writeTextFile(statePath, JSON.stringify(initial));
  await Deno.writeTextFile(logPath, "");
  const env: Record<string, string> = {
    // The fake is a Deno script: the Deno running the tests runs it.
    PATH: `${dirname(Deno.execPath())}:${Deno.env.get("PATH") ?? "/usr/bin:/bin"}`,
    FAKE_ZELLIJ_STATE: statePath,
    FAKE_ZELLIJ_LOG: logPath,
  };
  const real = createRunner();
  const runner: Runner = (argv, opts) => real(argv, { ...opts, env: { ...env, ...opts.env } });
  const readState = async () => JSON.parse(await Deno.readTextFile(statePath)) as FakeState;
  return {
    dir,
    statePath,
    env,
    runner,
    calls: async () => parseArgvLog(await Deno.readTextFile(logPath)),
    state: readState,
    async update(fn) {
      const state = await readState();
      fn(state);
      await Deno.writeTextFile(statePath, JSON.stringify(state));
    },
    backend(flags: ConfigLayer = {}, identity: Identity = insideSession()) {
      const deps: BackendDeps = {
        run: runner,
        env: () => undefined,
        clock: createRealClock(),
        config: resolveConfig({
          env: () => undefined,
          flags: {
            backend: "zellij",
            command_timeout_ms: 10_000,
            ...flags,
            zellij: { bin: FAKE_ZELLIJ, ...(flags.zellij ?? {}) },
          },
        }),
        identity,
        log: silentLogger,
      };
      return createZellijBackend(deps);
    },
    async close() {
      try {
        const state = await readState();
        for (const pid of state.started ?? []) {
          try {
            Deno.kill(-pid, "SIGKILL");
          } catch { /* gone */ }
        }
      } finally {
        await Deno.remove(dir, { recursive: true }).catch(() => {});
      }
    },
  };
}
