/**
 * Spawns whose answer is lost: the pending record written first, the pane found by its token
 * and closed (at once, on a later watch tick, at shutdown, by `cleanup`), and nothing closed
 * without a record. Against the in-memory backend and store; the real multiplexers are covered
 * by the backend contract and `tests/faults_test.ts`.
 */

import assert from "node:assert/strict";
import { MuxError } from "../../lib/sys/errors.ts";
import { silentLogger } from "../../lib/sys/log.ts";
import { runCleanup } from "../../lib/session/cleanup.ts";
import {
  isPending,
  type PendingRecord,
  resolveLostSpawn,
  spawnRecorded,
} from "../../lib/session/lost_spawns.ts";
import { SPAWN_TOKEN } from "../../lib/backend/spawn_token.ts";
import { createFakeBackend, type FakeBackend } from "../fakes/fake_backend.ts";
import { createFakeClock } from "../fakes/fake_clock.ts";
import { createMemoryStore, fakeProcesses } from "../fakes/memory_store.ts";
import { validatePaneId, validateSessionId as sid } from "../../lib/sys/validate.ts";
import { loopHarness } from "../helpers/loop_harness.ts";

const FIELDS = {
  sessionId: sid("ses_lost"),
  title: "lost",
  openedAt: "2026-01-01T00:00:00.000Z",
  owner: "4242:100",
  server: "http://127.0.0.1:4096",
  directory: "/work",
};
const REQ = {
  sessionId: sid("ses_lost"),
  title: "lost",
  argv: ["opencode", "attach"],
  cwd: "/work",
  env: {},
  owner: "4242:100",
};

function parts(backend: FakeBackend = createFakeBackend()) {
  const store = createMemoryStore();
  const clock = createFakeClock();
  const processes = fakeProcesses();
  return {
    backend,
    store,
    clock,
    deps: { store, clock, processes, graceMs: 0, log: silentLogger },
  };
}

const pendings = (store: ReturnType<typeof createMemoryStore>) =>
  [...store.records.values()].filter(isPending);

Deno.test("spawnRecorded() writes the pending record, with a fresh token, before the spawn runs", async () => {
  const p = parts();
  const release = p.backend.holdSpawns();
  const running = spawnRecorded(p.backend, REQ, FIELDS, p.deps);
  // The spawn is held: the record is already there and names the token the pane will carry.
  await Promise.resolve();
  const [pending] = pendings(p.store);
  assert.ok(pending, "no pending record before the spawn");
  assert.match(pending.token, SPAWN_TOKEN);
  assert.equal(pending.paneId, `pending:${pending.token}`);
  assert.equal(pending.owner, "4242:100");
  release();
  const result = await running;
  assert.ok(result.ok);
  assert.equal(p.backend.panes.get(result.pane.paneId)?.req.token, pending.token);
});

Deno.test("spawnRecorded() closes the pane of a spawn whose answer was lost and drops the record", async () => {
  const p = parts();
  p.backend.loseNextAnswer();
  const result = await spawnRecorded(p.backend, REQ, FIELDS, p.deps);
  assert.equal(result.ok, false);
  assert.ok(!result.ok && result.outcome.kind === "closed");
  assert.equal(p.backend.panes.size, 0, "the pane the spawn made is closed");
  assert.deepEqual(pendings(p.store), []);
});

Deno.test("spawnRecorded() keeps the record of a lost answer whose pane is not there yet; a later look closes it", async () => {
  const p = parts();
  const appear = p.backend.loseNextAnswer(true);
  const result = await spawnRecorded(p.backend, REQ, FIELDS, p.deps);
  assert.ok(!result.ok);
  assert.deepEqual(result.outcome, { kind: "none", kept: true });
  assert.equal(pendings(p.store).length, 1);
  appear();
  const outcome = await resolveLostSpawn(p.backend, result.pending, p.deps, false);
  assert.equal(outcome.kind, "closed");
  assert.equal(p.backend.panes.size, 0);
  assert.deepEqual(pendings(p.store), []);
});

Deno.test("spawnRecorded() drops the record at once when the multiplexer certainly made nothing", async () => {
  const p = parts();
  p.backend.failNext("spawn", new MuxError("no_space", "no room"));
  const result = await spawnRecorded(p.backend, REQ, FIELDS, p.deps);
  assert.ok(!result.ok);
  assert.deepEqual(result.outcome, { kind: "none", kept: false });
  assert.deepEqual(pendings(p.store), []);
  assert.ok(!p.backend.log.some((l) => l.startsWith("find")), "nothing to look for");
});

Deno.test("resolveLostSpawn() keeps the record when the panes cannot be listed", async () => {
  const p = parts();
  p.backend.loseNextAnswer();
  p.backend.failNext("findSpawned", new MuxError("timed_out", "tmux hangs"));
  const result = await spawnRecorded(p.backend, REQ, FIELDS, p.deps);
  assert.ok(!result.ok && result.outcome.kind === "unresolved");
  assert.equal(pendings(p.store).length, 1);
  assert.equal(p.backend.panes.size, 1, "nothing closed on a guess");
  // The final look (bye, cleanup) closes it once the listing works.
  assert.equal((await resolveLostSpawn(p.backend, result.pending, p.deps, true)).kind, "closed");
  assert.equal(p.backend.panes.size, 0);
});

