/**
 * runCleanup() on the in-memory backend and store: whose panes it may close. The owner stamp is
 * `<pid>:<start>`; a pid the system handed to a later process is not the owner. A recorded pane
 * is closed only while it is provably the one recorded (the same multiplexer instance, the
 * recorded program); anything else is left alone and its record retired.
 */

import assert from "node:assert/strict";
import { runCleanup } from "../../lib/session/cleanup.ts";
import type { PaneRecordInput } from "../../lib/session/pane_store.ts";
import { createLogger, type Logger, silentLogger } from "../../lib/sys/log.ts";
import { MuxError } from "../../lib/sys/errors.ts";
import { createFakeBackend } from "../fakes/fake_backend.ts";
import { createFakeClock } from "../fakes/fake_clock.ts";
import { createMemoryStore, fakeProcesses } from "../fakes/memory_store.ts";
import { validateSessionId } from "../../lib/sys/validate.ts";
import { createOpencodeClient, type Fetch } from "../../lib/opencode/client.ts";
import { createFakeOpencode } from "../fakes/fake_opencode.ts";

const TOKEN = "0123456789abcdef0123456789abcdef";

/**
 * A store holding one open pane of `owner`, on a backend without marks (records only), recorded
 * as the bridge records it: with its spawn token and the instance it opened on.
 */
async function onePane(owner: string, record: Partial<PaneRecordInput> = {}) {
  const backend = createFakeBackend("tmux", { marks: false });
  const { paneId } = await backend.spawn({
    sessionId: validateSessionId("ses_owned"),
    title: "owned",
    argv: ["opencode"],
    cwd: "/",
    env: {},
    owner,
    token: TOKEN,
  });
  const store = createMemoryStore();
  store.put({
    sessionId: validateSessionId("ses_owned"),
    paneId,
    backend: "tmux",
    title: "owned",
    openedAt: "2026-01-01T00:00:00.000Z",
    owner,
    token: TOKEN,
    instance: { address: "fake tmux", stamp: "server 1" },
    ...record,
  });
  return { backend, store, paneId };
}

const cleanup = (
  parts: Awaited<ReturnType<typeof onePane>>,
  processes: ReturnType<typeof fakeProcesses>,
  options: { dryRun?: boolean; log?: Logger } = {},
) =>
  runCleanup({
    store: parts.store,
    backends: { tmux: parts.backend },
    processes,
    client: () => null,
    clock: createFakeClock(),
    log: options.log ?? silentLogger,
    graceMs: 0,
  }, { dryRun: options.dryRun ?? false, all: false });

/** A logger that keeps its lines. */
function captureLogger(): Logger & { lines: string[] } {
  const lines: string[] = [];
  return Object.assign(createLogger("debug", (l) => lines.push(l)), { lines });
}

/** The reused id: the old pane is gone, and "the user" opens another with the same id. */
function reuseId(parts: Awaited<ReturnType<typeof onePane>>, token?: string) {
  const old = parts.backend.panes.get(parts.paneId)!;
  parts.backend.panes.set(parts.paneId, {
    ...old,
    req: { ...old.req, sessionId: validateSessionId("ses_user"), owner: "", token },
  });
}

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

Deno.test("runCleanup() leaves a pane on another instance of the multiplexer alone and retires its record", async () => {
  const parts = await onePane("777:555");
  // The server was restarted, and the user's new pane got the recorded id.
  parts.backend.instanceNow = { address: "fake tmux", stamp: "server 2" };
  reuseId(parts);
  const log = captureLogger();
  const report = await cleanup(parts, fakeProcesses(), { log });
  assert.deepEqual(report.closed, []);
  assert.deepEqual(report.retired.map((r) => r.paneId), [parts.paneId]);
  assert.match(report.retired[0].reason, /not the one the pane opened on/);
  assert.ok(parts.backend.panes.has(parts.paneId), "the user's pane is untouched");
  assert.deepEqual(parts.backend.log.filter((l) => !l.startsWith("spawn")), []);
  assert.equal(parts.store.records.size, 0, "the record is retired");
  assert.ok(
    log.lines.some((l) =>
      /left tmux pane %1 alone and retired its record.*another instance.*server 2/.test(l)
    ),
    log.lines.join("\n"),
  );
});

Deno.test("runCleanup() leaves a pane whose program carries no (or another) spawn token alone", async () => {
  for (const token of [undefined, "ffffffffffffffffffffffffffffffff"]) {
    const parts = await onePane("777:555");
    reuseId(parts, token);
    const report = await cleanup(parts, fakeProcesses());
    assert.deepEqual(report.closed, []);
    assert.match(report.retired[0]?.reason ?? "", /another program runs in it/);
    assert.ok(parts.backend.panes.has(parts.paneId));
    assert.equal(parts.store.records.size, 0);
  }
});

