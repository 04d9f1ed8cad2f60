/**
 * `muxbridge demo`: the main job on an embedded default. Starts a private headless tmux server,
 * runs the real bridge (protocol, session loop, tmux backend) on a scripted child-session
 * lifecycle with a harmless stand-in for `opencode attach`, narrates every step with the real
 * pane ids, draws the layout, and leaves nothing running.
 *
 * @module
 */

import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runBridge } from "../../bridge/bridge.ts";
import { type Config, resolveConfig } from "../../config/config.ts";
import { MuxError } from "../../sys/errors.ts";
import { createLogger, type LogLevel } from "../../sys/log.ts";
import { waitFor } from "../../sys/clock.ts";
import { createPaneStore } from "../../session/pane_store.ts";
import { ownerStamp } from "../../sys/processes.ts";
import type { OutMessage } from "../../bridge/protocol.ts";
import { selectBackend } from "../../backend/select.ts";
import type { CliDeps, Command, Invocation } from "./_command.ts";
import type { BackendModule } from "../../backend/backend.ts";
import { Script, WAIT_MS } from "./_demo_script.ts";
import { drawPanes } from "./_layout_picture.ts";
import { laidOut, paneTitle, type Placed, placedPanes, type Tmux } from "./_demo_tmux.ts";

const STAND_IN = `#!/bin/sh
# muxbridge demo: a harmless stand-in for \`opencode attach\`. It shows the argv it was given
# and exits on Ctrl+C, as the real TUI does.
trap 'exit 0' INT TERM
printf '\\033[1mstand-in for: opencode attach\\033[0m\\n'
for a in "$@"; do printf '  %s\\n' "$a"; done
while :; do sleep 1; done
`;

const opened =
  (sid: string) => (m: OutMessage): m is Extract<OutMessage, { type: "pane.opened" }> =>
    m.type === "pane.opened" && m.sessionID === sid;
const closed =
  (sid: string) => (m: OutMessage): m is Extract<OutMessage, { type: "pane.closed" }> =>
    m.type === "pane.closed" && m.sessionID === sid;
const isBye = (m: OutMessage): m is Extract<OutMessage, { type: "bye" }> => m.type === "bye";

function info(id: string, title: string, parentID?: string, directory?: string) {
  return { id, title, ...(parentID ? { parentID } : {}), ...(directory ? { directory } : {}) };
}

/** What every step of the demo shares. */
interface Stage {
  tmux: Tmux;
  say: (text: string) => void;
  deps: CliDeps;
  script: Script;
  config: Config;
  /** The parent OpenCode pane, left of the children. */
  anchor: string;
  /** The children's directory (with quotes and spaces in its name, on purpose). */
  project: string;
}

/** The demo's scripted sessions: a parent and three children, one of them with a hostile title. */
const P = "ses_demoParent", C1 = "ses_demoChild1", C2 = "ses_demoChild2", C3 = "ses_demoChild3";
const TITLES: Record<string, string> = {
  [C1]: "explore: map the repository",
  [C2]: "review: check the tests",
  [C3]: "fix: $(touch /tmp/pwned) `id` 'quoted'\u001b]0;evil\u0007",
};

/** The `demo` command. */
export const demoCommand: Command = {
  name: "demo",
  summary: "Run the main job on a private tmux server with a scripted session lifecycle",
  usage: "muxbridge demo",
  help: [
    "Starts its own headless tmux server on a private socket (your tmux is never touched), runs",
    "the real bridge on a scripted lifecycle (three children open, one goes idle and closes, turns",
    "busy and reopens, one is deleted, then shutdown) with a stand-in for `opencode attach`,",
    "narrates each step with the real pane ids, draws the layout, and cleans up.",
    "",
    "Example:",
    "  muxbridge demo",
  ].join("\n"),
  flags: {},
  positionals: [0, 0],
  json: false,
  async run(inv, deps) {
    // The demo is built on tmux: it starts a private tmux server and opens its panes there.
    const tmuxBackend = deps.backends.filter((b) => b.name === "tmux");
    if (tmuxBackend.length === 0) {
      throw new MuxError("no_backend", "Cannot run the demo: this build has no tmux backend");
    }
    const say = (text: string) => deps.stdout(`${text}\n`);
    const dir = mkdtempSync(join(tmpdir(), "muxbridge-demo-"));
    // The socket lives in the demo's own directory, so removing that removes it too (tmux
    // leaves its socket file behind after kill-server).
    const socket = join(dir, "tmux.sock");
    const tmux: Tmux = (...args) =>
      // -u: UTF-8 output whatever the locale (see backends/tmux/_command.ts UTF8_FLAG).
      deps.run(["tmux", "-u", "-S", socket, ...args], { timeoutMs: 5000, env: { TMUX: "" } });
    let serverStarted = false;
    try {
      const version = await deps.run(["tmux", "-V"], { timeoutMs: 5000 });
      const { project, standIn } = writeFiles(dir);
      say(`muxbridge demo (${version.stdout.trim()}, private server -S ${socket})`);
      const anchor = await startServer(tmux, project);
      serverStarted = true;
      say(`  started tmux server; the parent OpenCode pane is ${anchor}`);
      const config = demoConfig(tmuxBackend, { socket, anchor, standIn, dir });
      const script = new Script();
      const bridge = startBridge(inv, deps, tmuxBackend, config, script, project);
      const stage: Stage = { tmux, say, deps, script, config, anchor, project };
      const closedAtBye = await playLifecycle(stage);
      await bridge;
      const left = await tmux("list-panes", "-a", "-F", "#{pane_id}");
      say(
        `6. shutdown -> bye, ${closedAtBye} owned panes closed; panes left: ${
          left.stdout.trim().split("\n").join(" ")
        } (the parent only)`,
      );
      return { text: "" };
    } finally {
      if (serverStarted) await tmux("kill-server").catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
      deps.stdout("done: the private tmux server is stopped and its files removed\n");
    }
  },
};