Deno.test("resolveLostSpawn() on a backend without spawn tokens closes nothing and drops the record", async () => {
  const p = parts(createFakeBackend("cmux", { spawnToken: false }));
  p.backend.loseNextAnswer();
  const result = await spawnRecorded(p.backend, REQ, FIELDS, p.deps);
  assert.ok(!result.ok);
  assert.deepEqual(result.outcome, { kind: "none", kept: false });
  assert.ok(!p.backend.log.some((l) => l.startsWith("find")), "findSpawned is not asked");
  assert.deepEqual(pendings(p.store), []);
});

// ------------------------------------------------------------------------------ the loop

function childLoop() {
  const { loop, backend, clock, out, store } = loopHarness({
    flags: { close_grace_ms: 0, poll_interval_ms: 2000 },
  });
  const child = (id: string) => {
    loop.handle({ kind: "created", info: { id: sid(id), title: id, parentId: sid("ses_parent") } });
    loop.handle({ kind: "status", sessionId: sid(id), status: "busy" });
  };
  return { loop, backend, clock, out, store, child };
}

Deno.test("SessionLoop: a pane made after its spawn timed out is closed on the next watch tick", async () => {
  const h = childLoop();
  const appear = h.backend.loseNextAnswer(true);
  h.child("ses_late");
  await h.clock.advance(10);
  const failed = h.out.find((m) => m.type === "pane.failed");
  assert.ok(failed && failed.type === "pane.failed" && failed.code === "timed_out");
  assert.equal(pendings(h.store).length, 1, "the spawn stays recorded");
  appear();
  assert.equal(h.backend.panes.size, 1);
  await h.clock.advance(2000);
  assert.equal(h.backend.panes.size, 0, "the late pane is closed");
  assert.deepEqual(pendings(h.store), []);
  assert.equal(await h.loop.shutdown(true), 0);
  assert.deepEqual(h.store.records.size, 0);
});

Deno.test("SessionLoop: a pane made after its spawn timed out is closed at shutdown, whatever close_on_exit", async () => {
  const h = childLoop();
  const appear = h.backend.loseNextAnswer(true);
  h.child("ses_late");
  await h.clock.advance(10);
  appear();
  await h.loop.shutdown(false);
  assert.equal(h.backend.panes.size, 0);
  assert.equal(h.store.records.size, 0);
  assert.equal(h.out.at(-1)?.type, "pane.failed", "nothing is reported opened");
});

Deno.test("SessionLoop: the pending record of a successful spawn is replaced by the pane's record", async () => {
  const h = childLoop();
  h.child("ses_ok");
  await h.clock.advance(10);
  const records = [...h.store.records.values()];
  assert.equal(records.length, 1);
  assert.equal(isPending(records[0]), false);
  assert.equal(records[0].paneId, [...h.backend.panes.keys()][0]);
  await h.loop.shutdown(true);
});

// ------------------------------------------------------------------------------ cleanup

function pendingOf(owner: string, token = "0123456789abcdef0123456789abcdef"): PendingRecord {
  const paneId = validatePaneId(`pending:${token}`);
  return { ...FIELDS, owner, backend: "tmux", paneId, state: "pending", token };
}

Deno.test("runCleanup() closes the pane of a dead owner's pending spawn and keeps a live owner's", async () => {
  // No marks: the pending record alone is what makes the pane muxbridge's.
  const backend = createFakeBackend("tmux", { marks: false });
  const store = createMemoryStore();
  const processes = fakeProcesses([777]);
  processes.starts.set(777, "555");
  const dead = pendingOf("666:1", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
  const live = pendingOf("777:555", "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb");
  store.put(dead);
  store.put(live);
  for (const token of [dead.token, live.token]) {
    await backend.spawn({ ...REQ, token });
  }
  const [deadPane, livePane] = [...backend.panes.keys()];
  const report = await runCleanup({
    store,
    backends: { tmux: backend },
    processes,
    client: () => null,
    clock: createFakeClock(),
    log: silentLogger,
    graceMs: 0,
  }, { dryRun: false, all: false });
  assert.deepEqual(report.closed.map((c) => [c.paneId, c.reason]), [
    [deadPane, "left by a spawn whose answer was lost"],
  ]);
  assert.deepEqual(report.kept.map((k) => k.reason), ["spawn in progress"]);
  assert.deepEqual([...backend.panes.keys()], [livePane]);
  assert.deepEqual(pendings(store).map((r) => r.token), [live.token]);
});

Deno.test("runCleanup() never takes a reused pid for a pending spawn's live owner", async () => {
  const backend = createFakeBackend("tmux", { marks: false });
  const store = createMemoryStore();
  // pid 777 runs, but it started at another time: not the process that wrote the record.
  const processes = fakeProcesses([777]);
  processes.starts.set(777, "999");
  const record = pendingOf("777:555");
  store.put(record);
  await backend.spawn({ ...REQ, token: record.token });
  const report = await runCleanup({
    store,
    backends: { tmux: backend },
    processes,
    client: () => null,
    clock: createFakeClock(),
    log: silentLogger,
    graceMs: 0,
  }, { dryRun: false, all: false });
  assert.equal(report.closed.length, 1);
  assert.equal(backend.panes.size, 0);
  assert.deepEqual(pendings(store), []);
});
