/**
 * A fake cmux "installation" for tests: a state file for `tests/fakes/bin/cmux` with one window,
 * one workspace holding the caller's surface (where muxbridge "runs") and a user's surface, the
 * environment a cmux terminal has, a runner that adds it to every call, and the fake's argv log.
 * `close()` kills whatever the fake started and removes the directory.
 *
 * @module
 */

import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import type { BackendDeps } from "../../lib/backend/backend.ts";
import { createRealClock } from "../../lib/sys/clock.ts";
import type { ConfigLayer } from "../../lib/config/config.ts";
import { detectAll, type FullConfig, resolveConfig } from "../helpers/config.ts";
import { createRunner, type Runner } from "../../lib/sys/exec.ts";
import { type Logger, silentLogger } from "../../lib/sys/log.ts";

/** The fake CLI. */
export const FAKE_CMUX = fileURLToPath(new URL("../fakes/bin/cmux", import.meta.url));

/** The fake's state file (see the fake's header). */
export interface FakeState {
  versionText: string;
  socket: string;
  features: string[];
  faults: Record<string, string>;
  killGraceMs: number;
  counters: Record<string, number>;
  windows: Array<{
    id: string;
    ref: string;
    workspaces: Array<{
      id: string;
      ref: string;
      title: string;
      focusedPanel: string;
      panes: Array<{
        id: string;
        ref: string;
        selected: string;
        surfaces: Array<
          { id: string; ref: string; title: string; type: "terminal"; cwd: string; pid?: number }
        >;
      }>;
    }>;
  }>;
  focused: { workspace: string; surface: string };
}

/** Options of {@linkcode startFakeCmux}. */
export interface FakeCmuxOptions {
  /** `cmux --version` output. @default "cmux 0.64.17" */
  versionText?: string;
  /** new-split flags the build has. @default ["command", "cwd", "title"] */
  features?: string[];
  /** Faults by command. @default {} */
  faults?: Record<string, string>;
}

/** A fake cmux. */
export interface FakeCmux {
  /** A scratch directory removed by `close()`. */
  dir: string;
  /** The socket path the fake accepts. */
  socket: string;
  /** The workspace UUID. */
  workspaceId: string;
  /** The surface muxbridge runs in. */
  callerSurface: string;
  /** A surface of the user's, in the same workspace (focused, as if the user had clicked it). */
  userSurface: string;
  /** The environment of a process in the caller's surface (and the fake's own variables). */
  env: Record<string, string>;
  /** The real runner with {@linkcode FakeCmux.env} added. */
  runner: Runner;
  /** Reads the state. */
  read(): FakeState;
  /** Changes the state. */
  update(fn: (s: FakeState) => void): void;
  /** Every argv the fake received, in order. */
  calls(): string[][];
  /** Backend deps pointed at the fake (config `cmux.bin` = the fake). */
  deps(flags?: ConfigLayer, log?: Logger, run?: Runner): BackendDeps<FullConfig>;
  /**
   * "Restarts" the app on the same socket: the surfaces muxbridge opened are gone with their
   * programs and the socket file is made anew (as a starting app binds it). The caller's and the
   * user's surfaces stay, so the backend's identity still names them.
   */
  restart(): void;
  /**
   * Opens a surface of the user's through the fake CLI running `sleep 424242`, under the UUID of
   * a surface the last restart removed (cmux never does this: its UUIDs are random; this is the
   * worst case the instance check must catch).
   */
  userPane(): Promise<{ paneId: string; pid: number }>;
  /** Kills the programs the fake started and removes the directory. */
  close(): Promise<void>;
}

const id = () => crypto.randomUUID().toUpperCase();

/**
 * Creates a fake cmux.
 *
 * @param options Version, features, faults.
 * @returns The fake; always `await fake.close()`.
 */
