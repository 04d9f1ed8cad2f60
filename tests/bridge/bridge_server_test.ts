/**
 * The bridge with a (fake) OpenCode server on the fake clock: start-up reclaim of orphaned panes,
 * corrupt state, credentials from hello, and no password in any output or log line.
 */

import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import type { Credentials } from "../../lib/opencode/credentials.ts";
import { type BridgeIO, runBridge } from "../../lib/bridge/bridge.ts";
import { runCleanup } from "../../lib/session/cleanup.ts";
import { type Config, resolveConfig } from "../../lib/config/config.ts";
import type { Logger } from "../../lib/sys/log.ts";
import { createOpencodeClient } from "../../lib/opencode/client.ts";
import {
  createPaneStore,
  type PaneRecordInput,
  type PaneStore,
} from "../../lib/session/pane_store.ts";
import { type OutMessage, OutMessageSchema } from "../../lib/bridge/protocol.ts";
import { createFakeBackend, type FakeBackend } from "../fakes/fake_backend.ts";
import { createFakeClock, type FakeClock } from "../fakes/fake_clock.ts";
import { createFakeOpencode, type FakeOpencode } from "../fakes/fake_opencode.ts";
import { createMemoryStore, fakeProcesses } from "../fakes/memory_store.ts";
import { validateSessionId } from "../../lib/sys/validate.ts";

const SELF = "4242:100";
const URL = "http://127.0.0.1:4096";

interface Run {
  send(message: unknown): void;
  sendRaw(text: string): void;
  out: OutMessage[];
  logs: string[];
  clock: FakeClock;
  backend: FakeBackend;
  server: FakeOpencode;
  /** Ends input and waits for the bridge to finish, moving the clock meanwhile. */
  finish(): Promise<number>;
}

function start(
  opts: {
    store?: PaneStore;
    backend?: FakeBackend;
    server?: FakeOpencode;
    living?: number[];
    config?: Partial<Config>;
    env?: Credentials;
    url?: string;
    /** What the bridge finds for a server itself (a 2.x service's password). */
    discover?: (url: string, line: number) => Credentials | undefined;
  } = {},
): Run {
  const clock = createFakeClock();
  const backend = opts.backend ?? createFakeBackend();
  const server = opts.server ?? createFakeOpencode();
  const store = opts.store ?? createMemoryStore();
  const processes = fakeProcesses([4242, ...(opts.living ?? [])]);
  const out: OutMessage[] = [];
  const logs: string[] = [];
  const log: Logger = {
    debug: (m) => logs.push(m),
    info: (m) => logs.push(m),
    warn: (m) => logs.push(m),
    error: (m) => logs.push(m),
  };
  const queue: string[] = [];
  let wake: (() => void) | null = null;
  let ended = false;
  const io: BridgeIO = {
    input: (async function* () {
      const enc = new TextEncoder();
      while (true) {
        while (queue.length) yield enc.encode(queue.shift()!);
        if (ended) return;
        await new Promise<void>((r) => (wake = r));
      }
    })(),
    write: (line) => void out.push(OutMessageSchema.parse(JSON.parse(line))),
    flush: () => Promise.resolve(),
    onSignal: () => () => {},
  };
  const config = resolveConfig({
    env: () => undefined,
    flags: {
      close_grace_ms: 0,
      idle_close_delay_ms: 1000,
      min_pane_lifetime_ms: 1000,
      poll_interval_ms: 500,
      ...opts.config,
    },
  });
  const client = (url: string, auth?: Credentials, line?: 1 | 2) =>
    createOpencodeClient({
      url,
      fetch: server.fetch,
      clock,
      ...(auth ? { auth } : {}),
      ...(line === undefined ? {} : { line }),
    });
  const running = runBridge({
    io,
    log,
    version: "0.0.0-test",
    start: {
      ...(opts.url !== undefined ? { url: opts.url } : { url: URL }),
      directory: "/work",
      ...(opts.env ? { auth: opts.env } : {}),
    },
    resolveConfig: () => config,
    ...(opts.discover ? { discover: opts.discover } : {}),
    select: () =>
      Promise.resolve({ ok: true, backend, probe: { binary: "fake", version: "1.0.0" } }),
    loopDeps: (c, emit) => ({
      clock,
      log,
      emit,
      config: c,
      store,
      processes,
      owner: SELF,
      server: client,
    }),
    reclaim: (b, grant, onCorrupt) =>
      runCleanup({
        store,
        backends: { [b.name]: b },
        processes,
        client: (url, auth) => client(url, auth),
        ...(grant ? { grant } : {}),
        clock,
        log,
        graceMs: 0,
      }, { dryRun: false, all: false, self: SELF, onCorrupt }),
  });
  let done = false;
  const code = running.finally(() => (done = true));
  const push = (text: string) => {
    queue.push(text);
    wake?.();
  };
  return {
    send: (m) => push(`${JSON.stringify(m)}\n`),
    sendRaw: push,
    out,
    logs,
    clock,
    backend,
    server,
    async finish() {
      ended = true;
      wake?.();
      while (!done) await clock.advance(50);
      return await code;
    },
  };
}

