/**
 * The tmux backend's status place on a real, private tmux 3.3a server: the pane user option
 * `@muxbridge-status` set with the marks when a pane opens and with the title in one tmux call
 * after, unset for an unknown state, stored verbatim (never expanded), and a pane that is gone
 * read as `pane_not_found`. A user's `pane-border-format` with `#{q/h:…}` shows both literally.
 */

import assert from "node:assert/strict";
import { createTmuxBackend } from "../../backends/tmux/backend.ts";
import type { BackendDeps, SpawnRequest } from "../../lib/backend/backend.ts";
import type { PaneStatus } from "../../lib/backend/pane_status.ts";
import { createRealClock } from "../../lib/sys/clock.ts";
import { silentLogger } from "../../lib/sys/log.ts";
import { cleanTitle, validateSessionId } from "../../lib/sys/validate.ts";
import { detectAll, type FullConfig, resolveConfig } from "../helpers/config.ts";
import { fakeEnv } from "../fakes/fake_env.ts";
import { assertMuxError } from "../helpers/assert_mux_error.ts";
import { forgedPaneId } from "../helpers/ids.ts";
import { requires, tool } from "../helpers/requires.ts";
import { startTmuxServer, type TmuxServer } from "../helpers/tmux_server.ts";
import { request } from "./_spawn_request.ts";

const SID = validateSessionId("ses_status1");

function backendOn(server: TmuxServer) {
  const env = fakeEnv({});
  const deps: BackendDeps<FullConfig> = {
    run: server.runner,
    env,
    clock: createRealClock(),
    config: resolveConfig({
      env,
      flags: {
        backend: "tmux",
        command_timeout_ms: 3000,
        tmux: { socket_name: server.socketName, target: server.anchorPane },
      },
    }),
    identity: detectAll(env),
    log: silentLogger,
  };
  return createTmuxBackend(deps);
}

const status = (state: PaneStatus["state"], title: string): PaneStatus => ({
  title,
  state,
  sessionId: SID,
});

/** A request for child {@linkcode SID}'s pane ("t"), running `sleep` in the scratch directory. */
const sleeper = (server: TmuxServer, extra: Partial<SpawnRequest> = {}): SpawnRequest =>
  request({
    sessionId: SID,
    title: "t",
    argv: ["sleep", "100000"],
    cwd: server.dir,
    owner: "4242:777",
    ...extra,
  });

async function shown(server: TmuxServer, paneId: string): Promise<[string, string]> {
  const out = await server.tmux([
    "display-message",
    "-p",
    "-t",
    paneId,
    "#{pane_title}\t#{@muxbridge-status}",
  ]);
  const [title, state] = out.replace(/\n$/, "").split("\t");
  return [title, state];
}

Deno.test(
  "tmux spawn() sets @muxbridge-status with the marks; setStatus() sets title and state in one call",
  requires("tmux status option", [tool("tmux")]),
  async () => {
    const server = await startTmuxServer();
    try {
      const backend = backendOn(server);
      const { paneId } = await backend.spawn(sleeper(server, {
        title: "[busy] map the repository",
        status: status("busy", "[busy] map the repository"),
      }));
      assert.deepEqual(await shown(server, paneId), ["[busy] map the repository", "busy"]);
      const calls: string[][] = [];
      const counting = backendOn({
        ...server,
        runner: (argv, opts) => (calls.push([...argv]), server.runner(argv, opts)),
      });
      await counting.setStatus!(paneId, status("retry", "[retry 2] map the repository"));
      assert.equal(calls.length, 1, "one tmux process for title and state");
      assert.deepEqual(await shown(server, paneId), ["[retry 2] map the repository", "retry"]);
      await backend.setStatus!(paneId, status("unknown", "map the repository"));
      assert.deepEqual(await shown(server, paneId), ["map the repository", ""]);
      const { paneId: other } = await backend.spawn(sleeper(server, {
        sessionId: validateSessionId("ses_status2"),
        title: "quiet",
        status: status("unknown", "quiet"),
      }));
      assert.deepEqual(await shown(server, other), ["quiet", ""], "no state before one is known");
    } finally {
      await server.close();
    }
  },
);

Deno.test(
  "tmux setStatus() keeps a hostile title and the state literal, and a format with q/h shows them as text",
  requires("tmux status option", [tool("tmux")]),
  async () => {
    const server = await startTmuxServer();
    try {
      const backend = backendOn(server);
      const title = cleanTitle("[busy] #{pane_id} #(touch pwned) #[fg=red]red ##[x] %0 $(id)");
      const { paneId } = await backend.spawn(sleeper(server));
      await backend.setStatus!(paneId, status("error", title));
      // Stored as the title always is (`escapeTitle`): nothing expanded, and every `#[` after an
      // even run of `#`, so that even a plain `#{pane_title}` draws it as text.
      const stored = title.replace(/#+(?=\[)/g, (run) => run + run);
      assert.deepEqual(await shown(server, paneId), [stored, "error"]);
      // The border format the README gives, expanded for this pane: nothing in it is a format.
      const border = await server.tmux([
        "display-message",
        "-p",
        "-t",
        paneId,
        "#{?@muxbridge-status,[#{q/h:@muxbridge-status}] ,}#{q/h:pane_title}",
      ]);
      assert.equal(border.trimEnd(), `[error] ${stored.replaceAll("#", "##")}`);
    } finally {
      await server.close();
    }
  },
);

Deno.test(
  "tmux setStatus() on a pane closed behind muxbridge's back is pane_not_found",
  requires("tmux status option", [tool("tmux")]),
  async () => {
    const server = await startTmuxServer();
    try {
      const backend = backendOn(server);
      const { paneId } = await backend.spawn(sleeper(server));
      await server.tmux(["kill-pane", "-t", paneId]);
      await assertMuxError(backend.setStatus!(paneId, status("idle", "t")), "pane_not_found");
      await assertMuxError(
        backend.setStatus!(forgedPaneId("%999"), status("idle", "t")),
        "pane_not_found",
      );
    } finally {
      await server.close();
    }
  },
);

Deno.test(
  "tmux setStatus() shows a waiting child; focus() brings its window and pane to the front, and a gone pane is pane_not_found",
  requires("tmux status option", [tool("tmux")]),
  async () => {
    const server = await startTmuxServer();
    try {
      const backend = backendOn(server);
      const { paneId } = await backend.spawn(sleeper(server));
      await backend.setStatus!(paneId, {
        ...status("waiting", "[needs you] map the repository"),
        waitingFor: "permission",
      });
      assert.deepEqual(await shown(server, paneId), ["[needs you] map the repository", "waiting"]);
      // The user moved on to a window of their own, and to another pane beside the child's.
      await server.tmux(["new-window", "-d", "-t", "t:", "sleep", "100000"]);
      await server.tmux(["select-window", "-t", "t:1"]);
      await server.tmux(["select-pane", "-t", server.anchorPane]);
      const active = (pane: string) =>
        server.tmux(["display-message", "-p", "-t", pane, "#{window_active}#{pane_active}"]);
      assert.equal((await active(paneId)).trim(), "00");
      await backend.focus!(paneId);
      assert.equal((await active(paneId)).trim(), "11");
      await server.tmux(["kill-pane", "-t", paneId]);
      await assertMuxError(backend.focus!(paneId), "pane_not_found");
    } finally {
      await server.close();
    }
  },
);
