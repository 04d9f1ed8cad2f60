/**
 * A user's machine in a box, for the real OpenCode 2.x TUI: a private tmux server, a 2.x home
 * (`opencode2_home.ts`: HOME and XDG folders, the mock model, the service's own port), the
 * per-user service started on that port (`opencode2_service.ts`), and a PATH with `opencode`
 * (2.x) but not muxbridge.
 *
 * {@linkcode Tui2Box.start} runs `opencode [args…]` the way a user does, in a new window of the
 * private tmux. The tmux server's global environment is the home's (panes take it, not their
 * creator's: docs/opencode.md), and the variables a developer's own shell may carry that would
 * reach OpenCode or the panes (`OPENCODE_PASSWORD`, `OPENCODE_CONFIG_CONTENT`, `MUXBRIDGE_*`, …)
 * are removed from it. {@linkcode Tui2Box.close} stops every TUI first (a running 2.x TUI
 * starts the service again when it goes away), then the service, tmux and the mock, and
 * removes the files.
 *
 * @module
 */

import { createRealClock, waitFor } from "../../lib/sys/clock.ts";
import { createProcesses } from "../../lib/sys/processes.ts";
import { type MockModel, type MockTask, startMockModel, TASK_TRIGGER } from "./mock_model.ts";
import { stopProcess } from "./opencode_home.ts";
import { waitUntil } from "./opencode_tui.ts";
import { type Opencode2Home, prepareOpencode2Home } from "./opencode2_home.ts";
import { type Opencode2Service, startOpencode2Service } from "./opencode2_service.ts";
import { startTmuxServer, type TmuxServer } from "./tmux_server.ts";

const clock = createRealClock();
const processes = createProcesses();

/**
 * What the child streams while the mock model holds it (a long-running child): a test looks
 * for it in a pane showing the child.
 */
export const CHILD2_MARKER = "MUXBRIDGE-CHILD2-TEXT";

/** A line of the home screen's OpenCode logo (the session view has none). */
const HOME_LOGO = /█▀▀█ █▀▀█ █▀▀█ █▀▀▄/;

/** Variables that must not reach the box's OpenCode or its panes from the test's own shell. */
const FOREIGN_VARS = [
  "OPENCODE_PASSWORD",
  "OPENCODE_SERVER_PASSWORD",
  "OPENCODE_SERVER_USERNAME",
  "OPENCODE_CONFIG",
  "OPENCODE_CONFIG_DIR",
  "OPENCODE_CONFIG_CONTENT",
  "OPENCODE_CLI_CONFIG_CONTENT",
  "OPENCODE_DB",
  "MUXBRIDGE_BIN",
  "MUXBRIDGE_CONFIG",
  "MUXBRIDGE_STATE_DIR",
  "MUXBRIDGE_PLUGIN_LOG",
  "MUXBRIDGE_BACKEND",
];

/** A running 2.x TUI. */
export interface Tui2 {
  /** Its pane (`%N`). */
  pane: string;
  /** Its pid (the pane's program). */
  pid: number;
  /** Milliseconds from `new-window` to the prompt box on screen. */
  firstDrawMs: number;
  /** The screen now. */
  screen(): Promise<string>;
  /** Types the prompt that makes the model call `subagent`, then Enter. */
  promptTask(): Promise<void>;
  /** SIGTERM (like a closed terminal), a bounded wait, SIGKILL. */
  stop(): Promise<void>;
}

/** Options of {@linkcode openTui2Box}. */
export interface Tui2BoxOptions {
  /** The mock model's per-word delay (ms). @default 100 */
  chunkDelayMs?: number;
  /** What the mock's `subagent` call does (prompt, reply, `background`, failures). */
  task?: Partial<MockTask>;
  /** The private tmux window size. @default 220x50 */
  size?: { width: number; height: number };
  /** More top-level keys of OpenCode's config (e.g. `permission`). @default none */
  config?: Record<string, unknown>;
}

/** The box. */
export interface Tui2Box {
  /** The temporary folder holding everything. */
  base: string;
  /** The private tmux server. */
  tmux: TmuxServer;
  /** The mock model. */
  mock: MockModel;
  /** The 2.x home (env, config folder, port, password, project). */
  home: Opencode2Home;
  /** The running service on the home's port. */
  service: Opencode2Service;
  /**
   * Runs `opencode …args` in a new window (working directory: the project, or `cwd`); resolves
   * once its prompt box is drawn.
   */
  start(args?: string[], options?: { cwd?: string }): Promise<Tui2>;
  /** Every pane of the server (id, pid, start command). */
  panes(): Promise<Array<{ id: string; pid: number; startCommand: string }>>;
  /** The text of a pane. */
  capture(pane: string): Promise<string>;
  /** Stops everything (TUIs, then the service, tmux, the mock) and removes the folder. */
  close(): Promise<void>;
}

