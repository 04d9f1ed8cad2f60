import assert from "node:assert/strict";
import { MuxError } from "../../lib/sys/errors.ts";
import type { OutMessage } from "../../lib/bridge/protocol.ts";
import type { LoopContext } from "../../lib/session/loop.ts";
import { createFakeBackend } from "../fakes/fake_backend.ts";
import { type LoopHarness, loopHarness } from "../helpers/loop_harness.ts";
import { validateSessionId as sid } from "../../lib/sys/validate.ts";
import { HOLD_SCRIPT } from "../../lib/session/pane_program.ts";

function setup(
  overrides: Record<string, unknown> = {},
  ctx: Partial<LoopContext> = {},
): LoopHarness {
  return loopHarness({
    flags: {
      idle_close_delay_ms: 1000,
      min_pane_lifetime_ms: 1000,
      close_grace_ms: 250,
      poll_interval_ms: 2000,
      ...overrides,
    },
    ctx,
  });
}

const created = (id: string, title = `title of ${id}`, parentId: string | null = "ses_parent") => ({
  kind: "created" as const,
  info: {
    id: sid(id),
    title,
    ...(parentId ? { parentId: sid(parentId) } : {}),
    directory: "/srv/project",
  },
});
const status = (id: string, s: "busy" | "idle") => ({
  kind: "status" as const,
  sessionId: sid(id),
  status: s,
});
const kinds = (out: OutMessage[]) =>
  out.map((m) =>
    `${m.type}${"sessionID" in m ? ` ${m.sessionID}` : ""}${"reason" in m ? ` ${m.reason}` : ""}`
  );

Deno.test("SessionLoop opens exactly one pane per child however created and busy repeat", async () => {
  const h = setup();
  h.loop.handle(created("ses_a"));
  h.loop.handle(created("ses_a"));
  for (let i = 0; i < 3; i++) h.loop.handle(status("ses_a", "busy"));
  h.loop.handle(created("ses_a"));
  await h.clock.advance(100);
  assert.equal(h.backend.panes.size, 1);
  assert.deepEqual(kinds(h.out), ["pane.opened ses_a"]);
  const pane = [...h.backend.panes.values()][0];
  // The attach command, inside the start command that holds the pane when it fails.
  assert.deepEqual(pane.req.argv.slice(0, 4), ["/bin/sh", "-c", HOLD_SCRIPT, "muxbridge-hold"]);
  assert.deepEqual(pane.req.argv.slice(4, 9), [
    "30",
    "4",
    `/memory/exits/${pane.req.token}`,
    "1",
    // The line the pane shows until the attach command draws.
    '[muxbridge] attaching to "title of ses_a" (ses_a) on http://127.0.0.1:4096 …',
  ]);
  assert.deepEqual(pane.req.argv.slice(9), [
    "opencode",
    "attach",
    "http://127.0.0.1:4096",
    "--session",
    "ses_a",
    "--dir",
    "/srv/project",
  ]);
  assert.equal(pane.req.cwd, "/srv/project");
  assert.equal(pane.req.owner, "4242:100");
  assert.equal(h.store.records.size, 1);
});

Deno.test("SessionLoop gives root sessions no pane and says nothing", async () => {
  const h = setup();
  h.loop.handle(created("ses_root", "root", null));
  h.loop.handle(status("ses_root", "busy"));
  await h.clock.advance(100);
  assert.equal(h.backend.panes.size, 0);
  assert.deepEqual(h.out, []);
});

Deno.test("SessionLoop opens 50 children created at once with no duplicate", async () => {
  const h = setup();
  const release = h.backend.holdSpawns();
  for (let i = 0; i < 50; i++) {
    h.loop.handle(created(`ses_c${i}`));
    h.loop.handle(status(`ses_c${i}`, "busy"));
    h.loop.handle(created(`ses_c${i}`));
  }
  release();
  await h.clock.advance(100);
  assert.equal(h.backend.panes.size, 50);
  assert.equal(new Set([...h.backend.panes.values()].map((p) => p.req.sessionId)).size, 50);
  assert.equal(h.out.filter((m) => m.type === "pane.opened").length, 50);
});

