/**
 * `exclude`, `max_panes` and live status end to end through the bridge: NDJSON lines in (the
 * config from `bridge.hello`), protocol lines out, a fake backend and a fake clock underneath.
 */

import assert from "node:assert/strict";
import { type BridgeIO, runBridge } from "../../lib/bridge/bridge.ts";
import { type Config, resolveConfig } from "../../lib/config/config.ts";
import { type OutMessage, OutMessageSchema } from "../../lib/bridge/protocol.ts";
import { silentLogger } from "../../lib/sys/log.ts";
import { createFakeBackend, type FakeBackend } from "../fakes/fake_backend.ts";
import { createFakeClock, type FakeClock } from "../fakes/fake_clock.ts";
import { createMemoryStore, fakeProcesses } from "../fakes/memory_store.ts";

interface Live {
  out: OutMessage[];
  backend: FakeBackend;
  clock: FakeClock;
  /** Writes lines to the bridge's stdin. */
  send(...lines: string[]): Promise<void>;
  /** Ends input and waits for the exit code. */
  end(): Promise<number>;
}

/** Starts a bridge whose stdin stays open until `end`. */
function start(config: Partial<Config> = {}): Live {
  const backend = createFakeBackend();
  const clock = createFakeClock();
  const out: OutMessage[] = [];
  const queue: string[] = [];
  let wake: (() => void) | null = null;
  let ended = false;
  const io: BridgeIO = {
    input: (async function* () {
      const enc = new TextEncoder();
      while (true) {
        while (queue.length > 0) yield enc.encode(queue.shift()!);
        if (ended) return;
        await new Promise<void>((r) => (wake = r));
      }
    })(),
    write(line) {
      out.push(OutMessageSchema.parse(JSON.parse(line)));
    },
    flush: () => Promise.resolve(),
    onSignal: () => () => {},
  };
  const resolved = resolveConfig({ env: () => undefined, flags: { close_grace_ms: 0, ...config } });
  const store = createMemoryStore();
  const running = runBridge({
    io,
    log: silentLogger,
    version: "0.0.0-test",
    start: { url: "http://127.0.0.1:4096/", directory: "/work" },
    resolveConfig: (hello) =>
      hello === undefined ? resolved : resolveConfig({ env: () => undefined, hello }),
    select: () => Promise.resolve({ ok: true, backend, probe: { binary: "fake", version: "1" } }),
    loopDeps: (c, emit) => ({
      clock,
      log: silentLogger,
      emit,
      config: c,
      store,
      processes: fakeProcesses(),
      owner: "1:1",
    }),
  });
  const poke = () => {
    const w = wake;
    wake = null;
    w?.();
  };
  return {
    out,
    backend,
    clock,
    async send(...lines) {
      queue.push(...lines);
      poke();
      await clock.advance(10);
    },
    async end() {
      ended = true;
      poke();
      let done = false;
      const code = running.finally(() => (done = true));
      while (!done) await clock.advance(50);
      return await code;
    },
  };
}

const line = (o: unknown) => `${JSON.stringify(o)}\n`;
const hello = (config: Record<string, unknown>) =>
  line({ type: "bridge.hello", serverUrl: "http://127.0.0.1:4096", directory: "/work", config });
const created = (id: string, title: string, agent?: string) =>
  line({
    type: "session.created",
    properties: {
      info: { id, parentID: "ses_parent", title, directory: "/work", ...(agent ? { agent } : {}) },
    },
  });
const status = (id: string, type: string, attempt?: number) =>
  line({
    type: "session.status",
    properties: { sessionID: id, status: { type, ...(attempt ? { attempt, next: 0 } : {}) } },
  });