/**
 * Prepares the box and starts the service (no TUI runs yet).
 *
 * @param options The mock's pace and `subagent` behaviour, the window size.
 * @returns The box; always `await close()`.
 * @throws {Error} When OpenCode 2.x is not installed or the service does not come up (after
 *   stopping whatever started).
 */
export async function openTui2Box(options: Tui2BoxOptions = {}): Promise<Tui2Box> {
  const base = await Deno.makeTempDir({ prefix: "muxbridge-tui2-" });
  const mock = startMockModel({
    chunkDelayMs: options.chunkDelayMs ?? 100,
    task: {
      prompt: "child: say the marker",
      childReply: "the child starts",
      description: "muxbridge probe",
      fillerWhileHeld: CHILD2_MARKER,
      ...options.task,
    },
  });
  let tmux: TmuxServer | undefined;
  let service: Opencode2Service | undefined;
  const started: number[] = [];
  let closing: Promise<void> | null = null;
  const close = () => (closing ??= closeOnce());
  const closeOnce = async () => {
    // TUIs first: a running 2.x TUI starts the service again when it goes away.
    for (const pid of started) await stopProcess(pid, 10_000);
    await waitFor(clock, () => started.every((pid) => !processes.alive(pid)), {
      deadline: clock.now() + 5000,
      maxIntervalMs: 50,
    });
    const errors: unknown[] = [];
    await service?.stop().catch((err) => errors.push(err));
    await tmux?.close();
    await mock.close();
    await Deno.remove(base, { recursive: true }).catch(() => {});
    if (errors.length > 0) throw errors[0];
  };
  try {
    const home = await prepareOpencode2Home(base, {
      mockUrl: mock.baseUrl,
      toolCall: true,
      ...(options.config ? { config: options.config } : {}),
    });
    tmux = await startTmuxServer({
      width: options.size?.width ?? 220,
      height: options.size?.height ?? 50,
    });
    const t = tmux;
    for (const [k, v] of Object.entries(home.env)) await t.tmux(["set-environment", "-g", k, v]);
    for (const k of FOREIGN_VARS) await t.tmux(["set-environment", "-g", "-u", k]);
    service = await startOpencode2Service(home);

    const panes = async () =>
      (await t.tmux(["list-panes", "-a", "-F", "#{pane_id}\t#{pane_pid}\t#{pane_start_command}"]))
        .trim().split("\n").filter((l) => l).map((l) => {
          const [id, pid, ...cmd] = l.split("\t");
          return { id, pid: Number(pid), startCommand: cmd.join("\t") };
        });
    const capture = (pane: string) => t.tmux(["capture-pane", "-p", "-t", pane]);

    const start = async (args: string[] = [], o: { cwd?: string } = {}): Promise<Tui2> => {
      const t0 = clock.now();
      // tmux 3.3a gives a new pane the PATH of the client that creates it (not `-e PATH=`).
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
        o.cwd ?? home.project,
        "--",
        "opencode",
        ...args,
      ], { timeoutMs: 5000, env: { PATH: home.env.PATH } });
      if (r.code !== 0) throw new Error(`tmux new-window: ${r.stderr}`);
      const [pane, pidText] = r.stdout.trim().split("\t");
      const pid = Number(pidText);
      started.push(pid);
      const screen = () => capture(pane).catch(() => "");
      await waitUntil(
        "the 2.x TUI's prompt box",
        async () => /Ask anything/.test(await screen()),
        90_000,
        screen,
      );
      return {
        pane,
        pid,
        firstDrawMs: clock.now() - t0,
        screen,
        async promptTask() {
          await t.tmux(["send-keys", "-t", pane, "-l", `${TASK_TRIGGER} go`]);
          await waitUntil(
            "the typed prompt",
            async () => (await screen()).includes(TASK_TRIGGER),
            10_000,
            screen,
          );
          await t.tmux(["send-keys", "-t", pane, "Enter"]);
          // The home screen (its logo) gives way to the session view once the prompt is taken.
          // An Enter that left the text in the box was lost: press it again (never for a
          // prompt already taken: the box is empty then). Seen once at load 17: the TUI stayed
          // home, its session never created.
          const left = async () => !HOME_LOGO.test(await screen());
          for (let round = 1;; round++) {
            if (
              await waitFor(clock, left, { deadline: clock.now() + 15_000, maxIntervalMs: 200 })
            ) break;
            const text = await screen();
            if (round >= 4) throw new Error(`the 2.x TUI did not take the prompt\n${text}`);
            if (text.includes(TASK_TRIGGER)) {
              console.error(`opencode2_tui: Enter not taken after ${round * 15} s; pressing again`);
              await t.tmux(["send-keys", "-t", pane, "Enter"]);
            }
          }
        },
        stop: () => stopProcess(pid, 10_000),
      };
    };

    return { base, tmux: t, mock, home, service, start, panes, capture, close };
  } catch (err) {
    await close().catch(() => {});
    throw err;
  }
}