Deno.test("runCleanup() retires records without an instance, closes nothing, and says so once", async () => {
  const parts = await onePane("777:555", { instance: undefined });
  const second = await parts.backend.spawn({
    sessionId: validateSessionId("ses_two"),
    title: "two",
    argv: ["opencode"],
    cwd: "/",
    env: {},
    owner: "777:555",
    token: TOKEN,
  });
  parts.store.put({
    sessionId: "ses_two",
    paneId: second.paneId,
    backend: "tmux",
    title: "two",
    openedAt: "2026-01-01T00:00:00.000Z",
    owner: "777:555",
  });
  const log = captureLogger();
  const report = await cleanup(parts, fakeProcesses(), { log });
  assert.deepEqual(report.closed, []);
  assert.deepEqual(report.retired.map((r) => r.paneId).sort(), [parts.paneId, second.paneId]);
  assert.equal(parts.backend.panes.size, 2, "both panes stay");
  assert.equal(parts.store.records.size, 0);
  const said = log.lines.filter((l) => /older muxbridge/.test(l));
  assert.equal(said.length, 1, log.lines.join("\n"));
  assert.match(said[0], /tmux %1, tmux %2/);
});

Deno.test("runCleanup() --dry-run reports a record it would retire and keeps it", async () => {
  const parts = await onePane("777:555");
  parts.backend.instanceNow = null;
  const report = await cleanup(parts, fakeProcesses(), { dryRun: true });
  assert.deepEqual(report.retired.map((r) => r.reason), [
    "tmux cannot tell which instance it talks to now",
  ]);
  assert.equal(parts.store.records.size, 1);
});

Deno.test("runCleanup() keeps a record when the multiplexer cannot be asked which instance it is", async () => {
  const parts = await onePane("777:555");
  parts.backend.failNext("instance", new MuxError("backend_unreachable", "no server"));
  const report = await cleanup(parts, fakeProcesses());
  assert.deepEqual(report.closed, []);
  assert.deepEqual(report.retired, []);
  assert.match(
    report.kept[0].reason,
    /cannot tell whether the pane is the recorded one: no server/,
  );
  assert.equal(parts.store.records.size, 1);
});

Deno.test("runCleanup() reads each backend's instance once per pass", async () => {
  const parts = await onePane("777:555");
  let reads = 0;
  const instance = parts.backend.instance.bind(parts.backend);
  parts.backend.instance = () => (reads++, instance());
  for (const id of ["ses_b", "ses_c"]) {
    const pane = await parts.backend.spawn({
      sessionId: validateSessionId(id),
      title: id,
      argv: ["opencode"],
      cwd: "/",
      env: {},
      owner: "777:555",
      token: TOKEN,
    });
    parts.store.put({
      sessionId: id,
      paneId: pane.paneId,
      backend: "tmux",
      title: id,
      openedAt: "2026-01-01T00:00:00.000Z",
      owner: "777:555",
      token: TOKEN,
      instance: { address: "fake tmux", stamp: "server 1" },
    });
  }
  const report = await cleanup(parts, fakeProcesses());
  assert.equal(report.closed.length, 3);
  assert.equal(reads, 1);
});

Deno.test("runCleanup() asks a 2.x service with the password its own state file gives for that origin, and keeps a busy child's pane", async () => {
  const parts = await onePane("999:1", {
    server: "http://127.0.0.1:49374",
    directory: "/p",
    opencode: 2,
  });
  const server = createFakeOpencode();
  server.line = 2;
  server.version = "2.1.2";
  server.password = "svc-pw";
  server.busy("ses_owned");
  const asked: string[] = [];
  const report = await runCleanup({
    store: parts.store,
    backends: { tmux: parts.backend },
    processes: fakeProcesses(),
    client: (url, auth) =>
      createOpencodeClient({ url, fetch: server.fetch, ...(auth ? { auth } : {}) }),
    serviceAuth: (url) => {
      asked.push(url);
      return { username: "opencode", password: "svc-pw" };
    },
    clock: createFakeClock(),
    log: silentLogger,
    graceMs: 0,
  }, { dryRun: false, all: false });
  assert.deepEqual(asked, ["http://127.0.0.1:49374"]);
  assert.deepEqual(report.closed, []);
  assert.deepEqual(report.kept.map((k) => k.reason), ["session busy"]);
});

Deno.test("runCleanup() waits out a server that answers after 5 s (past a request's usual 2 s) and keeps a busy child's pane", async () => {
  const parts = await onePane("999:1", { server: "http://127.0.0.1:4096", directory: "/p" });
  const server = createFakeOpencode();
  server.busy("ses_owned");
  const clock = createFakeClock();
  // Each answer comes once the test has moved the clock 5 s on (the client's own timer too).
  const gates: Array<() => void> = [];
  const slowFetch: Fetch = async (input, init) => {
    await new Promise<void>((open) => gates.push(open));
    return server.fetch(input, init);
  };
  const running = runCleanup({
    store: parts.store,
    backends: { tmux: parts.backend },
    processes: fakeProcesses(),
    client: (url) => createOpencodeClient({ url, fetch: slowFetch, clock }),
    clock,
    log: silentLogger,
    graceMs: 0,
  }, { dryRun: false, all: false });
  let settled = false;
  running.finally(() => (settled = true));
  while (!settled) {
    await clock.flush();
    if (gates.length === 0) continue;
    await clock.advance(5000);
    gates.shift()!();
  }
  const report = await running;
  assert.deepEqual(report.closed, []);
  assert.deepEqual(report.kept.map((k) => k.reason), ["session busy"]);
});