const said = (out: OutMessage[]) =>
  out.flatMap((m) =>
    m.type === "pane.opened" || m.type === "pane.closed" || m.type === "pane.skipped"
      ? [
        `${m.type} ${m.sessionID}${"reason" in m ? ` ${m.reason}` : ""}${
          m.type === "pane.skipped" && m.position !== undefined ? ` #${m.position}` : ""
        }`,
      ]
      : []
  );

Deno.test("bridge: exclude from bridge.hello skips matching agents and titles with reason excluded", async () => {
  const b = start();
  await b.send(hello({ exclude: ["explore", "*(@review*"] }));
  await b.send(
    created("ses_a", "Map the repository (@explore subagent)"),
    created("ses_b", "Check the diff (@reviewer subagent)"),
    created("ses_c", "anything", "EXPLORE"),
    created("ses_d", "Write the docs (@general subagent)"),
  );
  await b.send(...["ses_a", "ses_b", "ses_c", "ses_d"].map((id) => status(id, "busy")));
  assert.equal(await b.end(), 0);
  assert.deepEqual(said(b.out), [
    "pane.skipped ses_a excluded",
    "pane.skipped ses_b excluded",
    "pane.skipped ses_c excluded",
    "pane.opened ses_d",
    "pane.closed ses_d shutdown",
  ]);
  const skipped = b.out.find((m) => m.type === "pane.skipped");
  assert.match(skipped?.type === "pane.skipped" ? skipped.hint : "", /exclude pattern "explore"/);
});

Deno.test("bridge: an exclude pattern that is no glob is a config error naming the key", async () => {
  const b = start();
  await b.send(hello({ exclude: ["ok", "[broken"] }), line({ type: "bridge.ping", id: 1 }));
  await b.end();
  const error = b.out.find((m) => m.type === "error");
  assert.equal(error?.type === "error" && error.code, "invalid_config");
  assert.match(
    error?.type === "error" ? error.message : "",
    /key "exclude\.1": not a valid glob: a \[ is never closed/,
  );
  assert.ok(b.out.some((m) => m.type === "pong"), "the bridge goes on");
});

Deno.test("bridge: max_panes queues children with their place, then opens them as panes free", async () => {
  const b = start({ idle_close_delay_ms: 1000, min_pane_lifetime_ms: 0 });
  await b.send(hello({ max_panes: 1, idle_close_delay_ms: 1000, min_pane_lifetime_ms: 0 }));
  await b.send(created("ses_a", "a"), created("ses_b", "b"), created("ses_c", "c"));
  await b.send(status("ses_a", "busy"), status("ses_b", "busy"), status("ses_c", "busy"));
  assert.deepEqual(said(b.out).sort(), [
    "pane.opened ses_a",
    "pane.skipped ses_b max_panes #1",
    "pane.skipped ses_c max_panes #2",
  ]);
  await b.send(status("ses_a", "idle"));
  await b.clock.advance(1500);
  await b.send(status("ses_b", "idle"));
  await b.clock.advance(1500);
  assert.equal(await b.end(), 0);
  assert.deepEqual(said(b.out).slice(3), [
    "pane.closed ses_a idle",
    "pane.opened ses_b",
    "pane.closed ses_b idle",
    "pane.opened ses_c",
    "pane.closed ses_c shutdown",
  ]);
  assert.ok(b.backend.log.filter((l) => l.startsWith("spawn")).length === 3);
});

Deno.test("bridge: a child's live state reaches its pane title, retry attempt included", async () => {
  const b = start();
  await b.send(created("ses_a", "map the repository"));
  await b.send(status("ses_a", "busy"));
  await b.clock.advance(1000);
  assert.equal(b.backend.panes.get("%1")?.title, "[busy] map the repository");
  await b.send(status("ses_a", "retry", 3));
  await b.clock.advance(1000);
  assert.equal(b.backend.panes.get("%1")?.title, "[retry 3] map the repository");
  await b.send(line({
    type: "session.error",
    properties: { sessionID: "ses_a", error: { name: "APIError", data: { message: "boom" } } },
  }));
  await b.send(status("ses_a", "idle"));
  await b.clock.advance(1000);
  assert.equal(b.backend.panes.get("%1")?.title, "[error] map the repository");
  await b.end();
});

Deno.test("bridge: status_in_title false keeps the plain title", async () => {
  const b = start({ status_in_title: false });
  await b.send(created("ses_a", "plain"));
  await b.send(status("ses_a", "busy"));
  await b.clock.advance(1500);
  assert.equal(b.backend.panes.get("%1")?.title, "plain");
  await b.end();
});