Deno.test("SessionLoop closes an idle child's pane after the delay with interrupt first", async () => {
  const h = setup();
  h.loop.handle(created("ses_a"));
  await h.clock.advance(10);
  h.loop.handle(status("ses_a", "busy"));
  h.loop.handle(status("ses_a", "idle"));
  await h.clock.advance(900);
  assert.equal(h.backend.panes.size, 1, "not before the delay");
  await h.clock.advance(200);
  assert.equal(h.backend.panes.size, 0);
  assert.deepEqual(kinds(h.out), ["pane.opened ses_a", "pane.closed ses_a idle"]);
  assert.ok(h.backend.log.includes("interrupt %1"));
  assert.ok(
    !h.backend.log.includes("kill %1"),
    "the program ended on the interrupt: no kill needed",
  );
  assert.equal(h.store.records.size, 0);
});

Deno.test("SessionLoop kills a pane whose program ignores the interrupt after the grace period", async () => {
  const h = setup();
  h.backend.exitsOnInterrupt = false;
  h.loop.handle(created("ses_a"));
  await h.clock.advance(10);
  h.loop.handle({
    kind: "deleted",
    info: { id: sid("ses_a"), title: "", parentId: sid("ses_parent") },
  });
  await h.clock.advance(200);
  assert.equal(h.backend.panes.size, 1, "still within the grace period");
  await h.clock.advance(100);
  assert.equal(h.backend.panes.size, 0);
  assert.deepEqual(h.backend.log.slice(-2), ["interrupt %1", "kill %1"]);
  assert.deepEqual(kinds(h.out).at(-1), "pane.closed ses_a deleted");
});

Deno.test("SessionLoop retries a failing close, then reports pane.failed and marks the record stuck", async () => {
  const h = setup();
  h.loop.handle(created("ses_a"));
  await h.clock.advance(10);
  h.backend.failNext("interrupt", new MuxError("timed_out", "tmux hung"), 3);
  h.loop.handle({
    kind: "deleted",
    info: { id: sid("ses_a"), title: "", parentId: sid("ses_parent") },
  });
  await h.clock.advance(5000);
  const failed = h.out.find((m) => m.type === "pane.failed");
  assert.ok(
    failed && failed.type === "pane.failed" && failed.op === "close" && failed.code === "timed_out",
  );
  assert.equal(h.backend.log.filter((l) => l === "interrupt %1").length, 3);
  assert.equal([...h.store.records.values()][0]?.stuck, true);
  assert.deepEqual(h.loop.panes(), [{ sessionId: "ses_a", paneId: "%1", state: "stuck" }]);
});

Deno.test("SessionLoop closes a pane that opens after its session was deleted", async () => {
  const h = setup();
  const release = h.backend.holdSpawns();
  h.loop.handle(created("ses_a"));
  await h.clock.flush();
  h.loop.handle({
    kind: "deleted",
    info: { id: sid("ses_a"), title: "", parentId: sid("ses_parent") },
  });
  release();
  await h.clock.advance(100);
  assert.equal(h.backend.panes.size, 0);
  assert.deepEqual(kinds(h.out), ["pane.opened ses_a", "pane.closed ses_a deleted"]);
});

Deno.test("SessionLoop reports a pane closed behind its back as gone and reopens on the next busy", async () => {
  const h = setup();
  h.loop.handle(created("ses_a"));
  h.loop.handle(status("ses_a", "busy"));
  await h.clock.advance(10);
  h.backend.vanish("%1");
  await h.clock.advance(2100);
  assert.deepEqual(kinds(h.out), ["pane.opened ses_a", "pane.closed ses_a gone"]);
  assert.equal(h.store.records.size, 0);
  h.loop.handle(status("ses_a", "busy"));
  await h.clock.advance(10);
  assert.equal(h.backend.panes.size, 0, "a repeated busy does not reopen a pane the user closed");
  h.loop.handle(status("ses_a", "idle"));
  h.loop.handle(status("ses_a", "busy"));
  await h.clock.advance(10);
  assert.equal(h.backend.panes.size, 1);
});