export async function startFakeCmux(options: FakeCmuxOptions = {}): Promise<FakeCmux> {
  const dir = await Deno.makeTempDir({ prefix: "muxbridge-cmux-" });
  const work = `${dir}/work`;
  await Deno.mkdir(work);
  const statePath = `${dir}/state.json`;
  const logPath = `${dir}/argv.log`;
  const socket = `${dir}/cmux.sock`;
  const [win, ws, callerPane, userPane, callerSurface, userSurface] = [
    id(),
    id(),
    id(),
    id(),
    id(),
    id(),
  ];
  const state: FakeState = {
    versionText: options.versionText ?? "cmux 0.64.17",
    socket,
    features: options.features ?? ["command", "cwd", "title"],
    faults: options.faults ?? {},
    killGraceMs: 200,
    counters: { window: 1, workspace: 2, pane: 2, surface: 2 },
    windows: [{
      id: win,
      ref: "window:1",
      workspaces: [{
        id: ws,
        ref: "workspace:2",
        title: "work",
        focusedPanel: userSurface,
        panes: [
          {
            id: callerPane,
            ref: "pane:1",
            selected: callerSurface,
            surfaces: [{
              id: callerSurface,
              ref: "surface:1",
              title: "opencode",
              type: "terminal",
              cwd: work,
            }],
          },
          {
            id: userPane,
            ref: "pane:2",
            selected: userSurface,
            surfaces: [{
              id: userSurface,
              ref: "surface:2",
              title: "vim",
              type: "terminal",
              cwd: work,
            }],
          },
        ],
      }],
    }],
    focused: { workspace: ws, surface: userSurface },
  };
  await Deno.writeTextFile(statePath, JSON.stringify(state, null, 2));
  // The app's socket file, as a running cmux has it (closing removes it).
  let listener = Deno.listen({ transport: "unix", path: socket });
  const env: Record<string, string> = {
    CMUX_FAKE_STATE: statePath,
    CMUX_FAKE_LOG: logPath,
    // The fake runs on the deno that runs the tests.
    PATH: `${dirname(Deno.execPath())}:${Deno.env.get("PATH") ?? "/usr/bin:/bin"}`,
    CMUX_SOCKET_PATH: socket,
    CMUX_WORKSPACE_ID: ws,
    CMUX_SURFACE_ID: callerSurface,
  };
  const real = createRunner();
  const runner: Runner = (argv, opts) => real(argv, { ...opts, env: { ...env, ...opts.env } });
  const read = () => JSON.parse(Deno.readTextFileSync(statePath)) as FakeState;
  const update = (fn: (s: FakeState) => void) => {
    const s = read();
    fn(s);
    Deno.writeTextFileSync(statePath, JSON.stringify(s, null, 2));
  };
  const calls = () => {
    let text = "";
    try {
      text = Deno.readTextFileSync(logPath);
    } catch {
      return [];
    }
    const out: string[][] = [];
    let at = 0;
    while (at < text.length) {
      const nl = text.indexOf("\n", at);
      const count = Number(text.slice(at, nl));
      at = nl + 1;
      const argv: string[] = [];
      for (let i = 0; i < count; i++) {
        const end = text.indexOf("\0", at);
        argv.push(text.slice(at, end));
        at = end + 1;
      }
      out.push(argv);
    }
    return out;
  };
  const deps = (flags: ConfigLayer = {}, log: Logger = silentLogger, run: Runner = runner) => {
    const lookup = (name: string) => env[name];
    return {
      run,
      env: lookup,
      clock: createRealClock(),
      config: resolveConfig({
        env: lookup,
        flags: {
          backend: "cmux",
          command_timeout_ms: 10_000,
          cmux: { bin: FAKE_CMUX },
          // Credentials files go there: never the real home's state directory.
          state_dir: `${dir}/state`,
          ...flags,
        },
      }),
      identity: detectAll(lookup),
      log,
    };
  };
  const surfaces = (st: FakeState) =>
    st.windows.flatMap((w) => w.workspaces.flatMap((x) => x.panes.flatMap((p) => p.surfaces)));
  let removed: string[] = [];
  const restart = () => {
    const kept = new Set([callerSurface, userSurface]);
    update((st) => {
      removed = surfaces(st).filter((x) => !kept.has(x.id)).map((x) => x.id);
      for (const x of surfaces(st)) {
        if (kept.has(x.id) || !x.pid || x.pid <= 1) continue;
        try {
          Deno.kill(-x.pid, "SIGKILL");
        } catch { /* gone */ }
      }
      for (const w of st.windows) {
        for (const x of w.workspaces) {
          x.panes = x.panes.filter((p) => p.surfaces.some((y) => kept.has(y.id)));
        }
      }
    });
    listener.close();
    listener = Deno.listen({ transport: "unix", path: socket });
  };
  const openUserPane = async () => {
    const r = await runner([
      FAKE_CMUX,
      "--socket",
      socket,
      "--json",
      "--id-format",
      "uuids",
      "new-split",
      "right",
      "--workspace",
      ws,
      "--surface",
      callerSurface,
      "--focus",
      "false",
      "--command",
      "exec sleep 424242",
    ], { timeoutMs: 10_000 });
    const made = (JSON.parse(r.stdout) as { surface_id: string }).surface_id;
    const reused = removed.shift() ?? made;
    let pid: number | undefined;
    update((st) => {
      for (const w of st.windows) {
        for (const x of w.workspaces) {
          for (const p of x.panes) {
            if (p.selected === made) p.selected = reused;
            for (const y of p.surfaces) {
              if (y.id !== made) continue;
              y.id = reused;
              pid = y.pid;
            }
          }
        }
      }
    });
    if (pid === undefined) throw new Error(`the fake opened no user surface: ${r.stderr}`);
    return { paneId: reused, pid };
  };
  const close = async () => {
    try {
      listener.close();
    } catch { /* closed */ }
    try {
      for (const w of read().windows) {
        for (const s of w.workspaces.flatMap((x) => x.panes.flatMap((p) => p.surfaces))) {
          if (s.pid && s.pid > 1) {
            try {
              Deno.kill(-s.pid, "SIGKILL");
            } catch { /* gone */ }
          }
        }
      }
    } catch { /* no state */ }
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  };
  return {
    dir: work,
    socket,
    workspaceId: ws,
    callerSurface,
    userSurface,
    env,
    runner,
    read,
    update,
    calls,
    deps,
    restart,
    userPane: openUserPane,
    close,
  };
}
