import assert from "node:assert/strict";
import { type BridgeIO, runBridge } from "../../lib/bridge/bridge.ts";
import { type Config, resolveConfig } from "../../lib/config/config.ts";
import { silentLogger } from "../../lib/sys/log.ts";
import { type OutMessage, OutMessageSchema } from "../../lib/bridge/protocol.ts";
import type { Selection } from "../../lib/backend/select.ts";
import { createFakeBackend, type FakeBackend } from "../fakes/fake_backend.ts";
import { createFakeClock } from "../fakes/fake_clock.ts";
import { createMemoryStore, fakeProcesses } from "../fakes/memory_store.ts";

interface Run {
  out: OutMessage[];
  code: number;
  backend: FakeBackend;
}

/** Runs the bridge over the given input chunks; `signalAfter` fires SIGTERM after that many output lines. */
async function bridge(
  chunks: Array<string | Uint8Array>,
  opts: {
    selection?: (b: FakeBackend) => Selection;
    config?: Partial<Config>;
    signalAfter?: number;
    hold?: boolean;
    url?: string;
    /** Sends SIGTERM once this holds (checked as the clock moves). */
    stopWhen?: (backend: FakeBackend) => boolean;
  } = {},
): Promise<Run> {
  const backend = createFakeBackend();
  const clock = createFakeClock();
  const out: OutMessage[] = [];
  let signal: ((s: string) => void) | null = null;
  let endInput!: () => void;
  const inputEnded = new Promise<void>((r) => (endInput = r));
  const io: BridgeIO = {
    input: (async function* () {
      const enc = new TextEncoder();
      for (const c of chunks) yield typeof c === "string" ? enc.encode(c) : c;
      if (opts.hold) await inputEnded;
    })(),
    write(line) {
      assert.ok(line.endsWith("\n") && !line.slice(0, -1).includes("\n"), "one line per write");
      const parsed = OutMessageSchema.parse(JSON.parse(line));
      out.push(parsed);
      if (opts.signalAfter !== undefined && out.length === opts.signalAfter) signal?.("SIGTERM");
    },
    flush: () => Promise.resolve(),
    onSignal(handler) {
      signal = handler;
      return () => (signal = null);
    },
  };
  const config = resolveConfig({
    env: () => undefined,
    flags: { close_grace_ms: 0, ...opts.config },
  });
  const running = runBridge({
    io,
    log: silentLogger,
    version: "0.0.0-test",
    start: { url: opts.url ?? "http://127.0.0.1:4096/", directory: "/work" },
    resolveConfig: (hello) =>
      hello === undefined ? config : resolveConfig({ env: () => undefined, hello }),
    select: () =>
      Promise.resolve(
        opts.selection
          ? opts.selection(backend)
          : { ok: true, backend, probe: { binary: "fake", version: "1.0.0" } },
      ),
    loopDeps: (c, emit) => ({
      clock,
      log: silentLogger,
      emit,
      config: c,
      store: createMemoryStore(),
      processes: fakeProcesses(),
      owner: "1:1",
    }),
  });
  // Let timers (layout debounce, close waits) run while the bridge works.
  let done = false;
  const code = running.finally(() => (done = true));
  const sigterm = () => signal?.("SIGTERM");
  while (!done) {
    await clock.advance(50);
    if (opts.stopWhen?.(backend)) sigterm();
  }
  endInput();
  return { out, code: await code, backend };
}

const line = (o: unknown) => `${JSON.stringify(o)}\n`;
const ev = {
  created: (id: string, parentID?: string) =>
    line({
      type: "session.created",
      properties: {
        sessionID: id,
        info: { id, title: `t ${id}`, directory: "/work", ...(parentID ? { parentID } : {}) },
      },
    }),
  status: (id: string, type: string) =>
    line({ type: "session.status", properties: { sessionID: id, status: { type } } }),
  deleted: (id: string) =>
    line({
      type: "session.deleted",
      properties: { sessionID: id, info: { id, title: "", parentID: "ses_p" } },
    }),
};

Deno.test("runBridge() writes ready first and bye last, with exit code 0 at end of input", async () => {
  const r = await bridge([]);
  assert.equal(r.code, 0);
  assert.deepEqual(r.out, [
    { type: "ready", protocol: 1, version: "0.0.0-test", backend: "tmux" },
    { type: "bye", closed: 0 },
  ]);
});

