/**
 * runCleanup() on the in-memory backend and store: whose panes it may close. The owner stamp is
 * `<pid>:<start>`; a pid the system handed to a later process is not the owner.
 */

import assert from "node:assert/strict";
import { runCleanup } from "../../lib/session/cleanup.ts";
import type { PaneRecordInput } from "../../lib/session/pane_store.ts";
import { silentLogger } from "../../lib/sys/log.ts";
import { createFakeBackend } from "../fakes/fake_backend.ts";
import { createFakeClock } from "../fakes/fake_clock.ts";
import { createMemoryStore, fakeProcesses } from "../fakes/memory_store.ts";
import { validateSessionId } from "../../lib/sys/validate.ts";

/** A store holding one open pane of `owner`, on a backend without marks (records only). */
async function onePane(owner: string) {
  const backend = createFakeBackend("tmux", { marks: false });
  const { paneId } = await backend.spawn({
    sessionId: validateSessionId("ses_owned"),
    title: "owned",
    argv: ["opencode"],
    cwd: "/",
    env: {},
    owner,
  });
  const store = createMemoryStore();
  const record: PaneRecordInput = {
    sessionId: validateSessionId("ses_owned"),
    paneId,
    backend: "tmux",
    title: "owned",
    openedAt: "2026-01-01T00:00:00.000Z",
    owner,
  };
  store.put(record);
  return { backend, store, paneId };
}

const cleanup = (
  parts: Awaited<ReturnType<typeof onePane>>,
  processes: ReturnType<typeof fakeProcesses>,
) =>
  runCleanup({
    store: parts.store,
    backends: { tmux: parts.backend },
    processes,
    client: () => null,
    clock: createFakeClock(),
    log: silentLogger,
    graceMs: 0,
  }, { dryRun: false, all: false });

Deno.test("runCleanup() keeps the panes of an owner that still runs (same pid, same start stamp)", async () => {
  const parts = await onePane("777:555");
  const processes = fakeProcesses([777]);
  processes.starts.set(777, "555");
  const report = await cleanup(parts, processes);
  assert.deepEqual(report.kept.map((k) => k.reason), ["owner running"]);
  assert.ok(parts.backend.panes.has(parts.paneId));
});

Deno.test("runCleanup() never takes a reused pid (another start stamp) for the live owner", async () => {
  const parts = await onePane("777:555");
  // pid 777 runs again, but it is a later process: it started at another time.
  const processes = fakeProcesses([777]);
  processes.starts.set(777, "999");
  const report = await cleanup(parts, processes);
  assert.deepEqual(report.closed.map((c) => c.paneId), [parts.paneId]);
  assert.equal(parts.backend.panes.size, 0);
  assert.equal(parts.store.records.size, 0);
});