Deno.test("SessionLoop terminates a pane program that survived its pane", async () => {
  const h = setup();
  h.backend.spawn = async function (req) {
    const pane = await createFakeBackend().spawn.call(this, req);
    return { ...pane, pid: 777 };
  };
  h.processes.living.add(777);
  h.processes.ignores.set(777, new Set(["SIGTERM"]));
  h.loop.handle(created("ses_a"));
  await h.clock.advance(10);
  h.backend.panes.set("%1", {
    paneId: "%1",
    req: {} as never,
    title: "",
    dead: false,
    exitsOnInterrupt: true,
  });
  h.backend.vanish("%1");
  await h.clock.advance(2000);
  await h.clock.advance(1000);
  assert.deepEqual(h.processes.signals, ["SIGTERM -777", "SIGKILL -777"]);
});

Deno.test("SessionLoop retitles an open pane on session.updated", async () => {
  const h = setup();
  h.loop.handle(created("ses_a", "first"));
  await h.clock.advance(10);
  h.loop.handle({
    kind: "updated",
    info: { id: sid("ses_a"), title: "second\u001b]0;x\u0007", parentId: sid("ses_parent") },
  });
  // At most one title a second per pane: the new one goes out when the second is over.
  await h.clock.advance(10);
  assert.equal(h.backend.panes.get("%1")?.title, "first");
  await h.clock.advance(1000);
  assert.equal(h.backend.panes.get("%1")?.title, "second]0;x");
});

Deno.test("SessionLoop tracks a child it first sees in session.updated and opens it on busy", async () => {
  const h = setup();
  h.loop.handle({
    kind: "updated",
    info: { id: sid("ses_late"), title: "late", parentId: sid("ses_parent") },
  });
  await h.clock.advance(10);
  assert.equal(h.backend.panes.size, 0);
  h.loop.handle(status("ses_late", "busy"));
  await h.clock.advance(10);
  assert.equal(h.backend.panes.size, 1);
});

Deno.test("SessionLoop skips every child with a reason when there is no backend", async () => {
  const h = setup({}, {
    backend: null,
    noBackend: { reason: "no_backend", hint: "run inside tmux" },
  });
  h.loop.handle(created("ses_a"));
  await h.clock.advance(10);
  assert.deepEqual(h.out, [{
    type: "pane.skipped",
    sessionID: "ses_a",
    reason: "no_backend",
    hint: "run inside tmux",
  }]);
});

Deno.test("SessionLoop skips a child when the split has no space", async () => {
  const h = setup();
  h.backend.failNext(
    "spawn",
    new MuxError("no_space", "no space for new pane", { hint: "close a pane" }),
  );
  h.loop.handle(created("ses_a"));
  await h.clock.advance(10);
  assert.deepEqual(h.out, [{
    type: "pane.skipped",
    sessionID: "ses_a",
    reason: "no_space",
    hint: "close a pane",
  }]);
});

Deno.test("SessionLoop refuses to put credentials on a backend without an environment flag", async () => {
  const h = setup({}, { auth: { username: "opencode", password: "secret" } });
  (h.backend as { capabilities: unknown }).capabilities = { ...h.backend.capabilities, env: false };
  h.loop.handle(created("ses_a"));
  await h.clock.advance(10);
  assert.equal(h.out[0]?.type === "pane.skipped" && h.out[0].reason, "auth_unsupported");
});

Deno.test("SessionLoop passes credentials only in the pane's environment", async () => {
  const h = setup({}, { auth: { username: "opencode", password: "s3cret" } });
  h.loop.handle(created("ses_a"));
  await h.clock.advance(10);
  const req = [...h.backend.panes.values()][0].req;
  assert.deepEqual(req.env, {
    OPENCODE_SERVER_USERNAME: "opencode",
    OPENCODE_SERVER_PASSWORD: "s3cret",
  });
  assert.ok(!req.argv.some((a) => a.includes("s3cret")));
});

