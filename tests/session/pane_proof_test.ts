/**
 * provePane(): a live pane is the recorded one only on the recorded instance and with the
 * recorded program — by its spawn token, by the pid the multiplexer itself names, or by an id the
 * backend never reuses — and each way only where the backend says it can show it.
 */

import assert from "node:assert/strict";
import type { PaneInfo } from "../../lib/backend/backend.ts";
import type { PaneRecord } from "../../lib/session/pane_store.ts";
import { provePane, recordedProgram } from "../../lib/session/pane_proof.ts";
import { validatePaneId, validateSessionId } from "../../lib/sys/validate.ts";
import { createFakeBackend } from "../fakes/fake_backend.ts";
import { fakeProcesses } from "../fakes/memory_store.ts";

const TOKEN = "0123456789abcdef0123456789abcdef";
const OTHER = "ffffffffffffffffffffffffffffffff";

const record = (extra: Partial<PaneRecord> = {}): PaneRecord => ({
  sessionId: validateSessionId("ses_a"),
  paneId: validatePaneId("%1"),
  backend: "tmux",
  title: "a",
  openedAt: "2026-01-01T00:00:00.000Z",
  owner: "777:1",
  token: TOKEN,
  instance: { address: "fake tmux", stamp: "server 1" },
  ...extra,
});

const live = (extra: Partial<PaneInfo> = {}): PaneInfo => ({
  paneId: validatePaneId("%1"),
  dead: false,
  ...extra,
});

Deno.test("provePane() proves a pane by its spawn token on the recorded instance", async () => {
  const proof = await provePane(createFakeBackend(), record(), live({ token: TOKEN }), {
    processes: fakeProcesses(),
  });
  assert.deepEqual(proof, { proven: true, by: "it carries the pane's spawn token" });
});

Deno.test("provePane() refuses a record without an instance, marking it legacy", async () => {
  const { instance: _, ...old } = record();
  const proof = await provePane(createFakeBackend(), old, live({ token: TOKEN }), {
    processes: fakeProcesses(),
  });
  assert.equal(proof.proven, false);
  assert.ok(!proof.proven && proof.legacy);
});

Deno.test("provePane() refuses another instance, or one the backend cannot tell", async () => {
  const backend = createFakeBackend();
  backend.instanceNow = { address: "fake tmux", stamp: "server 2" };
  const moved = await provePane(backend, record(), live({ token: TOKEN }), {
    processes: fakeProcesses(),
  });
  assert.ok(!moved.proven && /not the one the pane opened on/.test(moved.reason));
  backend.instanceNow = null;
  const unknown = await provePane(backend, record(), live({ token: TOKEN }), {
    processes: fakeProcesses(),
  });
  assert.ok(!unknown.proven && /cannot tell which instance/.test(unknown.reason));
});

Deno.test("provePane() refuses a pane that shows no token or another one", async () => {
  for (const token of [null, OTHER]) {
    const proof = await provePane(createFakeBackend(), record(), live({ token }), {
      processes: fakeProcesses(),
    });
    assert.ok(!proof.proven && /another program runs in it/.test(proof.reason));
  }
});

Deno.test("provePane() proves by pid and start stamp only where the multiplexer names the pid", async () => {
  const processes = fakeProcesses([500]);
  processes.starts.set(500, "42");
  const withPid = record({ token: undefined, pid: 500, pidStart: "42" });
  const backend = createFakeBackend();
  assert.equal((await provePane(backend, withPid, live({ pid: 500 }), { processes })).proven, true);
  // A later process with the same pid.
  processes.starts.set(500, "43");
  assert.equal(
    (await provePane(backend, withPid, live({ pid: 500 }), { processes })).proven,
    false,
  );
  processes.starts.set(500, "42");
  // A provider's pid is its word.
  Object.assign(backend, { ownership: { instance: "p", pid: "claimed" } });
  assert.equal(
    (await provePane(backend, withPid, live({ pid: 500 }), { processes })).proven,
    false,
  );
});

Deno.test("provePane() proves by the token in the program's environment, also for a claimed pid", async () => {
  const processes = fakeProcesses([600]);
  processes.environs.set(600, { MUXBRIDGE_SPAWN_TOKEN: TOKEN });
  const backend = createFakeBackend();
  Object.assign(backend, { ownership: { instance: "p", pid: "claimed" } });
  const proof = await provePane(backend, record(), live({ pid: 600 }), { processes });
  assert.equal(proof.proven, true);
  processes.environs.set(600, { MUXBRIDGE_SPAWN_TOKEN: OTHER });
  assert.equal(
    (await provePane(backend, record(), live({ pid: 600 }), { processes })).proven,
    false,
  );
});

Deno.test("provePane() asks paneProgram() where the backend has one", async () => {
  const backend = createFakeBackend();
  backend.paneProgram = () => Promise.resolve({ pid: 700, token: TOKEN });
  const proof = await provePane(backend, record(), live(), { processes: fakeProcesses() });
  assert.equal(proof.proven, true);
  backend.paneProgram = () => Promise.resolve({});
  const none = await provePane(backend, record(), live(), { processes: fakeProcesses() });
  assert.ok(!none.proven && /cannot be shown/.test(none.reason));
});

Deno.test("provePane() takes a never-reused id as proof where the program cannot be read", async () => {
  const backend = createFakeBackend();
  Object.assign(backend, { ownership: { instance: "app", pid: "none", uniqueIds: true } });
  assert.equal(
    (await provePane(backend, record(), live(), { processes: fakeProcesses() })).proven,
    true,
  );
});

Deno.test("recordedProgram() is the recorded process only while it runs with its stamp (and token, when claimed)", () => {
  const processes = fakeProcesses([800]);
  processes.starts.set(800, "9");
  const backend = createFakeBackend();
  const r = { pid: 800, pidStart: "9", token: TOKEN };
  assert.deepEqual(recordedProgram(backend, r, processes), { pid: 800, start: "9" });
  assert.equal(recordedProgram(backend, { ...r, pidStart: "8" }, processes), undefined);
  Object.assign(backend, { ownership: { instance: "p", pid: "claimed" } });
  assert.equal(recordedProgram(backend, r, processes), undefined);
  processes.environs.set(800, { MUXBRIDGE_SPAWN_TOKEN: TOKEN });
  assert.deepEqual(recordedProgram(backend, r, processes), { pid: 800, start: "9" });
});
