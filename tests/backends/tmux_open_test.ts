/**
 * A pane's life in as few tmux calls as it takes, on a real private server: one call to open
 * (split, marks, title, layout) once the session is listed, the interrupt and one call to
 * close, and a stale listing refused by tmux rather than acted on.
 */

import assert from "node:assert/strict";
import { createTmuxBackend } from "../../backends/tmux/backend.ts";
import { layoutGuard, unchangedGuard } from "../../backends/tmux/_open.ts";
import { PANE_FORMAT, type PaneRow, parsePaneRows } from "../../backends/tmux/_parse.ts";
import { resolveConfig } from "../helpers/config.ts";
import { isMuxError } from "../../lib/sys/errors.ts";
import { createRealClock } from "../../lib/sys/clock.ts";
import type { Runner } from "../../lib/sys/exec.ts";
import { silentLogger } from "../../lib/sys/log.ts";
import { createProcesses } from "../../lib/sys/processes.ts";
import { closePane } from "../../lib/session/close_pane.ts";
import { startTmuxServer, type TmuxServer } from "../helpers/tmux_server.ts";
import { validateSessionId } from "../../lib/sys/validate.ts";

const clock = createRealClock();
const processes = createProcesses();
const SLEEP = ["sleep", "100000"];

/** A backend on the server that records every tmux call it makes. */
function counted(server: TmuxServer, flags: Record<string, unknown> = {}) {
  const calls: Array<{ argv: readonly string[]; stdin?: string }> = [];
  const run: Runner = (argv, opts) => {
    calls.push({ argv, ...(opts.stdin !== undefined ? { stdin: opts.stdin } : {}) });
    return server.runner(argv, opts);
  };
  const backend = createTmuxBackend({
    run,
    env: () => undefined,
    clock,
    config: resolveConfig({
      env: () => undefined,
      flags: { tmux: { socket_name: server.socketName, target: server.anchorPane }, ...flags },
    }),
    identity: { backend: null, layers: [], harness: { name: null } },
    log: silentLogger,
  });
  return { backend, calls };
}

const request = (sessionId: string, env: Record<string, string> = {}) => ({
  sessionId: validateSessionId(sessionId),
  title: `title ${sessionId}`,
  argv: SLEEP,
  cwd: "/",
  env,
  owner: "4242:777",
});

async function rows(server: TmuxServer): Promise<PaneRow[]> {
  return parsePaneRows(await server.tmux(["list-panes", "-a", "-F", PANE_FORMAT]));
}

async function withServer(fn: (server: TmuxServer) => Promise<void>): Promise<void> {
  const server = await startTmuxServer();
  try {
    await fn(server);
  } finally {
    await server.close();
  }
}

Deno.test("unchangedGuard() escapes the layout so tmux's format parser reads it literally", () => {
  const layout = "7b93,200x50,0,0[200x25,0,0{100x25,0,0,0,99x25,101,0,2},200x24,0,26,1]";
  const guard = unchangedGuard({ windowId: "@3", index: 2, windowLayout: layout });
  assert.equal(
    guard,
    "#{&&:#{==:#{pane_index},2},#{&&:#{==:#{window_id},@3},#{==:#{window_layout}," +
      "7b93#,200x50#,0#,0[200x25#,0#,0{100x25#,0#,0#,0#,99x25#,101#,0#,2#}#,200x24#,0#,26#,1]}}}",
  );
  assert.ok(guard.endsWith(layoutGuard({ windowId: "@3", windowLayout: layout }) + "}"));
});