/** Writes the children's directory and the stand-in for `opencode` into the demo's directory. */
function writeFiles(dir: string): { project: string; standIn: string } {
  const project = join(dir, "project with 'quotes' and spaces");
  mkdirSync(project);
  const standIn = join(dir, "opencode");
  writeFileSync(standIn, STAND_IN);
  chmodSync(standIn, 0o755);
  return { project, standIn };
}

/** Starts the private server with the parent's pane; returns that pane's id. */
async function startServer(tmux: Tmux, project: string): Promise<string> {
  const parentCmd =
    `printf '\\033[1mOpenCode (parent session)\\033[0m\\nmuxbridge opens one pane per child session beside this one.\\n'; exec sleep 100000`;
  const started = await tmux(
    ...["-f", "/dev/null", "new-session", "-d", "-s", "demo", "-x", "160", "-y", "40"],
    ...["-c", project, "-P", "-F", "#{pane_id}", "--", "/bin/sh", "-c", parentCmd],
  );
  if (started.code !== 0) {
    throw new MuxError(
      "command_failed",
      `Cannot start the demo tmux server: ${started.stderr.trim()}`,
    );
  }
  const anchor = started.stdout.trim();
  await tmux("set-option", "-g", "pane-border-status", "top");
  await tmux("select-pane", "-t", anchor, "-T", "OpenCode (parent)");
  return anchor;
}

/** The demo's config: its private server, short delays so that the story moves, plain titles. */
function demoConfig(
  backends: readonly BackendModule[],
  at: { socket: string; anchor: string; standIn: string; dir: string },
): Config {
  return resolveConfig({
    backends,
    env: () => undefined,
    flags: {
      backend: "tmux",
      tmux: { socket_path: at.socket, target: at.anchor },
      opencode_bin: at.standIn,
      idle_close_delay_ms: 600,
      min_pane_lifetime_ms: 600,
      close_grace_ms: 250,
      poll_interval_ms: 500,
      // Plain titles: a marker would show whichever status landed last, run by run.
      status_in_title: false,
      state_dir: join(at.dir, "state"),
    },
  });
}

/** Runs the real bridge on the script's lines; resolves when it has said `bye`. */
function startBridge(
  inv: Invocation,
  deps: CliDeps,
  backends: readonly BackendModule[],
  config: Config,
  script: Script,
  project: string,
): Promise<unknown> {
  // Quiet by default (a child that gets no pane ends the demo with the reason anyway);
  // `--log-level debug` shows the loop's transitions.
  const log = createLogger((inv.global.logLevel ?? "error") as LogLevel);
  return runBridge({
    // Ctrl+C during the demo ends the bridge in order; the finally block stops the server.
    io: script.io((handler) => {
      const onAbort = () => handler("SIGINT");
      deps.signal.addEventListener("abort", onAbort, { once: true });
      return () => deps.signal.removeEventListener("abort", onAbort);
    }),
    log,
    version: deps.version,
    start: { directory: project },
    resolveConfig: () => config,
    // The demo's identity is empty on purpose: it never acts on the tmux you run it in.
    select: (c) =>
      selectBackend({
        run: deps.run,
        env: () => undefined,
        clock: deps.clock,
        config: c,
        identity: { backend: null, layers: [], harness: { name: null } },
        log,
      }, backends),
    loopDeps: (c, emit) => ({
      clock: deps.clock,
      log,
      emit,
      config: c,
      store: createPaneStore(c.state_dir!),
      processes: deps.processes,
      owner: ownerStamp(deps.processes),
    }),
  });
}

/**
 * The story, told step by step with the real pane ids, up to the bridge's `bye`; returns how many
 * panes the bridge closed at shutdown.
 */