/** The spawn token of every test pane below (the fake shows it, as tmux's start command does). */
const TOKEN = "0123456789abcdef0123456789abcdef";

function record(paneId: string, sessionId: string, owner: string): PaneRecordInput {
  return {
    sessionId,
    paneId,
    backend: "tmux",
    title: "t",
    openedAt: new Date(0).toISOString(),
    owner,
    server: URL,
    directory: "/srv/project",
    // What the bridge that opened it recorded: the fake's instance and the pane's token.
    token: TOKEN,
    instance: { address: "fake tmux", stamp: "server 1" },
  };
}

/** A fake pane as a dead bridge left it. */
function leftPane(backend: FakeBackend, paneId: string, sessionId: string, owner: string) {
  backend.panes.set(paneId, {
    paneId,
    req: {
      sessionId: validateSessionId(sessionId),
      title: "t",
      argv: [],
      cwd: "/",
      env: {},
      owner,
      token: TOKEN,
    },
    title: "t",
    dead: false,
    exitsOnInterrupt: true,
  });
}

Deno.test("runBridge() reclaims a SIGKILLed bridge's idle and deleted panes as orphan, adopts its busy one and keeps live owners'", async () => {
  const backend = createFakeBackend();
  const store = createMemoryStore();
  const server = createFakeOpencode();
  const DEAD = "999999:1";
  const LIVE = "5555:100";
  const rows: Array<[string, string, string]> = [
    ["%10", "ses_idle", DEAD],
    ["%11", "ses_busy", DEAD],
    ["%12", "ses_deleted", DEAD],
    ["%13", "ses_live", LIVE],
    ["%14", "ses_mine", SELF],
  ];
  for (const [pane, session, owner] of rows) {
    store.put(record(pane, session, owner));
    leftPane(backend, pane, session, owner);
  }
  store.put(record("%15", "ses_vanished", DEAD)); // its pane is already gone
  server.known.add("ses_idle");
  server.busy("ses_busy");
  server.busy("ses_live");
  const r = start({ backend, store, server, living: [5555] });
  await r.clock.advance(100);
  const code = await r.finish();
  assert.equal(code, 0);
  assert.equal(r.out[0].type, "ready");
  const closed = r.out.filter((m) => m.type === "pane.closed");
  assert.deepEqual(closed.map((m) => m.type === "pane.closed" && [m.sessionID, m.reason]).sort(), [
    ["ses_busy", "shutdown"],
    ["ses_deleted", "orphan"],
    ["ses_idle", "orphan"],
  ]);
  // The busy one was taken over (pane.opened), so this bridge closed it at its own exit.
  assert.deepEqual(r.out.filter((m) => m.type === "pane.opened"), [
    { type: "pane.opened", sessionID: "ses_busy", paneId: "%11", backend: "tmux" },
  ]);
  assert.deepEqual([...backend.panes.keys()].sort(), ["%13", "%14"]);
  assert.deepEqual([...store.records.values()].map((x) => x.paneId).sort(), ["%13", "%14"]);
  assert.deepEqual(r.out.at(-1), { type: "bye", closed: 1 });
});

Deno.test("runBridge() keeps an orphan when the server refuses the credentials", async () => {
  const backend = createFakeBackend();
  const store = createMemoryStore();
  const server = createFakeOpencode();
  server.password = "right";
  store.put(record("%10", "ses_a", "999999:1"));
  leftPane(backend, "%10", "ses_a", "999999:1");
  const r = start({ backend, store, server });
  await r.clock.advance(100);
  await r.finish();
  assert.ok(!r.out.some((m) => m.type === "pane.closed"));
  assert.ok(backend.panes.has("%10"));
});