Deno.test("tmux spawn() opens a pane in one call once the session is listed, credentials off argv", async () => {
  await withServer(async (server) => {
    const { backend, calls } = counted(server);
    const secret = "s3cr3t-#{pane_id}-;";
    const a = await backend.spawn(request("ses_one", { OPENCODE_SERVER_PASSWORD: secret }));
    assert.equal(calls.length, 2, "the first open lists the session, then opens");
    const b = await backend.spawn(request("ses_two", { OPENCODE_SERVER_PASSWORD: secret }));
    assert.equal(calls.length, 3, "later opens decide on the listing the last call returned");
    for (const call of calls) {
      assert.ok(!call.argv.some((arg) => arg.includes(secret)), "the password is not on argv");
    }
    assert.ok(calls.slice(1).every((c) => c.stdin?.includes(secret)), "it goes on stdin");
    const all = await rows(server);
    for (const [pane, session] of [[a.paneId, "ses_one"], [b.paneId, "ses_two"]]) {
      const row = all.find((r) => r.paneId === pane)!;
      assert.equal(row.session, session);
      assert.equal(row.owner, "4242:777");
      assert.equal(row.title, `title ${session}`);
    }
    assert.equal(all.find((r) => r.paneId === server.anchorPane)!.active, true, "focus stays");
    assert.equal(a.arranged, true);
    // The layout came with the open: the two owned panes share the column evenly.
    const [ra, rb] = [a, b].map((p) => all.find((r) => r.paneId === p.paneId)!);
    assert.ok(Math.abs(ra.height - rb.height) <= 1, `${ra.height} ${rb.height}`);
  });
});

Deno.test("tmux spawn() decides again when the session changed since its listing, and never marks a user pane", async () => {
  await withServer(async (server) => {
    const { backend, calls } = counted(server);
    const a = await backend.spawn(request("ses_first"));
    // The user splits the anchor: every pane after it moves one index on, and the layout changes.
    const user = await server.userPane("-h");
    const before = calls.length;
    const b = await backend.spawn(request("ses_second"));
    assert.equal(calls.length - before, 2, "the refused call, then the one on its fresh listing");
    const all = await rows(server);
    const marked = all.filter((r) => r.session !== "").map((r) => [r.paneId, r.session]);
    assert.deepEqual(
      marked.sort(),
      [[a.paneId, "ses_first"], [b.paneId, "ses_second"]].sort(),
      `only muxbridge's panes carry marks (user pane ${user})`,
    );
    assert.equal(all.find((r) => r.paneId === user)!.owner, "");
  });
});

Deno.test("tmux closePane() of a recorded program costs the interrupt and one call", async () => {
  await withServer(async (server) => {
    const { backend, calls } = counted(server);
    const opened = await backend.spawn(request("ses_close"));
    const before = calls.length;
    const result = await closePane(backend, opened.paneId, {
      graceMs: 2000,
      clock,
      processes,
      pid: opened.pid,
      pidStart: processes.startTime(opened.pid!),
    });
    assert.deepEqual(result, { alreadyGone: false, killed: false, programTerminated: false });
    assert.deepEqual(calls.slice(before).map((c) => c.argv[4]), ["send-keys", "if-shell"]);
    assert.equal((await rows(server)).some((r) => r.paneId === opened.paneId), false);
    // The close's call listed the session after the kill: the next open needs no listing.
    await backend.spawn(request("ses_next"));
    assert.equal(calls.length - before, 3);
  });
});

Deno.test("tmux spawn() keeps a pane it opened and marked when only the listing after it fails", async () => {
  await withServer(async (server) => {
    const { backend } = counted(server, { placement: "window" });
    await backend.spawn(request("ses_w1")); // a new overflow window
    await backend.spawn(request("ses_w2")); // split in it, decided on the kept listing
    // The anchor goes (the user closed OpenCode's pane); the overflow window is unchanged, so
    // the next split passes its guard, and the listing of the anchor's session after it fails.
    await server.tmux(["kill-pane", "-t", server.anchorPane]);
    const opened = await backend.spawn(request("ses_w3"));
    const row = (await rows(server)).find((r) => r.paneId === opened.paneId);
    assert.equal(row?.session, "ses_w3", "the pane stays, marked");
    assert.equal(opened.arranged, false);
    // The next open has no anchor and says so.
    await assert.rejects(
      backend.spawn(request("ses_w4")),
      (err: unknown) => isMuxError(err, "pane_not_found"),
    );
  });
});