async function playLifecycle(stage: Stage): Promise<number> {
  const { script, say, deps, project } = stage;
  const ready = await script.until(
    "ready",
    (m): m is Extract<OutMessage, { type: "ready" }> => m.type === "ready",
    deps,
  );
  say(`\n1. bridge ready: protocol ${ready.protocol}, backend ${ready.backend}`);
  script.send({ type: "bridge.hello", serverUrl: "http://127.0.0.1:4096/", directory: project });
  script.send({ type: "session.created", properties: { sessionID: P, info: info(P, "parent") } });
  const panes = await openChildren(stage);
  const reopened = await idleThenBusy(stage);
  await deleteAndRetitle(stage, panes[C1]);
  await picture(stage, [stage.anchor, panes[C1], reopened]);
  script.send({ type: "bridge.shutdown" });
  script.end();
  return (await script.until("bye", isBye, deps)).closed;
}

/** Step 2: three children created and busy, each gets a pane; returns their pane ids. */
async function openChildren(stage: Stage): Promise<Record<string, string>> {
  const { script, say, deps, project, tmux } = stage;
  // One child at a time, so that pane ids and places are the same in every run (the README
  // shows a captured run; concurrent opens would finish in any order).
  const panes: Record<string, string> = {};
  for (const c of [C1, C2, C3]) {
    script.send({
      type: "session.created",
      properties: { sessionID: c, info: info(c, TITLES[c], P, project) },
    });
    script.send({ type: "session.status", properties: { sessionID: c, status: { type: "busy" } } });
    panes[c] = (await script.until(`pane.opened for ${c}`, opened(c), deps)).paneId;
  }
  say(
    `2. three child sessions created and busy -> panes ${panes[C1]}, ${panes[C2]}, ${
      panes[C3]
    } opened (the root session gets none)`,
  );
  say(
    `   the hostile title of ${C3} arrives as plain text: ${
      JSON.stringify(await paneTitle(tmux, panes[C3]))
    }`,
  );
  await picture(stage, [stage.anchor, panes[C1], panes[C2], panes[C3]]);
  return panes;
}

/** Steps 3 and 4: a child goes idle and its pane closes, then it turns busy and reopens. */
async function idleThenBusy(stage: Stage): Promise<string> {
  const { script, say, deps } = stage;
  script.send({ type: "session.status", properties: { sessionID: C2, status: { type: "idle" } } });
  script.send({ type: "session.idle", properties: { sessionID: C2 } });
  const gone = await script.until(`pane.closed for ${C2}`, closed(C2), deps);
  say(
    `3. ${C2} went idle -> after idle_close_delay_ms its pane ${gone.paneId} closed (reason ${gone.reason}: Ctrl+C, wait, verify)`,
  );
  script.send({ type: "session.status", properties: { sessionID: C2, status: { type: "busy" } } });
  const again = await script.until(`pane.opened for ${C2}`, opened(C2), deps);
  say(`4. ${C2} turned busy again -> reopened as ${again.paneId}`);
  return again.paneId;
}

/** Step 5: one child is retitled, another deleted (its pane closes at once). */
async function deleteAndRetitle(stage: Stage, retitled: string): Promise<void> {
  const { script, say, deps, project, tmux } = stage;
  script.send({
    type: "session.updated",
    properties: { sessionID: C1, info: info(C1, "explore: done mapping", P, project) },
  });
  script.send({
    type: "session.deleted",
    properties: { sessionID: C3, info: info(C3, TITLES[C3], P, project) },
  });
  const gone = await script.until(`pane.closed for ${C3}`, closed(C3), deps);
  // A pane gets at most one title a second: wait for the new one to land.
  await waitFor(
    deps.clock,
    async () => (await paneTitle(tmux, retitled)) === "explore: done mapping",
    { deadline: deps.clock.now() + WAIT_MS, maxIntervalMs: 50, signal: deps.signal },
  );
  say(
    `5. ${C3} was deleted -> pane ${gone.paneId} closed at once (reason ${gone.reason}); ${C1} retitled to ${
      JSON.stringify(await paneTitle(tmux, retitled))
    }`,
  );
}

/** Draws the window once the layout pass has laid out exactly `expected`. */
async function picture(stage: Stage, expected: readonly string[]): Promise<void> {
  const { tmux, say, deps, config } = stage;
  // The layout pass runs shortly after an open or close: draw once it has landed.
  let panes: Placed[] = [];
  const settled = await waitFor(deps.clock, async () => {
    panes = await placedPanes(tmux);
    return laidOut(panes, expected, config);
  }, { deadline: deps.clock.now() + WAIT_MS, maxIntervalMs: 50, signal: deps.signal });
  if (deps.signal.aborted) throw new MuxError("interrupted", "Interrupted");
  if (!settled) {
    throw new MuxError(
      "timed_out",
      `Cannot finish the demo: the layout of ${
        expected.join(", ")
      } did not settle within ${WAIT_MS} ms`,
    );
  }
  const boxes = panes.map((p) => ({
    id: p.id,
    left: p.left,
    top: p.top,
    width: p.width,
    height: p.height,
    label: p.title,
  }));
  say("");
  for (const line of drawPanes(boxes, panes[0].windowWidth, panes[0].windowHeight)) {
    say(`   ${line}`);
  }
  say("");
}
