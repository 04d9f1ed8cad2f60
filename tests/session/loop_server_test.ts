/**
 * The session loop against a (fake) OpenCode server, on the fake clock: readiness before a pane
 * attaches, status polling while children are tracked, an idle close confirmed by one status read
 * when its delay ends, the
 * background-job veto, an unreachable or password-protected server and the version gate.
 */

import assert from "node:assert/strict";
import type { Credentials } from "../../lib/opencode/credentials.ts";
import type { Logger } from "../../lib/sys/log.ts";
import { createOpencodeClient } from "../../lib/opencode/client.ts";
import type { OutMessage } from "../../lib/bridge/protocol.ts";
import type { LoopContext, SessionLoop } from "../../lib/session/loop.ts";
import type { FakeBackend } from "../fakes/fake_backend.ts";
import { createFakeClock, type FakeClock } from "../fakes/fake_clock.ts";
import { createFakeOpencode, type FakeOpencode } from "../fakes/fake_opencode.ts";
import { loopHarness } from "../helpers/loop_harness.ts";
import { validateSessionId as sid } from "../../lib/sys/validate.ts";

interface Harness {
  loop: SessionLoop;
  backend: FakeBackend;
  clock: FakeClock;
  server: FakeOpencode;
  /** Every message, with the clock time it was written. */
  out: Array<OutMessage & { at: number }>;
  logs: string[];
}

const URL = "http://127.0.0.1:4096";

function setup(
  overrides: Record<string, unknown> = {},
  ctx: Partial<LoopContext> = {},
): Harness {
  const clock = createFakeClock();
  const server = createFakeOpencode();
  const out: Harness["out"] = [];
  const logs: string[] = [];
  const log: Logger = {
    debug: (m) => logs.push(`debug ${m}`),
    info: (m) => logs.push(`info ${m}`),
    warn: (m) => logs.push(`warn ${m}`),
    error: (m) => logs.push(`error ${m}`),
  };
  const { loop, backend } = loopHarness({
    flags: {
      idle_close_delay_ms: 3000,
      min_pane_lifetime_ms: 3000,
      poll_interval_ms: 2000,
      close_grace_ms: 250,
      ...overrides,
    },
    clock,
    deps: {
      log,
      emit: (m) => out.push({ ...m, at: clock.now() }),
      server: (url: string, auth?: Credentials) =>
        createOpencodeClient({ url, fetch: server.fetch, clock, ...(auth ? { auth } : {}) }),
    },
    ctx: { serverUrl: URL, ...ctx },
  });
  return { loop, backend, clock, server, out, logs };
}

