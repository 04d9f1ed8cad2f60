/**
 * A fake WezTerm for tests: a state file for `tests/fakes/bin/wezterm` with one window, one tab
 * and the pane muxbridge "runs in" (pane 0, focused in the GUI), the environment a WezTerm pane
 * has (`WEZTERM_PANE`, `WEZTERM_UNIX_SOCKET`), a runner that adds it to every call, and the
 * fake's argv log. `close()` kills whatever the fake started and removes the directory.
 *
 * @module
 */

import { fileURLToPath } from "node:url";
import type { BackendDeps } from "../../lib/backend/backend.ts";
import { createRealClock } from "../../lib/sys/clock.ts";
import type { ConfigLayer } from "../../lib/config/config.ts";
import { detectAll, type FullConfig, resolveConfig } from "../helpers/config.ts";
import type { Runner } from "../../lib/sys/exec.ts";
import { type Logger, silentLogger } from "../../lib/sys/log.ts";
import { parseArgvLog, writeFakeCliFiles } from "./_fake_cli_files.ts";

/** The fake CLI. */
export const FAKE_WEZTERM = fileURLToPath(new URL("../fakes/bin/wezterm", import.meta.url));

/** A pane in the fake's state. */
export interface FakePane {
  id: number;
  window: number;
  tab: number;
  title: string;
  cwd: string;
  rows: number;
  cols: number;
  left: number;
  top: number;
  tty: string | null;
  pid?: number;
  start?: string;
  argv?: string[];
  pasted?: string[];
}

/** The fake's state file (see the fake's header). */
export interface FakeWeztermState {
  version: string;
  socket: string;
  setEnv: Record<string, string>;
  nextPane: number;
  nextTab: number;
  windows: Array<{ id: number; workspace: string; title: string; activeTab: number }>;
  tabs: Array<{ id: number; window: number; title: string; active: number }>;
  panes: FakePane[];
  guiWindow: number | null;
  started: number[];
}

/** A fake WezTerm. */
export interface FakeWezterm {
  /** A scratch directory inside the fixture's (removed by `close()`). */
  dir: string;
  /** The socket the fake answers on (`WEZTERM_UNIX_SOCKET`). */
  socket: string;
  /** The environment of a process in pane 0 (and the fake's own variables). */
  env: Record<string, string>;
  /** The real runner with {@linkcode FakeWezterm.env} added. */
  runner: Runner;
  /** Reads the state. */
  read(): FakeWeztermState;
  /** Changes the state (between backend calls only). */
  update(fn: (s: FakeWeztermState) => void): void;
  /** Every argv the fake received, without the binary. */
  calls(): string[][];
  /** Backend deps pointed at the fake (`wezterm.bin` = the fake; identity from its env). */
  deps(flags?: ConfigLayer, log?: Logger, run?: Runner): BackendDeps<FullConfig>;
  /**
   * "Restarts" WezTerm on the same socket: every program is killed, the socket file is made anew
   * (as a starting server binds it) and pane ids count from 0 again (pane 0 is muxbridge's).
   */
  restart(): void;
  /** Opens a pane of the user's through the fake CLI, running `sleep 424242`. */
  userPane(): Promise<{ paneId: string; pid: number }>;
  /** Kills every program the fake started and removes the directory. */
  close(): Promise<void>;
}

/**
 * Creates a fake WezTerm.
 *
 * @param init Changes to the initial state (version, more tabs, …).
 * @returns The fake; always `await fake.close()`.
 */
export async function startFakeWezterm(
  init: (s: FakeWeztermState) => void = () => {},
): Promise<FakeWezterm> {
  const base = await Deno.makeTempDir({ prefix: "muxbridge-wezterm-" });
  const dir = `${base}/work`;
  await Deno.mkdir(dir);
  const socket = `${base}/gui-sock-4242`;
  // The GUI's socket file, as a running WezTerm has it (closing removes it).
  let listener = Deno.listen({ transport: "unix", path: socket });
  const fresh = (): FakeWeztermState => ({
    version: "20240203-110809-5046fc22",
    socket,
    setEnv: {},
    nextPane: 1,
    nextTab: 1,
    windows: [{ id: 0, workspace: "default", title: "wezterm", activeTab: 0 }],
    tabs: [{ id: 0, window: 0, title: "", active: 0 }],
    panes: [{
      id: 0,
      window: 0,
      tab: 0,
      title: "opencode",
      cwd: dir,
      rows: 50,
      cols: 200,
      left: 0,
      top: 0,
      tty: "/dev/pts/9",
    }],
    guiWindow: 0,
    started: [],
  });
  const state = fresh();
  init(state);
  // The fake is a Deno script: the files put the Deno running the tests first on PATH.
  const { statePath, logPath, env, runner } = await writeFakeCliFiles(base, "FAKE_WEZTERM", state, {
    WEZTERM_UNIX_SOCKET: socket,
    WEZTERM_PANE: "0",
  });
  const read = () => JSON.parse(Deno.readTextFileSync(statePath)) as FakeWeztermState;
  const killStarted = () => {
    try {
      for (const pid of read().started) {
        try {
          Deno.kill(-pid, "SIGKILL");
        } catch { /* gone */ }
      }
    } catch { /* no state */ }
  };
  return {
    dir,
    socket,
    env,
    runner,
    read,
    update(fn) {
      const s = read();
      fn(s);
      Deno.writeTextFileSync(statePath, JSON.stringify(s));
    },
    calls: () => parseArgvLog(Deno.readTextFileSync(logPath)),
    deps(flags = {}, log = silentLogger, run = runner) {
      const lookup = (name: string) => env[name];
      return {
        run,
        env: lookup,
        clock: createRealClock(),
        config: resolveConfig({
          env: lookup,
          flags: {
            backend: "wezterm",
            command_timeout_ms: 10_000,
            // Credentials files go there: never the real home's state directory.
            state_dir: `${dir}/state`,
            ...flags,
            wezterm: { bin: FAKE_WEZTERM, ...(flags.wezterm as object | undefined) },
          },
        }),
        identity: detectAll(lookup),
        log,
      };
    },
    restart() {
      killStarted();
      listener.close();
      listener = Deno.listen({ transport: "unix", path: socket });
      const next = fresh();
      init(next);
      Deno.writeTextFileSync(statePath, JSON.stringify(next));
    },
    async userPane() {
      const r = await runner([
        FAKE_WEZTERM,
        "cli",
        "split-pane",
        "--pane-id",
        "0",
        "--",
        "sleep",
        "424242",
      ], {
        timeoutMs: 10_000,
      });
      const paneId = r.stdout.trim();
      const pid = read().panes.find((p) => String(p.id) === paneId)?.pid;
      if (pid === undefined) throw new Error(`the fake opened no user pane: ${r.stderr}`);
      return { paneId, pid };
    },
    async close() {
      killStarted();
      try {
        listener.close();
      } catch { /* closed */ }
      await Deno.remove(base, { recursive: true }).catch(() => {});
    },
  };
}
