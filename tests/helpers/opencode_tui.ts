/**
 * A user's machine in a box, for the real OpenCode TUI: a private tmux server, a temporary
 * HOME with XDG folders, OpenCode's config (a loopback mock model whose parent turn calls the
 * `task` tool) and the offline stubs of OpenCode's first-run npm install, a git project, and a
 * PATH that has `opencode` but not muxbridge (the plugin must find muxbridge through what
 * `muxbridge install` recorded).
 *
 * {@linkcode TuiBox.start} runs `opencode [args…]` the way a user does, in a new window of the
 * private tmux, from a tmux client with the box's PATH (tmux 3.3a gives a new pane the PATH of
 * the client that creates it, ignoring `-e PATH=`: seen live). {@linkcode TuiBox.close} stops
 * every process the box started and removes its files.
 *
 * @module
 */

import { createRealClock, waitFor } from "../../lib/sys/clock.ts";
import { type MockChild, type MockModel, startMockModel, TASK_TRIGGER } from "./mock_model.ts";
import { prepareOpencodeHome, stopProcess } from "./opencode_home.ts";
import { childrenOf, cmdline, opencodeBin } from "./opencode_server.ts";
import { startTmuxServer, type TmuxServer } from "./tmux_server.ts";

const clock = createRealClock();

/**
 * What the child streams while the mock model holds it (a long-running child): the test looks
 * for it in the child's pane.
 */
export const CHILD_MARKER = "MUXBRIDGE-CHILD-TEXT";

/** A pane of the private tmux server. */
export interface PaneInfo {
  /** `%N`. */
  id: string;
  /** The pane's first process. */
  pid: number;
  /** What tmux started in it. */
  startCommand: string;
}

/** A running OpenCode TUI. */
export interface Tui {
  /** Its pane. */
  pane: string;
  /** Its pid. */
  pid: number;
  /** The screen now. */
  screen(): Promise<string>;
  /** Types the prompt that makes the model call `task`, then Enter. */
  promptTask(): Promise<void>;
  /** OpenCode's direct children that run `muxbridge bridge`. */
  bridges(): number[];
  /** SIGTERM (like a closed terminal), a bounded wait, SIGKILL. */
  stop(): Promise<void>;
}

/** The box. */
export interface TuiBox {
  /** The temporary folder holding everything. */
  base: string;
  /** The private tmux server. */
  tmux: TmuxServer;
  /** The mock model. */
  mock: MockModel;
  /** The box's environment (HOME, XDG_*, PATH, OPENCODE_*). */
  env: Record<string, string>;
  /** OpenCode's global config folder. */
  configDir: string;
  /** The project OpenCode runs in. */
  project: string;
  /** The plugin's log (`$XDG_STATE_HOME/muxbridge/bridge.log`). */
  log: string;
  /** Runs `opencode …args` in a new window; resolves once its prompt box is drawn. */
  start(args?: string[]): Promise<Tui>;
  /** Every pane of the server. */
  panes(): Promise<PaneInfo[]>;
  /** The text of a pane. */
  capture(pane: string): Promise<string>;
  /** Stops everything and removes the folder. */
  close(): Promise<void>;
}

/**
 * Waits for a condition (bounded, polled), throwing with `what` and `context()` on timeout.
 *
 * @param what What is awaited.
 * @param cond The condition.
 * @param ms The bound.
 * @param context Read on failure.
 * @returns The milliseconds it took.
 */
export async function waitUntil(
  what: string,
  cond: () => boolean | Promise<boolean>,
  ms: number,
  context: () => string | Promise<string> = () => "",
): Promise<number> {
  const t0 = clock.now();
  if (!await waitFor(clock, cond, { deadline: t0 + ms, maxIntervalMs: 100 })) {
    throw new Error(`timed out after ${ms} ms waiting for ${what}\n${await context()}`);
  }
  return clock.now() - t0;
}

/** Options of {@linkcode openTuiBox}. */
export interface TuiBoxOptions {
  /** The child's per-word delay (ms). @default 100 */
  chunkDelayMs?: number;
  /** The children the model's `task` calls start, in turn (`MockTask.children`). */
  children?: readonly MockChild[];
  /** More top-level keys of OpenCode's config (e.g. `permission`). @default none */
  config?: Record<string, unknown>;
}

/**
 * Prepares the box (nothing of OpenCode runs yet).
 *
 * @param options The mock model's child and OpenCode's config.
 * @returns The box; always `await close()`.
 * @throws {Error} When opencode is not installed.
 */