const P = "ses_parent";
const created = (id: string, directory = "/srv/project") => ({
  kind: "created" as const,
  info: { id: sid(id), title: `title of ${id}`, parentId: sid(P), directory },
});
const deleted = (id: string) => ({
  kind: "deleted" as const,
  info: { id: sid(id), title: "", parentId: sid(P) },
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
const polls = (s: FakeOpencode) => s.requests.filter((r) => r.includes("/session/status")).length;

/** Opens a pane for a busy child the server knows; returns when it is open. */
async function openBusy(h: Harness, id: string): Promise<void> {
  h.server.busy(id);
  h.loop.handle(created(id));
  h.loop.handle(status(id, "busy"));
  await h.clock.advance(10);
  assert.ok(h.out.some((m) => m.type === "pane.opened" && m.sessionID === id), `${id} opened`);
}

Deno.test("SessionLoop polls /session/status only while a child is tracked, with no timer otherwise", async () => {
  const h = setup();
  // The warm-up of what `opencode attach` asks first is answered (404 here) and leaves no timer.
  await h.clock.advance(0);
  assert.equal(h.clock.pending(), 0, "nothing tracked: no timer");
  await openBusy(h, "ses_a");
  assert.ok(h.loop.polling);
  await h.clock.advance(6000);
  assert.equal(polls(h.server), 3);
  assert.ok(
    h.server.requests.includes("GET /session/status?directory=%2Fsrv%2Fproject"),
    "scoped to the child's directory",
  );
  h.loop.handle(deleted("ses_a"));
  await h.clock.advance(10);
  assert.deepEqual(kinds(h.out), ["pane.opened ses_a", "pane.closed ses_a deleted"]);
  const after = polls(h.server);
  await h.clock.advance(60_000);
  assert.equal(polls(h.server), after, "no poll once nothing is tracked");
  assert.equal(h.loop.polling, false);
  assert.equal(h.clock.pending(), 0, "no timer left");
});

Deno.test("SessionLoop polls one status map per project directory", async () => {
  const h = setup();
  for (
    const [id, dir] of [["ses_a", "/srv/one"], ["ses_b", "/srv/two"], ["ses_c", "/srv/one"]]
  ) {
    h.server.busy(id);
    h.loop.handle(created(id, dir));
  }
  await h.clock.advance(2010);
  assert.deepEqual(h.server.requests.filter((r) => r.includes("/session/status")).sort(), [
    "GET /session/status?directory=%2Fsrv%2Fone",
    "GET /session/status?directory=%2Fsrv%2Ftwo",
  ]);
});

Deno.test("SessionLoop never closes a pane because its session is absent from the status map", async () => {
  const h = setup();
  await openBusy(h, "ses_a");
  h.server.idle("ses_a"); // absent from every poll from now on, but no idle signal came
  await h.clock.advance(120_000);
  assert.deepEqual(kinds(h.out), ["pane.opened ses_a"]);
  assert.ok(polls(h.server) >= 50);
});

Deno.test("SessionLoop confirms an idle close with one status read when the delay ends, whatever the poll phase", async () => {
  for (let phase = 0; phase < 2000; phase += 250) {
    const h = setup();
    await openBusy(h, "ses_a");
    await h.clock.advance(5000 + phase); // past the minimum lifetime, at some poll phase
    h.server.idle("ses_a");
    const signal = h.clock.now();
    h.loop.handle(status("ses_a", "idle"));
    await h.clock.advance(2999);
    assert.equal(h.out.length, 1, `phase ${phase}: not before the idle delay`);
    const before = h.server.requests.length;
    await h.clock.advance(1);
    // The read goes out the moment the delay ends: no poll tick in between.
    assert.deepEqual(h.server.requests.slice(before).sort(), [
      "GET /session/ses_a?directory=%2Fsrv%2Fproject",
      "GET /session/status?directory=%2Fsrv%2Fproject",
    ]);
    await h.clock.advance(10_000);
    const closed = h.out.find((m) => m.type === "pane.closed");
    assert.ok(
      closed && closed.type === "pane.closed" && closed.reason === "idle",
      `phase ${phase}`,
    );
    // The fake backend's program ends on the interrupt: no grace period is waited out.
    assert.equal(closed.at - signal, 3000, `phase ${phase}: ${closed.at - signal} ms`);
    assert.equal(h.backend.panes.size, 0);
  }
});

Deno.test("SessionLoop with idle_close_delay_ms 0 closes a pane past its minimum lifetime at once", async () => {
  const h = setup({ idle_close_delay_ms: 0 });
  await openBusy(h, "ses_a");
  await h.clock.advance(5000);
  h.server.idle("ses_a");
  const signal = h.clock.now();
  h.loop.handle(status("ses_a", "idle"));
  await h.clock.advance(0);
  const closed = h.out.find((m) => m.type === "pane.closed");
  assert.ok(closed, "closed without the clock moving");
  assert.equal(closed.at, signal);
});

Deno.test("SessionLoop closes an idle child's pane when the confirming read gets no answer within its bound", async () => {
  const h = setup({ idle_close_delay_ms: 0 });
  await openBusy(h, "ses_a");
  await h.clock.advance(5000);
  h.server.mode = "hang";
  const signal = h.clock.now();
  h.loop.handle(status("ses_a", "idle"));
  await h.clock.advance(999);
  assert.equal(h.out.length, 1, "waits for the read, up to its bound");
  await h.clock.advance(1);
  const closed = h.out.find((m) => m.type === "pane.closed");
  assert.ok(closed && closed.type === "pane.closed" && closed.reason === "idle");
  assert.equal(closed.at - signal, 1000, "the bound: half the poll interval, at most 1 s");
});

Deno.test("SessionLoop keeps the pane when the confirming read sees the child busy or retrying", async () => {
  for (const state of ["busy", "retry"] as const) {
    const h = setup({ idle_close_delay_ms: 0 });
    await openBusy(h, "ses_a");
    await h.clock.advance(5000);
    h.server.status.set("ses_a", state);
    h.loop.handle(status("ses_a", "idle"));
    await h.clock.advance(1000);
    assert.deepEqual(kinds(h.out), ["pane.opened ses_a"], state);
    assert.equal(h.loop.records()[0].activity, "busy");
  }
});

Deno.test("SessionLoop cancels a pending idle close when a poll sees the child busy", async () => {
  const h = setup();
  await openBusy(h, "ses_a");
  await h.clock.advance(5000);
  h.loop.handle(status("ses_a", "idle")); // the server still says busy: the next poll cancels
  await h.clock.advance(30_000);
  assert.deepEqual(kinds(h.out), ["pane.opened ses_a"]);
  assert.equal(h.loop.records()[0].activity, "busy");
  // The next real idle closes it.
  h.server.idle("ses_a");
  h.loop.handle(status("ses_a", "idle"));
  await h.clock.advance(8000);
  assert.deepEqual(kinds(h.out), ["pane.opened ses_a", "pane.closed ses_a idle"]);
});

Deno.test("SessionLoop does not flicker on a brief idle between tool calls", async () => {
  const h = setup();
  await openBusy(h, "ses_a");
  await h.clock.advance(5000);
  for (let i = 0; i < 5; i++) {
    h.server.idle("ses_a");
    h.loop.handle(status("ses_a", "idle"));
    await h.clock.advance(1500);
    h.server.busy("ses_a");
    h.loop.handle(status("ses_a", "busy"));
    await h.clock.advance(4000);
  }
  assert.deepEqual(kinds(h.out), ["pane.opened ses_a"]);
  assert.equal(h.backend.log.filter((l) => l.startsWith("spawn")).length, 1);
});

Deno.test("SessionLoop reopens a pane when a poll sees its idle-closed child busy again during the close", async () => {
  const h = setup();
  await openBusy(h, "ses_a");
  await h.clock.advance(5000);
  h.server.idle("ses_a");
  h.loop.handle(status("ses_a", "idle"));
  await h.clock.advance(10_000);
  assert.deepEqual(kinds(h.out), ["pane.opened ses_a", "pane.closed ses_a idle"]);
  h.server.busy("ses_a");
  h.loop.handle(status("ses_a", "busy"));
  await h.clock.advance(10);
  assert.deepEqual(kinds(h.out).at(-1), "pane.opened ses_a");
});

Deno.test("SessionLoop holds an idle close while a bridge.job runs and closes soon after it ends", async () => {
  const h = setup();
  await openBusy(h, "ses_a");
  await h.clock.advance(5000);
  h.loop.handle({ kind: "job", sessionId: sid("ses_a"), running: true });
  h.server.idle("ses_a");
  h.loop.handle(status("ses_a", "idle"));
  await h.clock.advance(60_000);
  assert.deepEqual(kinds(h.out), ["pane.opened ses_a"], "the job vetoes the close");
  const ended = h.clock.now();
  h.loop.handle({ kind: "job", sessionId: sid("ses_a"), running: false });
  await h.clock.advance(1000);
  const closed = h.out.find((m) => m.type === "pane.closed");
  assert.ok(closed && closed.at - ended < 100, "closes right after the job ends");
});

Deno.test("SessionLoop lets a busy status clear a close a job held back", async () => {
  const h = setup();
  await openBusy(h, "ses_a");
  await h.clock.advance(5000);
  h.loop.handle({ kind: "job", sessionId: sid("ses_a"), running: true });
  h.server.idle("ses_a");
  h.loop.handle(status("ses_a", "idle"));
  await h.clock.advance(10_000);
  h.server.busy("ses_a");
  h.loop.handle(status("ses_a", "busy"));
  h.loop.handle({ kind: "job", sessionId: sid("ses_a"), running: false });
  await h.clock.advance(30_000);
  assert.deepEqual(kinds(h.out), ["pane.opened ses_a"]);
});

Deno.test("SessionLoop closes as deleted when the final recheck finds the session gone", async () => {
  const h = setup();
  await openBusy(h, "ses_a");
  await h.clock.advance(5000);
  h.server.remove("ses_a");
  h.loop.handle(status("ses_a", "idle"));
  await h.clock.advance(10_000);
  assert.deepEqual(kinds(h.out), ["pane.opened ses_a", "pane.closed ses_a deleted"]);
  h.loop.handle(status("ses_a", "busy"));
  await h.clock.advance(100);
  assert.equal(h.out.length, 2, "the session is tombstoned");
});

Deno.test("SessionLoop waits until the server knows the child before the pane attaches", async () => {
  const h = setup();
  h.loop.handle(created("ses_a"));
  h.loop.handle(status("ses_a", "busy"));
  h.loop.handle(created("ses_a"));
  await h.clock.advance(800);
  assert.equal(h.backend.log.length, 0, "no pane while the server answers 404");
  h.server.known.add("ses_a");
  await h.clock.advance(600);
  assert.deepEqual(h.backend.log.filter((l) => l.startsWith("spawn")), ["spawn ses_a"]);
  assert.deepEqual(kinds(h.out), ["pane.opened ses_a"]);
  assert.ok(
    h.server.requests.includes("GET /session/ses_a?directory=%2Fsrv%2Fproject"),
    "looked up in the child's directory",
  );
});

Deno.test("SessionLoop opens no pane for a child deleted while waiting for readiness", async () => {
  const h = setup();
  h.loop.handle(created("ses_a"));
  await h.clock.advance(300);
  h.loop.handle(deleted("ses_a"));
  h.server.known.add("ses_a");
  await h.clock.advance(10_000);
  assert.equal(h.backend.log.length, 0);
  assert.deepEqual(h.out, []);
  assert.equal(h.clock.pending(), 0, "the readiness wait was cancelled");
});

Deno.test("SessionLoop skips a child the server never learns of, with a hint", async () => {
  const h = setup({ readiness_timeout_ms: 2000 });
  h.loop.handle(created("ses_a"));
  await h.clock.advance(2500);
  assert.equal(h.out.length, 1);
  const skipped = h.out[0];
  assert.ok(skipped.type === "pane.skipped" && skipped.reason === "session_not_found");
  assert.ok(skipped.at - 1_000_000 <= 2100, "within readiness_timeout_ms");
  assert.equal(h.backend.log.length, 0);
});

Deno.test("SessionLoop skips new children with server_unreachable when nothing listens, and still closes on idle and delete", async () => {
  const h = setup();
  await openBusy(h, "ses_a");
  await openBusy(h, "ses_b");
  await h.clock.advance(5000);
  h.server.mode = "down";
  h.loop.handle(created("ses_new"));
  await h.clock.advance(6000);
  const skipped = h.out.find((m) => m.type === "pane.skipped");
  assert.ok(skipped && skipped.type === "pane.skipped" && skipped.reason === "server_unreachable");
  assert.match(skipped.hint, /muxbridge install/);
  assert.doesNotMatch(skipped.hint, /--port 0/);
  // Polls fail: no decision is made from them, and they back off.
  const before = polls(h.server);
  await h.clock.advance(120_000);
  const during = polls(h.server) - before;
  assert.ok(during <= 8, `backed off: ${during} polls in 120 s`);
  assert.equal(h.backend.panes.size, 2, "no close decision from failed polls");
  assert.equal(h.logs.filter((l) => l.includes("cannot poll session status")).length, 1);
  // The idle and deleted signals still close.
  const signal = h.clock.now();
  h.loop.handle(status("ses_a", "idle"));
  h.loop.handle(deleted("ses_b"));
  await h.clock.advance(10_000);
  const closes = h.out.filter((m) => m.type === "pane.closed");
  assert.deepEqual(kinds(closes).sort(), ["pane.closed ses_a idle", "pane.closed ses_b deleted"]);
  const idle = closes.find((m) => m.type === "pane.closed" && m.reason === "idle")!;
  assert.ok(idle.at - signal <= 7000, `idle close within the bound (${idle.at - signal} ms)`);
});

Deno.test("SessionLoop logs once when the server comes back and opens panes again", async () => {
  const h = setup();
  await openBusy(h, "ses_a");
  h.server.mode = "down";
  await h.clock.advance(20_000);
  h.server.mode = "up";
  await h.clock.advance(40_000);
  assert.equal(h.logs.filter((l) => l.includes("answers status polls again")).length, 1);
  await openBusy(h, "ses_b");
});

Deno.test("SessionLoop skips at once with auth_failed when the server answers 401", async () => {
  const h = setup();
  h.server.mode = "401";
  h.loop.handle(created("ses_a"));
  await h.clock.advance(10);
  assert.equal(h.out.length, 1);
  const m = h.out[0];
  assert.ok(m.type === "pane.skipped" && m.reason === "auth_failed");
  assert.match(m.hint, /OPENCODE_SERVER_PASSWORD/);
});

Deno.test("SessionLoop skips with server_unreachable when requests hang (a server not yet listening)", async () => {
  const h = setup({ readiness_timeout_ms: 3000 });
  h.server.mode = "hang";
  h.loop.handle(created("ses_a"));
  await h.clock.advance(4000);
  const m = h.out[0];
  assert.ok(m?.type === "pane.skipped" && m.reason === "server_unreachable");
  assert.ok(m.at - 1_000_000 <= 3100, `bounded (${m.at - 1_000_000} ms)`);
  await h.loop.shutdown(true);
  assert.equal(h.clock.pending(), 0);
});

Deno.test("SessionLoop opens the pane of a busy child skipped while the server hung, once a poll finds it busy", async () => {
  const h = setup({ readiness_timeout_ms: 3000 });
  h.server.mode = "hang";
  h.server.busy("ses_a");
  h.loop.handle(created("ses_a"));
  h.loop.handle(status("ses_a", "busy"));
  await h.clock.advance(4000);
  assert.deepEqual(kinds(h.out), ["pane.skipped ses_a server_unreachable"]);
  assert.equal(h.backend.panes.size, 0);
  // The server answers again; the child never changed status, so only a poll can tell.
  h.server.mode = "up";
  await h.clock.advance(60_000);
  assert.deepEqual(kinds(h.out), ["pane.skipped ses_a server_unreachable", "pane.opened ses_a"]);
  assert.equal(h.backend.panes.size, 1);
  // A child the server does not know is skipped for good: no poll brings it back.
  h.loop.handle(created("ses_unknown"));
  await h.clock.advance(60_000);
  assert.deepEqual(kinds(h.out).slice(2), ["pane.skipped ses_unknown session_not_found"]);
  await h.loop.shutdown(true);
});

Deno.test("SessionLoop refuses an OpenCode version outside every supported range with unsupported_version", async () => {
  const h = setup();
  h.server.version = "2.0.1";
  h.server.known.add("ses_a");
  h.loop.handle(created("ses_a"));
  await h.clock.advance(10);
  const m = h.out[0];
  assert.ok(m?.type === "pane.skipped" && m.reason === "unsupported_version");
  assert.match(m.hint, /outside the versions muxbridge supports/);
  assert.equal(h.backend.log.length, 0);
});

Deno.test("SessionLoop opens panes on a server that does not report its version", async () => {
  const h = setup();
  h.server.version = null;
  await openBusy(h, "ses_a");
});

Deno.test("SessionLoop uses Basic auth for readiness and polls, and never puts the password on argv or in logs", async () => {
  const password = "pw-S3CRET-x";
  const h = setup({}, { auth: { username: "opencode", password } });
  h.server.password = password;
  await openBusy(h, "ses_a");
  await h.clock.advance(4000);
  assert.ok(h.server.authorizations.length >= 3);
  const expected = `Basic ${btoa(`opencode:${password}`)}`;
  assert.ok(h.server.authorizations.every((a) => a === expected));
  const pane = [...h.backend.panes.values()][0];
  assert.ok(!pane.req.argv.some((a) => a.includes(password)));
  assert.equal(pane.req.env.OPENCODE_SERVER_PASSWORD, password);
  assert.ok(!h.logs.some((l) => l.includes(password)));
  assert.ok(!JSON.stringify(h.out).includes(password));
});

Deno.test("SessionLoop skips with auth_failed when its credentials are wrong", async () => {
  const h = setup({}, { auth: { username: "opencode", password: "wrong" } });
  h.server.password = "right";
  h.loop.handle(created("ses_a"));
  await h.clock.advance(10);
  assert.ok(h.out[0]?.type === "pane.skipped" && h.out[0].reason === "auth_failed");
});

Deno.test("SessionLoop skips with a hint when no server URL is known", async () => {
  const h = setup({}, { serverUrl: null });
  h.loop.handle(created("ses_a"));
  await h.clock.advance(10);
  const m = h.out[0];
  assert.ok(m?.type === "pane.skipped" && m.reason === "server_unreachable");
  assert.match(m.hint, /bridge\.hello|--url/);
  assert.equal(h.clock.pending(), 0, "nothing to poll without a server");
});

Deno.test("SessionLoop applies a backend's longer minimum pane lifetime", async () => {
  const h = setup({ min_pane_lifetime_ms: 1000, idle_close_delay_ms: 500 });
  (h.backend as { minPaneLifetimeMs?: number }).minPaneLifetimeMs = 8000;
  h.loop.setContext({ ...h.loop.context });
  await openBusy(h, "ses_a");
  const opened = h.out[0].at;
  h.server.idle("ses_a");
  h.loop.handle(status("ses_a", "idle"));
  await h.clock.advance(20_000);
  const closed = h.out.find((m) => m.type === "pane.closed");
  assert.ok(closed && closed.at - opened >= 8000, "not before the backend's minimum");
});

Deno.test("SessionLoop applies a config that arrives while children are tracked, saying in one line which keys take effect when", async () => {
  const h = setup({ idle_close_delay_ms: 3000, min_pane_lifetime_ms: 0 });
  await openBusy(h, "ses_a");
  const config = { ...h.loop.config, idle_close_delay_ms: 9000, layout: "tiled" as const };
  h.loop.setContext(h.loop.context, config);
  assert.deepEqual(h.logs.filter((l) => l.includes("bridge.hello config")), [
    "info bridge.hello config applies while 1 child sessions are tracked: layout at the next " +
    "layout pass; idle_close_delay_ms at each pane's next idle signal",
  ]);
  // The next idle signal uses the new delay.
  const idleAt = h.clock.now();
  h.server.idle("ses_a");
  h.loop.handle(status("ses_a", "idle"));
  await h.clock.advance(20_000);
  const closed = h.out.find((m) => m.type === "pane.closed");
  assert.ok(closed && closed.at - idleAt >= 9000, "not before the new idle delay");
});

Deno.test("SessionLoop says nothing of a new config when no child is tracked", () => {
  const h = setup();
  h.loop.setContext(h.loop.context, { ...h.loop.config, layout: "tiled" });
  assert.deepEqual(h.logs.filter((l) => l.includes("bridge.hello config")), []);
  assert.equal(h.loop.config.layout, "tiled");
});