Deno.test("runBridge() reports corrupt state as a state_corrupt error line, sets it aside and keeps serving", async () => {
  const dir = mkdtempSync(`${tmpdir()}/muxbridge-state-`);
  try {
    const store = createPaneStore(dir);
    mkdirSync(`${dir}/panes`, { recursive: true });
    writeFileSync(`${dir}/panes/tmux.JTk.json`, "{not json");
    writeFileSync(`${dir}/panes/tmux.JTg.json`, JSON.stringify({ paneId: "%8" }));
    const r = start({ store });
    r.send({ type: "bridge.ping", id: 1 });
    await r.clock.advance(100);
    await r.finish();
    const errors = r.out.filter((m) => m.type === "error");
    assert.equal(errors.length, 2);
    for (const e of errors) {
      assert.ok(e.type === "error" && e.code === "state_corrupt" && e.line === null);
    }
    assert.ok(r.out.some((m) => m.type === "pong"));
    assert.deepEqual(store.list(), { records: [], corrupt: [] }, "set aside");
    assert.equal(Deno.readDirSync(`${dir}/corrupt`).toArray().length, 2);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

Deno.test("runBridge() opens after readiness, polls and closes on a confirmed idle, end to end on fakes", async () => {
  const r = start();
  r.server.busy("ses_a");
  r.send({ type: "bridge.hello", serverUrl: `${URL}/`, directory: "/work" });
  r.send({
    type: "session.created",
    properties: {
      sessionID: "ses_a",
      info: { id: "ses_a", parentID: "ses_p", title: "a", directory: "/srv/project" },
    },
  });
  await r.clock.advance(2000);
  assert.ok(r.out.some((m) => m.type === "pane.opened"));
  r.server.idle("ses_a");
  r.send({ type: "session.status", properties: { sessionID: "ses_a", status: { type: "idle" } } });
  r.send({ type: "session.idle", properties: { sessionID: "ses_a" } });
  await r.clock.advance(2000);
  assert.ok(r.out.some((m) => m.type === "pane.closed" && m.reason === "idle"));
  assert.ok(r.server.requests.some((q) => q.startsWith("GET /session/status")));
  await r.finish();
});

Deno.test("runBridge() uses hello.auth for the server and never writes the password anywhere", async () => {
  const password = "pw-Very$ecret-42";
  const server = createFakeOpencode();
  server.password = password;
  server.busy("ses_a");
  const r = start({ server, url: "", env: { username: "opencode", password: "env-wrong" } });
  for (const bad of [`ftp://u:${password}@127.0.0.1/`, `u:${password}@[nohost`]) {
    r.send({ type: "bridge.hello", serverUrl: bad, directory: "/w" });
  }
  r.send({
    type: "bridge.hello",
    serverUrl: URL,
    directory: "/work",
    auth: { password },
  });
  r.send({
    type: "session.created",
    properties: { sessionID: "ses_a", info: { id: "ses_a", parentID: "ses_p", title: "a" } },
  });
  await r.clock.advance(2000);
  assert.ok(r.out.some((m) => m.type === "pane.opened"), JSON.stringify(r.out));
  const expected = `Basic ${btoa(`opencode:${password}`)}`;
  assert.ok(server.authorizations.length > 0 && server.authorizations.every((a) => a === expected));
  const pane = [...r.backend.panes.values()][0];
  assert.ok(!pane.req.argv.join(" ").includes(password));
  assert.equal(pane.req.env.OPENCODE_SERVER_PASSWORD, password);
  await r.finish();
  assert.equal(r.out.filter((m) => m.type === "error").length, 2, "the bad URLs were reported");
  assert.ok(!JSON.stringify(r.out).includes(password), "no protocol line carries the password");
  assert.ok(!r.logs.some((l) => l.includes(password)), "no log line carries the password");
});

Deno.test("runBridge() refuses a --url or hello URL that carries credentials, without repeating them", async () => {
  const server = createFakeOpencode();
  server.password = "from-env";
  server.busy("ses_a");
  const r = start({
    server,
    url: "http://me:from-url@127.0.0.1:4096/",
    env: { username: "opencode", password: "from-env" },
  });
  r.send({
    type: "bridge.hello",
    serverUrl: "http://me:from-url@127.0.0.1:4096/",
    directory: "/w",
  });
  r.send({
    type: "session.created",
    properties: { sessionID: "ses_a", info: { id: "ses_a", parentID: "ses_p", title: "a" } },
  });
  await r.clock.advance(1000);
  const errors = r.out.filter((m) => m.type === "error");
  assert.equal(errors.length, 2, JSON.stringify(r.out));
  for (const e of errors) assert.match(e.type === "error" ? e.message : "", /carries credentials/);
  assert.ok(!JSON.stringify(r.out).includes("from-url"), "no protocol line repeats them");
  assert.ok(!r.logs.some((l) => l.includes("from-url")), "no log line repeats them");
  assert.ok(!r.out.some((m) => m.type === "pane.opened"), "no server URL, no pane");
  assert.ok(server.authorizations.every((a) => !a.includes(btoa("me:from-url"))));
  await r.finish();
});

Deno.test("runBridge() holds an idle close while bridge.job runs, closes when it completes, and a busy status clears it", async () => {
  const r = start();
  const ev = (type: string, id: string) =>
    type === "created"
      ? {
        type: "session.created",
        properties: { sessionID: id, info: { id, parentID: "ses_p", title: id } },
      }
      : { type: "session.status", properties: { sessionID: id, status: { type } } };
  for (const id of ["ses_a", "ses_b"]) {
    r.server.busy(id);
    r.send(ev("created", id));
    r.send(ev("busy", id));
  }
  await r.clock.advance(2000);
  for (const id of ["ses_a", "ses_b"]) {
    r.send({ type: "bridge.job", sessionID: id, status: "running" });
    r.server.idle(id);
    r.send(ev("idle", id));
  }
  await r.clock.advance(30_000);
  assert.ok(!r.out.some((m) => m.type === "pane.closed"), "both held by their jobs");
  // ses_a: the job completes -> the close happens. ses_b: busy first, then the job ends -> no close.
  r.send({ type: "bridge.job", sessionID: "ses_a", status: "completed" });
  r.server.busy("ses_b");
  r.send(ev("busy", "ses_b"));
  r.send({ type: "bridge.job", sessionID: "ses_b", status: "cancelled" });
  await r.clock.advance(2000);
  const closed = r.out.filter((m) => m.type === "pane.closed");
  assert.deepEqual(closed.map((m) => m.type === "pane.closed" && [m.sessionID, m.reason]), [
    ["ses_a", "idle"],
  ]);
  await r.finish();
});

Deno.test("a 2.x plugin's hello: the bridge finds the service password itself and opens only its TUI's children", async () => {
  const server = createFakeOpencode();
  server.line = 2;
  server.version = "2.1.2";
  server.password = "svc-pw";
  const asked: string[] = [];
  const run = start({
    server,
    url: "",
    discover: (url, line) => {
      asked.push(`${url} ${line}`);
      return { username: "opencode", password: "svc-pw" };
    },
  });
  const SVC = "http://127.0.0.1:49374";
  run.send({
    type: "bridge.hello",
    serverUrl: SVC,
    directory: "/p",
    opencode: "2.1.2",
    scope: "tui",
  });
  run.send({ type: "bridge.view", sessionID: "ses_mine" });
  for (const [child, parent] of [["ses_c1", "ses_mine"], ["ses_c2", "ses_theirs"]]) {
    server.busy(child);
    run.send({
      type: "session.created",
      location: { directory: "/p" },
      data: { sessionID: child, parentID: parent, title: `child ${child}` },
    });
    run.send({ type: "session.execution.started", data: { sessionID: child } });
  }
  await run.clock.advance(200);
  assert.deepEqual(asked, [`${SVC} 2`]);
  const said = run.out.map((m) => `${m.type} ${"sessionID" in m ? m.sessionID : ""}`);
  assert.ok(said.includes("pane.opened ses_c1"), said.join("; "));
  assert.ok(said.includes("pane.skipped ses_c2"), said.join("; "));
  const pane = [...run.backend.panes.values()][0];
  assert.equal(pane.req.env.OPENCODE_PASSWORD, "svc-pw");
  assert.ok(pane.req.argv.includes("--server"));
  assert.ok(!run.logs.some((l) => l.includes("svc-pw")));
  assert.ok(!JSON.stringify(run.out).includes("svc-pw"));
  assert.equal(await run.finish(), 0);
});

Deno.test("a 1.x plugin's hello (no opencode field) asks for nothing and keeps every child", async () => {
  const asked: string[] = [];
  const run = start({ discover: (url) => (asked.push(url), undefined) });
  run.send({ type: "bridge.hello", serverUrl: URL, directory: "/work" });
  run.server.busy("ses_c");
  run.send({
    type: "session.created",
    properties: { info: { id: "ses_c", parentID: "ses_p", title: "c", directory: "/w" } },
  });
  run.send({
    type: "session.status",
    properties: { sessionID: "ses_c", status: { type: "busy" } },
  });
  await run.clock.advance(200);
  assert.deepEqual(asked, []);
  assert.ok(run.out.some((m) => m.type === "pane.opened"));
  assert.equal(await run.finish(), 0);
});