export async function openTuiBox(options: TuiBoxOptions = {}): Promise<TuiBox> {
  const bin = opencodeBin();
  if (!bin) throw new Error("opencode is not installed: run `npm install` (opencode-ai)");
  const base = await Deno.makeTempDir({ prefix: "muxbridge-tui-" });
  const mock = startMockModel({
    chunkDelayMs: options.chunkDelayMs ?? 100,
    task: {
      prompt: "child: say the marker",
      childReply: "the child starts",
      fillerWhileHeld: CHILD_MARKER,
      ...(options.children ? { children: options.children } : {}),
    },
  });
  let tmux: TmuxServer | undefined;
  const started: number[] = [];
  const close = async () => {
    for (const pid of started) await stopProcess(pid, 10_000);
    await tmux?.close();
    await mock.close();
    await Deno.remove(base, { recursive: true }).catch(() => {});
  };
  try {
    const env: Record<string, string> = {
      ...await prepareOpencodeHome(base, {
        mockUrl: mock.baseUrl,
        toolCall: true,
        ...(options.config ? { config: options.config } : {}),
      }),
      PATH: `${base}/bin:/usr/bin:/bin`,
      // Only for `deno run`: its module cache would otherwise start empty in the new HOME.
      DENO_DIR: Deno.env.get("DENO_DIR") ??
        `${Deno.env.get("XDG_CACHE_HOME") ?? `${Deno.env.get("HOME")}/.cache`}/deno`,
    };
    const configDir = `${env.XDG_CONFIG_HOME}/opencode`;
    const project = `${base}/project`;
    await Deno.mkdir(`${base}/bin`);
    await Deno.symlink(bin, `${base}/bin/opencode`);

    tmux = await startTmuxServer({ width: 220, height: 50 });
    const t = tmux;
    for (const [k, v] of Object.entries(env)) await t.tmux(["set-environment", "-g", k, v]);
    // What the test's own environment may carry must not reach OpenCode or the panes.
    for (
      const k of [
        "MUXBRIDGE_BIN",
        "MUXBRIDGE_CONFIG",
        "MUXBRIDGE_STATE_DIR",
        "MUXBRIDGE_PLUGIN_LOG",
        "MUXBRIDGE_BACKEND",
        "OPENCODE_SERVER_PASSWORD",
        "OPENCODE_SERVER_USERNAME",
        "OPENCODE_CONFIG",
        "OPENCODE_CONFIG_DIR",
        "OPENCODE_CONFIG_CONTENT",
      ]
    ) await t.tmux(["set-environment", "-g", "-u", k]);

    const panes = async (): Promise<PaneInfo[]> =>
      (await t.tmux(["list-panes", "-a", "-F", "#{pane_id}\t#{pane_pid}\t#{pane_start_command}"]))
        .trim().split("\n").filter((l) => l).map((l) => {
          const [id, pid, ...cmd] = l.split("\t");
          return { id, pid: Number(pid), startCommand: cmd.join("\t") };
        });
    const capture = (pane: string) => t.tmux(["capture-pane", "-p", "-t", pane]);

    const start = async (args: string[] = []): Promise<Tui> => {
      const r = await t.runner([
        "tmux",
        "-L",
        t.socketName,
        "new-window",
        "-d",
        "-P",
        "-F",
        "#{pane_id}\t#{pane_pid}",
        "-t",
        "t:",
        "-c",
        project,
        "--",
        "opencode",
        ...args,
      ], { timeoutMs: 5000, env: { PATH: env.PATH } });
      if (r.code !== 0) throw new Error(`tmux new-window: ${r.stderr}`);
      const [pane, pidText] = r.stdout.trim().split("\t");
      const pid = Number(pidText);
      started.push(pid);
      const screen = () => capture(pane).catch(() => "");
      await waitUntil(
        "the TUI's prompt box",
        async () => /Ask anything/.test(await screen()),
        // A bound on a hung start only: a loaded 2-core machine took over 60 s (seen).
        180_000,
        screen,
      );
      return {
        pane,
        pid,
        screen,
        async promptTask() {
          await t.tmux(["send-keys", "-t", pane, "-l", `${TASK_TRIGGER} go`]);
          await waitUntil(
            "the typed prompt",
            async () => (await screen()).includes(TASK_TRIGGER),
            60_000,
            screen,
          );
          await t.tmux(["send-keys", "-t", pane, "Enter"]);
        },
        bridges: () => childrenOf(pid).filter((c) => (cmdline(c) ?? []).includes("bridge")),
        stop: () => stopProcess(pid, 10_000),
      };
    };

    return {
      base,
      tmux: t,
      mock,
      env,
      configDir,
      project,
      log: `${env.XDG_STATE_HOME}/muxbridge/bridge.log`,
      start,
      panes,
      capture,
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}