Deno.test("runBridge() keeps ready first when its start URL is unusable: the error follows it", async () => {
  const r = await bridge([], { url: "notaurl" });
  assert.equal(r.code, 0);
  assert.deepEqual(r.out.map((m) => m.type), ["ready", "error", "bye"]);
  assert.match(String((r.out[1] as { message: string }).message), /"notaurl"/);
});

Deno.test("runBridge() answers one error per unusable line, with its line number, and goes on", async () => {
  const r = await bridge([
    "{not json\n",
    "[1,2]\n",
    line({ type: "bridge.nope" }),
    line({ type: "bridge.ping", id: 7, extra: true }),
    line({ type: "session.status", properties: {} }),
    line({ type: "bridge.ping", id: "x" }),
    "\xff\n",
    line({ type: "message.part.delta", properties: { delta: "noise" } }),
    "\n",
    line({ type: "bridge.ping", id: 9 }),
  ]);
  const errors = r.out.filter((m) => m.type === "error");
  assert.deepEqual(errors.map((e) => e.type === "error" && [e.code, e.line]), [
    ["invalid_json", 1],
    ["invalid_message", 2],
    ["invalid_message", 3],
    ["invalid_message", 4],
    ["invalid_message", 5],
    ["invalid_json", 7],
  ]);
  assert.deepEqual(r.out.filter((m) => m.type === "pong"), [{ type: "pong", id: "x" }, {
    type: "pong",
    id: 9,
  }]);
  assert.equal(r.out.at(-1)?.type, "bye");
});

Deno.test("runBridge() reports invalid UTF-8 as an error line", async () => {
  const r = await bridge([
    new Uint8Array([0xff, 0xfe, 0x0a]),
    line({ type: "bridge.ping", id: 1 }),
  ]);
  assert.deepEqual(r.out.slice(1, 3), [
    { type: "error", code: "invalid_utf8", message: "Cannot use line: not valid UTF-8", line: 1 },
    { type: "pong", id: 1 },
  ]);
});

Deno.test("runBridge() rejects a line over 1 MiB once and handles the next line", async () => {
  const big = "x".repeat(1024 * 1024 + 10);
  const r = await bridge([
    `{"type":"${big.slice(0, 600_000)}`,
    `${big.slice(600_000)}"}\n`,
    line({ type: "bridge.ping", id: 2 }),
  ]);
  const err = r.out[1];
  assert.ok(err.type === "error" && err.code === "line_too_long" && err.line === 1);
  assert.deepEqual(r.out[2], { type: "pong", id: 2 });
});

Deno.test("runBridge() opens, closes and reports panes, closing every owned pane before bye", async () => {
  const r = await bridge([
    ev.created("ses_p"),
    ev.created("ses_a", "ses_p"),
    ev.created("ses_b", "ses_p"),
    ev.status("ses_a", "busy"),
    ev.deleted("ses_b"),
  ]);
  const kinds = r.out.map((m) =>
    m.type === "pane.closed"
      ? `closed ${m.sessionID} ${m.reason}`
      : m.type === "pane.opened"
      ? `opened ${m.sessionID}`
      : m.type
  );
  assert.deepEqual(kinds.filter((k) => k.startsWith("opened")).sort(), [
    "opened ses_a",
    "opened ses_b",
  ]);
  assert.ok(kinds.includes("closed ses_b deleted"));
  assert.ok(kinds.includes("closed ses_a shutdown"));
  assert.deepEqual(r.out.at(-1), { type: "bye", closed: 1 });
  assert.equal(r.backend.panes.size, 0);
});

Deno.test("runBridge() stops on bridge.shutdown and ignores what follows", async () => {
  const r = await bridge([line({ type: "bridge.shutdown" }), line({ type: "bridge.ping", id: 1 })]);
  assert.deepEqual(r.out.map((m) => m.type), ["ready", "bye"]);
});