Deno.test("SessionLoop asks for a layout of its own panes, oldest first, once per burst", async () => {
  const h = setup();
  for (const id of ["ses_a", "ses_b", "ses_c"]) h.loop.handle(created(id));
  await h.clock.advance(100);
  assert.equal(h.backend.layouts.length, 1);
  assert.deepEqual(h.backend.layouts[0].panes, ["%1", "%2", "%3"]);
  assert.equal(h.backend.layouts[0].layout, "main-vertical");
});

Deno.test("SessionLoop shutdown closes every owned pane and counts them", async () => {
  const h = setup();
  for (const id of ["ses_a", "ses_b"]) h.loop.handle(created(id));
  await h.clock.advance(10);
  const done = h.loop.shutdown(true);
  await h.clock.advance(10);
  assert.equal(await done, 2);
  assert.equal(h.backend.panes.size, 0);
  assert.equal(h.clock.pending(), 0, "no timer left behind");
});

Deno.test("SessionLoop shutdown leaves panes open when close_on_exit is false", async () => {
  const h = setup();
  h.loop.handle(created("ses_a"));
  await h.clock.advance(10);
  assert.equal(await h.loop.shutdown(false), 0);
  assert.equal(h.backend.panes.size, 1);
  assert.equal(h.store.records.size, 1, "the record stays for cleanup");
});

Deno.test("SessionLoop holds an idle close while a background job runs", async () => {
  const h = setup();
  h.loop.handle(created("ses_a"));
  await h.clock.advance(10);
  h.loop.handle({ kind: "job", sessionId: sid("ses_a"), running: true });
  h.loop.handle(status("ses_a", "idle"));
  await h.clock.advance(5000);
  assert.equal(h.backend.panes.size, 1);
  h.loop.handle({ kind: "job", sessionId: sid("ses_a"), running: false });
  await h.clock.advance(10);
  assert.equal(h.backend.panes.size, 0);
});

Deno.test("SessionLoop ignores every event for a deleted session", async () => {
  const h = setup();
  h.loop.handle(created("ses_a"));
  await h.clock.advance(10);
  h.loop.handle({
    kind: "deleted",
    info: { id: sid("ses_a"), title: "", parentId: sid("ses_parent") },
  });
  await h.clock.advance(10);
  h.loop.handle(created("ses_a"));
  h.loop.handle(status("ses_a", "busy"));
  await h.clock.advance(10);
  assert.equal(h.backend.panes.size, 0);
  assert.equal(h.out.filter((m) => m.type === "pane.opened").length, 1);
});

Deno.test("SessionLoop notices a kill that silently does nothing: retried, then pane.failed close_unverified, kept stuck", async () => {
  const h = setup({ close_grace_ms: 0 });
  h.loop.handle(created("ses_k"));
  await h.clock.advance(10);
  const [paneId] = [...h.backend.panes.keys()];
  h.backend.panes.get(paneId)!.exitsOnInterrupt = false;
  h.backend.ignoreKills = true;
  h.loop.handle({
    kind: "deleted",
    info: { id: sid("ses_k"), title: "", parentId: sid("ses_parent") },
  });
  for (let i = 0; i < 100 && !h.out.some((m) => m.type === "pane.failed"); i++) {
    await h.clock.advance(500);
  }
  const failed = h.out.find((m) => m.type === "pane.failed");
  assert.ok(failed && failed.type === "pane.failed", kinds(h.out).join());
  assert.equal(failed.op, "close");
  assert.equal(failed.code, "close_unverified");
  assert.equal(h.backend.log.filter((l) => l === `kill ${paneId}`).length, 3, "tried 3 times");
  assert.ok(!h.out.some((m) => m.type === "pane.closed"), "never reported closed");
  assert.equal([...h.store.records.values()][0]?.stuck, true, "kept for cleanup");
});
