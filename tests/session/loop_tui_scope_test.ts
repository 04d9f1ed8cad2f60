/**
 * The session loop with `scope: "tui"` (one OpenCode 2.x service serves every TUI of the user):
 * only children of sessions this bridge's TUI showed get panes here, the TUI that showed a parent
 * last wins over another live one, and a 2.x server's children run 2.x's pane program.
 */

import assert from "node:assert/strict";
import { createOpencodeClient } from "../../lib/opencode/client.ts";
import type { Credentials } from "../../lib/opencode/credentials.ts";
import type { LineId } from "../../lib/opencode/line.ts";
import type { OutMessage } from "../../lib/bridge/protocol.ts";
import type { LoopContext } from "../../lib/session/loop.ts";
import type { Claims } from "../../lib/session/views.ts";
import { validateSessionId as sid } from "../../lib/sys/validate.ts";
import { createFakeClock } from "../fakes/fake_clock.ts";
import { createFakeOpencode } from "../fakes/fake_opencode.ts";
import { fakeProcesses } from "../fakes/memory_store.ts";
import { loopHarness } from "../helpers/loop_harness.ts";

/** Claims in memory, shared by the loops of one test (one user's bridges). */
function memoryClaims(owner: string, shared: Map<string, string>): Claims {
  return {
    claim: (id) => void shared.set(id, owner),
    holder: (id) => shared.get(id) ?? null,
    release: (id) => {
      if (shared.get(id) === owner) shared.delete(id);
    },
  };
}

function setup(
  options: { owner?: string; claims?: Map<string, string>; line?: LineId; alive?: number[] } = {},
) {
  const clock = createFakeClock();
  const server = createFakeOpencode();
  server.line = 2;
  server.version = "2.1.2";
  const out: OutMessage[] = [];
  const owner = options.owner ?? "4242:100";
  const processes = fakeProcesses(options.alive ?? []);
  const ctx: Partial<LoopContext> = {
    serverUrl: "http://127.0.0.1:49374",
    scope: "tui",
    auth: { username: "opencode", password: "pw" },
    ...(options.line === undefined ? {} : { line: options.line }),
  };
  server.password = "pw";
  const h = loopHarness({
    clock,
    processes,
    flags: { poll_interval_ms: 2000, idle_close_delay_ms: 3000, min_pane_lifetime_ms: 0 },
    deps: {
      owner,
      emit: (m) => out.push(m),
      server: (url: string, auth?: Credentials, line?: LineId) =>
        createOpencodeClient({
          url,
          fetch: server.fetch,
          clock,
          ...(auth ? { auth } : {}),
          ...(line === undefined ? {} : { line }),
        }),
      ...(options.claims ? { claims: memoryClaims(owner, options.claims) } : {}),
    },
    ctx,
  });
  return { ...h, server, out };
}

const child = (id: string, parent: string) => ({
  kind: "created" as const,
  info: { id: sid(id), parentId: sid(parent), title: `child ${id}`, directory: "/p" },
});
const busy = (id: string) => ({
  kind: "status" as const,
  sessionId: sid(id),
  status: "busy" as const,
});
const view = (id: string) => ({ kind: "view" as const, sessionId: sid(id) });
const said = (out: OutMessage[]) =>
  out.map((m) =>
    `${m.type} ${"sessionID" in m ? m.sessionID : ""} ${"reason" in m ? m.reason : ""}`.trim()
  );

Deno.test("scope tui: a child whose parent this TUI never showed gets pane.skipped not_driven and no pane", async () => {
  const h = setup();
  h.server.busy("ses_c");
  h.loop.handle(child("ses_c", "ses_elsewhere"));
  h.loop.handle(busy("ses_c"));
  await h.clock.advance(100);
  assert.deepEqual(said(h.out), ["pane.skipped ses_c not_driven"]);
  const skipped = h.out[0];
  assert.ok(skipped.type === "pane.skipped" && /not open in this OpenCode TUI/.test(skipped.hint));
  assert.equal(h.backend.panes.size, 0);
  assert.equal(h.loop.records().length, 0, "nothing is tracked for another TUI's child");
});

Deno.test("scope tui: after bridge.view of the parent its children get panes running 2.x's TUI on the child", async () => {
  const h = setup();
  h.loop.handle(view("ses_parent"));
  h.server.busy("ses_c");
  h.loop.handle(child("ses_c", "ses_parent"));
  h.loop.handle(busy("ses_c"));
  await h.clock.advance(100);
  assert.deepEqual(said(h.out), ["pane.opened ses_c"]);
  const pane = [...h.backend.panes.values()][0];
  const argv = pane.req.argv;
  const at = argv.indexOf("--server");
  assert.deepEqual(argv.slice(at - 1), [
    "opencode",
    "--server",
    "http://127.0.0.1:49374",
    "--session",
    "ses_c",
    "/p",
  ]);
  assert.equal(pane.req.env.OPENCODE_PASSWORD, "pw");
  assert.equal(pane.req.env.MUXBRIDGE_PANE_SESSION, "ses_c");
  assert.ok(!argv.some((a) => a.includes("pw") && a !== "/p"), "no password on argv");
  // The server's line was found by the client (2.x answers /api/info), then told to the record.
  assert.ok(h.server.requests.includes("GET /api/info"));
});