Deno.test("runBridge() ends in order on SIGTERM while input stays open", async () => {
  const r = await bridge([ev.created("ses_a", "ses_p")], { signalAfter: 2, hold: true });
  assert.deepEqual(r.out.map((m) => m.type), ["ready", "pane.opened", "pane.closed", "bye"]);
  assert.equal(r.code, 0);
});

Deno.test("runBridge() keeps panes open at exit when close_on_exit is false", async () => {
  const r = await bridge([ev.created("ses_a", "ses_p")], { config: { close_on_exit: false } });
  assert.deepEqual(r.out.at(-1), { type: "bye", closed: 0 });
  assert.equal(r.backend.panes.size, 1);
});

Deno.test("runBridge() without a backend says why in ready and skips children", async () => {
  const r = await bridge([ev.created("ses_a", "ses_p")], {
    selection: () => ({
      ok: false,
      name: null,
      reason: "no_backend",
      code: "no_backend",
      message: "No supported multiplexer found",
      hint: "Run inside tmux",
    }),
  });
  const ready = r.out[0];
  assert.ok(
    ready.type === "ready" && ready.backend === null &&
      ready.reason?.includes("No supported multiplexer"),
  );
  assert.deepEqual(r.out[1], {
    type: "pane.skipped",
    sessionID: "ses_a",
    reason: "no_backend",
    hint: "No supported multiplexer found. Run inside tmux",
  });
});

Deno.test("runBridge() answers a hello that changes the URL with a new ready line", async () => {
  const r = await bridge([
    line({ type: "bridge.hello", serverUrl: "http://127.0.0.1:4096/", directory: "/work" }),
    line({ type: "bridge.hello", serverUrl: "http://127.0.0.1:5000", directory: "/work" }),
    ev.created("ses_a", "ses_p"),
  ]);
  assert.deepEqual(r.out.filter((m) => m.type === "ready").length, 2);
  const pane = r.out.find((m) => m.type === "pane.opened");
  assert.ok(pane);
});

Deno.test("runBridge() rejects a hello with a bad config key, naming it, and keeps serving", async () => {
  const r = await bridge([
    line({
      type: "bridge.hello",
      serverUrl: "http://127.0.0.1:4096",
      directory: "/work",
      config: { main_pane_sise: 50 },
    }),
    line({ type: "bridge.ping", id: 1 }),
  ]);
  const err = r.out[1];
  assert.ok(
    err.type === "error" && err.code === "invalid_config" &&
      err.message.includes("main_pane_sise") && err.line === 1,
  );
  assert.deepEqual(r.out[2], { type: "pong", id: 1 });
});

Deno.test("runBridge() tells a child with a malformed id why it gets no pane, and goes on", async () => {
  const r = await bridge([
    ev.created("ses_$(touch x)", "ses_p"),
    ev.status("-rf", "busy"),
    line({ type: "bridge.ping", id: 1 }),
  ]);
  assert.deepEqual(r.out.slice(1, 5), [
    {
      type: "pane.skipped",
      sessionID: "ses_$(touch x)",
      reason: "invalid_id",
      hint: 'A session id is "ses_" followed by 1-128 letters or digits',
    },
    {
      type: "error",
      code: "invalid_message",
      message: 'Cannot use session id "ses_$(touch x)"',
      line: 1,
    },
    { type: "error", code: "invalid_message", message: 'Cannot use session id "-rf"', line: 2 },
    { type: "pong", id: 1 },
  ]);
  assert.equal(r.backend.panes.size, 0);
});

Deno.test("runBridge() applies a hello config that comes after children exist, each key from its next use", async () => {
  const r = await bridge([
    ev.created("ses_a", "ses_p"),
    line({
      type: "bridge.hello",
      serverUrl: "http://127.0.0.1:4096",
      directory: "/work",
      config: { layout: "tiled", close_on_exit: false },
    }),
    ev.created("ses_b", "ses_p"),
  ], { hold: true, stopWhen: (b) => b.layouts.length > 0 });
  // ses_a's pane was open (its layout pass still to come) when the hello came: the pass uses it.
  assert.deepEqual(r.backend.layouts.map((l) => l.layout), ["tiled"]);
  assert.deepEqual(r.out.at(-1), { type: "bye", closed: 0 }, "close_on_exit from the hello");
  assert.equal(r.backend.panes.size, 2);
});
