/**
 * A private "zellij session" for tests: a state file for the fake zellij CLI
 * (`tests/fakes/bin/zellij`), a runner that points the fake at it, and a backend on top. Always
 * `close()` it: that kills every pane program the fake started.
 *
 * @module
 */

import { fileURLToPath } from "node:url";
import { createZellijBackend } from "../../backends/zellij/backend.ts";
import type { Backend, BackendDeps } from "../../lib/backend/backend.ts";
import { createRealClock } from "../../lib/sys/clock.ts";
import type { ConfigLayer } from "../../lib/config/config.ts";
import { type FullConfig, resolveConfig } from "../helpers/config.ts";
import type { Runner } from "../../lib/sys/exec.ts";
import type { Identity } from "../../lib/backend/identity.ts";
import { silentLogger } from "../../lib/sys/log.ts";
import { writeFakeCliFiles } from "./_fake_cli_files.ts";

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
  /** A backend on this session, muxbridge running in pane `terminal_0` (`run`: its runner). */
  backend(flags?: ConfigLayer, identity?: Identity, run?: Runner): Backend;
  /**
   * "Restarts" the session: its pane programs are killed and a new server of the same name
   * starts a minute later than the last (its pane ids count from the start again).
   */
  restart(): Promise<void>;
  /** Opens a pane of the user's through the fake CLI, running `sleep 424242`. */
  userPane(): Promise<{ paneId: string; pid: number }>;
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
    /** When its server started (seconds since the epoch): `list-sessions` shows the age. */
    created?: number;
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
  const freshSession = (created: number): FakeState["sessions"][string] => ({
    name: FAKE_SESSION,
    created,
    nextTerminal: 1,
    tabs: [{ id: 0, position: 0, name: "Tab #1", active: true }],
    panes: [
      { id: 0, plugin: false, tab_id: 0, title: "~", exited: false, focused: true },
      { id: 1, plugin: true, tab_id: 0, title: "tab-bar", exited: false, focused: false },
    ],
  });
  const initial: FakeState = {
    version: options.version ?? "0.45.0",
    // zellij panes get the server's environment, not the caller's: a small, fixed one.
    serverEnv: { PATH: "/usr/local/bin:/usr/bin:/bin", HOME: dir, LANG: "C.UTF-8" },
    // A session that has run for an hour.
    sessions: { [FAKE_SESSION]: freshSession(Math.floor(Date.now() / 1000) - 3600) },
  };
  const files = await writeFakeCliFiles(dir, "FAKE_ZELLIJ", initial);
  const { statePath, env, runner } = files;
  return {
    dir,
    statePath,
    env,
    runner,
    calls: files.calls,
    state: files.readState,
    update: files.update,
    backend(flags: ConfigLayer = {}, identity: Identity = insideSession(), run = runner) {
      const deps: BackendDeps<FullConfig> = {
        run,
        env: () => undefined,
        clock: createRealClock(),
        config: resolveConfig({
          env: () => undefined,
          flags: {
            backend: "zellij",
            command_timeout_ms: 10_000,
            // Credentials files go there: never the real home's state directory.
            state_dir: `${dir}/state`,
            ...flags,
            zellij: { bin: FAKE_ZELLIJ, ...(flags.zellij ?? {}) },
          },
        }),
        identity,
        log: silentLogger,
      };
      return createZellijBackend(deps);
    },
    async restart() {
      const state = await files.readState();
      const old = state.sessions[FAKE_SESSION];
      for (const pane of old?.panes ?? []) {
        if (pane.pid === undefined) continue;
        try {
          Deno.kill(-pane.pid, "SIGKILL");
        } catch { /* gone */ }
      }
      const created = Math.min(Math.floor(Date.now() / 1000), (old?.created ?? 0) + 60);
      await files.update((s) => void (s.sessions[FAKE_SESSION] = freshSession(created)));
    },
    async userPane() {
      const r = await runner(
        [FAKE_ZELLIJ, "--session", FAKE_SESSION, "action", "new-pane", "--", "sleep", "424242"],
        { timeoutMs: 10_000 },
      );
      const paneId = r.stdout.trim();
      const id = Number(/^terminal_(\d+)$/.exec(paneId)?.[1]);
      const pane = (await files.readState()).sessions[FAKE_SESSION].panes
        .find((p) => !p.plugin && p.id === id);
      if (pane?.pid === undefined) throw new Error(`the fake opened no user pane: ${r.stderr}`);
      return { paneId, pid: pane.pid };
    },
    async close() {
      try {
        await files.killStarted();
      } finally {
        await Deno.remove(dir, { recursive: true }).catch(() => {});
      }
    },
  };
}