Deno.test("scope tui: a grandchild of a tracked child is this bridge's too", async () => {
  const h = setup({ line: 2 });
  h.loop.handle(view("ses_parent"));
  for (const [id, parent] of [["ses_c", "ses_parent"], ["ses_g", "ses_c"]]) {
    h.server.busy(id);
    h.loop.handle(child(id, parent));
    h.loop.handle(busy(id));
  }
  await h.clock.advance(100);
  assert.deepEqual(said(h.out).sort(), ["pane.opened ses_c", "pane.opened ses_g"]);
});

Deno.test("scope tui: of two live TUIs that showed a parent, only the latest opens its child's pane", async () => {
  const claims = new Map<string, string>();
  // Both bridges are alive (their owner pids run); B showed the parent after A.
  const a = setup({ owner: "1001:100", claims, alive: [1001, 1002], line: 2 });
  const b = setup({ owner: "1002:100", claims, alive: [1001, 1002], line: 2 });
  a.loop.handle(view("ses_parent"));
  b.loop.handle(view("ses_parent"));
  for (const h of [a, b]) {
    h.server.busy("ses_c");
    h.loop.handle(child("ses_c", "ses_parent"));
    h.loop.handle(busy("ses_c"));
    await h.clock.advance(100);
  }
  assert.deepEqual(said(a.out), ["pane.skipped ses_c not_driven"]);
  assert.ok(a.out[0].type === "pane.skipped" && /Another OpenCode TUI/.test(a.out[0].hint));
  assert.deepEqual(said(b.out), ["pane.opened ses_c"]);
});

Deno.test("scope tui: a claim left by a bridge that is gone counts for nothing", async () => {
  const claims = new Map<string, string>([["ses_parent", "999:100"]]);
  const h = setup({ owner: "1001:100", claims, alive: [1001], line: 2 });
  h.loop.handle(view("ses_other"));
  h.loop.handle(view("ses_parent"));
  claims.set("ses_parent", "999:100"); // a dead bridge wrote last
  h.server.busy("ses_c");
  h.loop.handle(child("ses_c", "ses_parent"));
  h.loop.handle(busy("ses_c"));
  await h.clock.advance(100);
  assert.deepEqual(said(h.out), ["pane.opened ses_c"]);
});

Deno.test("scope tui: a deleted parent is forgotten and its claim released; shutdown releases the rest", async () => {
  const claims = new Map<string, string>();
  const h = setup({ owner: "1001:100", claims, alive: [1001], line: 2 });
  h.loop.handle(view("ses_a"));
  h.loop.handle(view("ses_b"));
  assert.deepEqual([...claims.keys()].sort(), ["ses_a", "ses_b"]);
  h.loop.handle({ kind: "deleted", info: { id: sid("ses_a"), title: "" } });
  assert.deepEqual([...claims.keys()], ["ses_b"]);
  await h.loop.shutdown(true);
  assert.deepEqual([...claims.keys()], []);
});

Deno.test("scope server (1.x): every child is this bridge's, views change nothing", async () => {
  const clock = createFakeClock();
  const out: OutMessage[] = [];
  const h = loopHarness({ clock, deps: { emit: (m) => out.push(m) } });
  h.loop.handle(child("ses_c", "ses_p"));
  h.loop.handle(busy("ses_c"));
  await clock.advance(100);
  assert.deepEqual(said(out), ["pane.opened ses_c"]);
});

Deno.test("a 2.x failed turn shows [error] and then closes like an idle child", async () => {
  const h = setup({ line: 2 });
  h.loop.handle(view("ses_parent"));
  h.server.busy("ses_c");
  h.loop.handle(child("ses_c", "ses_parent"));
  h.loop.handle(busy("ses_c"));
  await h.clock.advance(100);
  h.server.idle("ses_c");
  h.loop.handle({ kind: "status", sessionId: sid("ses_c"), status: "idle", failed: true });
  await h.clock.advance(1100);
  const titles = h.backend.log.filter((l) => l.startsWith("title "));
  assert.ok(titles.some((t) => t.includes("[error]")), titles.join("; "));
  await h.clock.advance(5000);
  assert.ok(said(h.out).includes("pane.closed ses_c idle"), said(h.out).join("; "));
});

Deno.test("a server whose password changed (a 2.x service restarted with a new one): the open panes restart with the new one", async () => {
  const h = setup({ line: 2 });
  h.loop.handle(view("ses_parent"));
  h.server.busy("ses_c");
  h.loop.handle(child("ses_c", "ses_parent"));
  h.loop.handle(busy("ses_c"));
  await h.clock.advance(100);
  assert.deepEqual(said(h.out), ["pane.opened ses_c"]);
  const first = [...h.backend.panes.values()][0];
  assert.equal(first.req.env.OPENCODE_PASSWORD, "pw");
  // The service restarts with another password; the plugin (or the service file) says so.
  h.server.password = "new-pw";
  h.loop.setContext({ ...h.loop.context, auth: { username: "opencode", password: "new-pw" } });
  await h.clock.advance(2500); // the next poll uses the new credentials
  assert.deepEqual(said(h.out), [
    "pane.opened ses_c",
    "pane.closed ses_c restart",
    "pane.opened ses_c",
  ]);
  const panes = [...h.backend.panes.values()];
  assert.equal(panes.length, 1);
  assert.equal(panes[0].req.env.OPENCODE_PASSWORD, "new-pw");
});
