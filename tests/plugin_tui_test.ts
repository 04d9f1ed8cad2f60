/**
 * The OpenCode 2.x TUI entry (`plugin/tui.ts`) with a fake TUI context shaped like 2.1.2's
 * (upstream `packages/plugin/src/tui/context.ts`) and fake bridges (sh scripts that record
 * their argv and stdin): normal mode starts one `bridge --dir` once the TUI knows its server
 * and directory, sends a tui-scoped hello, only the events muxbridge reads and `bridge.view` on
 * route changes, restarts a dead bridge (telling it the view again), and ends it in the cleanup;
 * a TUI without a URL starts nothing; pane mode starts nothing, keeps the view on its child and
 * makes Ctrl+C exit.
 *
 * The fake bridge stands in for the real one: the bridge side of `scope`/`bridge.view` is not on
 * main yet. Waits are bounded polls of files the fakes and the plugin write.
 */

import assert from "node:assert/strict";
import { createRealClock, waitFor } from "../lib/sys/clock.ts";
import { startTui } from "../plugin/src/tui.ts";
import tuiEntry from "../plugin/tui.ts";
import serverEntry from "../plugin/server.ts";
import { setEnvForFile } from "./helpers/env_scope.ts";

const clock = createRealClock();
const STATE = Deno.makeTempDirSync({ prefix: "muxbridge-tui-state-" });
setEnvForFile({
  MUXBRIDGE_BIN: undefined,
  MUXBRIDGE_PLUGIN_LOG: undefined,
  MUXBRIDGE_STATE_DIR: STATE,
});
globalThis.addEventListener("unload", () => Deno.removeSync(STATE, { recursive: true }));

/**
 * Records its argv, then its start (so a start seen means its argv is whole), and its stdin
 * under its `--dir` ($3); says ready.
 */
const RECORDER = `printf '%s\\n' "$@" > "$3/argv"
echo "$$" >> "$3/starts"
echo '{"type":"ready","protocol":1,"version":"0.1.0","backend":null}'
cat >> "$3/stdin.ndjson"
echo ended >> "$3/ended"`;

/** Records its first line, then dies. */
const CRASHER = `echo start >> "$3/starts"
IFS= read -r line; printf '%s\\n' "$line" >> "$3/stdin.ndjson"
IFS= read -r line; printf '%s\\n' "$line" >> "$3/stdin.ndjson"
exit 3`;

type Route = Record<string, unknown>;

/** A TUI context as 2.1.2 hands `setup`, with handles to drive it. */
function fakeTui(
  urls: string[] = ["http://127.0.0.1:49374"],
  options: Record<string, unknown> = {},
  pid = 4242,
) {
  const listeners = new Set<(e: unknown) => void>();
  const t = {
    route: { type: "home" } as Route,
    location: undefined as { directory: string } | undefined,
    navigations: [] as Route[],
    layers: [] as Array<Record<string, unknown>>,
    dispatched: [] as string[],
    emit(details: Record<string, unknown>) {
      for (const h of listeners) h({ name: details.type, details });
    },
    listening: () => listeners.size,
    ctx: {} as Record<string, unknown>,
  };
  t.ctx = {
    options,
    get location() {
      return t.location;
    },
    app: { version: "2.1.2", channel: "latest" },
    client: { server: { info: () => Promise.resolve({ version: "2.1.2", pid, urls }) } },
    data: {
      listen(h: (e: unknown) => void) {
        listeners.add(h);
        return () => listeners.delete(h);
      },
    },
    ui: {
      router: {
        current: () => t.route,
        navigate(r: Route) {
          t.navigations.push(r);
          t.route = r;
        },
      },
    },
    keymap: {
      layer(spec: () => Record<string, unknown>) {
        t.layers.push(spec());
      },
      dispatch(id: string) {
        t.dispatched.push(id);
      },
    },
  };
  return t;
}

interface Rig {
  dir: string;
  log: string;
  bin: string;
  read(file: string): string;
  lines(): Array<Record<string, unknown>>;
  until(what: string, cond: () => boolean): Promise<void>;
  close(): Promise<void>;
}

async function rig(script = RECORDER): Promise<Rig> {
  const dir = await Deno.makeTempDir({ prefix: "muxbridge-tui-" });
  const bin = `${dir}/bridge`;
  await Deno.writeTextFile(bin, `#!/bin/sh\n${script}\n`);
  await Deno.chmod(bin, 0o755);
  const read = (file: string) => {
    try {
      return Deno.readTextFileSync(file.startsWith("/") ? file : `${dir}/${file}`);
    } catch {
      return "";
    }
  };
  const log = `${dir}/bridge.log`;
  return {
    dir,
    log,
    bin,
    read,
    // Whole lines only: a poll may read the file while the fake is writing it.
    lines: () => read("stdin.ndjson").split("\n").slice(0, -1).map((l) => JSON.parse(l)),
    async until(what, cond) {
      const ok = await waitFor(clock, cond, { deadline: clock.now() + 15_000, maxIntervalMs: 20 });
      assert.ok(ok, `timed out waiting for ${what}; log:\n${read(log)}`);
    },
    close: () => Deno.remove(dir, { recursive: true }),
  };
}

const options = (r: Rig, more: Record<string, unknown> = {}) => ({
  bin: r.bin,
  log: r.log,
  backoffMs: 20,
  // The fake ends as soon as its input does; no grace of seconds decides "ended" under load.
  stopGraceMs: 60_000,
  ...more,
});

Deno.test("the 2.x entries: the server entry is a no-op {id, setup}; the TUI entry is {id: muxbridge, setup}", () => {
  assert.equal(serverEntry.id, "muxbridge");
  assert.equal(serverEntry.setup(), undefined);
  assert.equal(tuiEntry.id, "muxbridge");
  assert.equal(typeof tuiEntry.setup, "function");
});

Deno.test("TUI normal mode: waits for the directory, starts one `bridge --dir` with a tui hello, forwards only the events muxbridge reads and each new view, and ends the bridge in its cleanup", async () => {
  const r = await rig();
  const t = fakeTui(["http://127.0.0.1:49374", "http://[::1]:49374"], options(r));
  const cleanup = startTui(t.ctx, r.dir, { env: {}, tickMs: 10 });
  try {
    t.emit({ type: "session.created", data: { sessionID: "ses_early" } }); // queued meanwhile
    // No directory yet (2.1.2 with a cold service): nothing starts.
    await new Promise((res) => setTimeout(res, 100));
    assert.equal(r.read("starts"), "");
    t.location = { directory: r.dir };
    await r.until("the bridge's start", () => r.read("starts") !== "");
    assert.deepEqual(r.read("argv").trim().split("\n"), ["bridge", "--dir", r.dir]);

    const events = [
      { type: "session.created", data: { sessionID: "ses_C", parentID: "ses_P" } },
      { type: "session.execution.started", data: { sessionID: "ses_C" } },
      { type: "session.text.delta", data: { sessionID: "ses_C", delta: "x" } },
      { type: "session.tool.input.delta", data: { sessionID: "ses_C" } },
      { type: "session.reasoning.delta", data: { sessionID: "ses_C" } },
      { type: "message.part.updated", data: {} },
      { type: "server.connected", data: {} },
      { type: "permission.asked", data: { sessionID: "ses_C" } },
      { type: "form.created", data: { sessionID: "ses_C" } },
      { type: "session.retry.scheduled", data: { sessionID: "ses_C", attempt: 2 } },
      { type: "session.execution.succeeded", data: { sessionID: "ses_C" } },
    ];
    for (const e of events) t.emit(e);
    t.route = { type: "session", sessionID: "ses_P" };
    t.emit({ type: "session.deleted", data: { sessionID: "ses_C" } });
    await r.until("the deletion", () => JSON.stringify(r.lines()).includes("session.deleted"));
    await new Promise((res) => setTimeout(res, 60)); // several ticks on the same view
    t.route = { type: "plugin", id: "x", name: "diff" }; // not a session: no view line
    await new Promise((res) => setTimeout(res, 30));
    t.route = { type: "session", sessionID: "ses_Q" };
    await r.until("the second view", () => JSON.stringify(r.lines()).includes("ses_Q"));

    const got = r.lines();
    assert.deepEqual(got[0], {
      type: "bridge.hello",
      serverUrl: "http://127.0.0.1:49374",
      directory: r.dir,
      opencode: "2.1.2",
      scope: "tui",
    });
    assert.deepEqual(got.slice(1).map((l) => `${l.type}${l.sessionID ? ` ${l.sessionID}` : ""}`), [
      "session.created",
      "session.created",
      "session.execution.started",
      "permission.asked",
      "form.created",
      "session.retry.scheduled",
      "session.execution.succeeded",
      "bridge.view ses_P",
      "session.deleted",
      "bridge.view ses_Q",
    ]);

    // A second load in the same TUI process starts no second bridge.
    const second = startTui(fakeTui(undefined, options(r)).ctx, r.dir, { env: {}, tickMs: 10 });
    await second();
    assert.match(r.read(r.log), /a bridge already runs for this TUI process/);

    await cleanup();
    await r.until("the bridge's end", () => r.read("ended") !== "");
    assert.equal(t.listening(), 0, "no longer listening");
    assert.match(r.read(r.log), /stopped/);
    assert.equal(r.read("starts").trim().split("\n").length, 1, "one bridge");

    // After the cleanup (a hot reload), a new load starts its own bridge.
    const t2 = fakeTui(undefined, options(r));
    t2.location = { directory: r.dir };
    const again = startTui(t2.ctx, r.dir, { env: {}, tickMs: 10 });
    await r.until("a new bridge", () => r.read("starts").trim().split("\n").length === 2);
    await again();
  } finally {
    await cleanup();
    await r.close();
  }
});

Deno.test("TUI normal mode: a restarted bridge gets the hello and the current view at once", async () => {
  const r = await rig(CRASHER);
  const t = fakeTui(undefined, options(r, { maxRestarts: 2 }));
  t.location = { directory: r.dir };
  t.route = { type: "session", sessionID: "ses_V" };
  const cleanup = startTui(t.ctx, r.dir, { env: {}, tickMs: 10 });
  try {
    await r.until("the give-up", () => /giving up after 2 restarts/.test(r.read(r.log)));
    const got = r.lines().map((l) => `${l.type}${l.sessionID ? ` ${l.sessionID}` : ""}`);
    assert.deepEqual(got, [
      "bridge.hello",
      "bridge.view ses_V", // the first start: from the queue
      "bridge.hello",
      "bridge.view ses_V", // each restart: with the hello
      "bridge.hello",
      "bridge.view ses_V",
    ]);
  } finally {
    await cleanup();
    await r.close();
  }
});

Deno.test("TUI normal mode runs the command `muxbridge install` recorded beside tui.js", async () => {
  const r = await rig();
  await Deno.writeTextFile(
    `${r.dir}/muxbridge.json`,
    JSON.stringify({ command: [r.bin], version: "0.1.0" }),
  );
  const t = fakeTui(undefined, { log: r.log });
  t.location = { directory: r.dir };
  const cleanup = startTui(t.ctx, r.dir, { env: {}, tickMs: 10 });
  try {
    await r.until("the bridge's start", () => r.read("starts") !== "");
    assert.match(r.read(r.log), /starting ".*\/bridge" \(from muxbridge\.json\)/);
  } finally {
    await cleanup();
    await r.close();
  }
});

Deno.test("TUI normal mode: a TUI whose server has no URL, or is its own private one (--standalone), starts nothing and says so once", async () => {
  for (
    const [urls, parent, said] of [
      [[], 1, /has no URL/g],
      [["http://127.0.0.1:40001"], Deno.pid, /its own private server \(--standalone\)/g],
    ] as const
  ) {
    const r = await rig();
    const t = fakeTui([...urls], options(r), 4242);
    t.location = { directory: r.dir };
    const cleanup = startTui(t.ctx, r.dir, {
      env: {},
      tickMs: 10,
      parentOf: (pid) => (pid === 4242 ? parent : null),
    });
    try {
      await r.until("the log line", () => new RegExp(said.source).test(r.read(r.log)));
      t.emit({ type: "session.created", data: { sessionID: "ses_C" } });
      await new Promise((res) => setTimeout(res, 100));
      assert.equal(r.read("starts"), "");
      assert.equal(r.read(r.log).match(said)?.length, 1);
    } finally {
      await cleanup();
      await r.close();
    }
  }
});

Deno.test("TUI normal mode: a TUI that can pair hands its bridge the paired token as the password, even on its own --standalone server", async () => {
  // The server's pairing route, as 2.1.2 answers it: one code, one token (docs/opencode.md).
  const redeemed: string[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (req) => {
    const m = /^\/auth\/connect\/([^/]+)$/.exec(new URL(req.url).pathname);
    if (!m || req.headers.get("accept") !== "application/json") {
      return new Response("no", { status: 404 });
    }
    redeemed.push(m[1]);
    return Response.json({ token: "1799213449.fg25-token" });
  });
  const url = `http://127.0.0.1:${server.addr.port}`;
  const r = await rig();
  const t = fakeTui([url], options(r), 4242);
  const client = t.ctx.client as { server: Record<string, unknown> };
  client.server.pair = () => Promise.resolve({ code: "52rXcode", expires_in: 300 });
  t.location = { directory: r.dir };
  // Its server is its own private child (--standalone): pairing makes it usable all the same.
  const cleanup = startTui(t.ctx, r.dir, {
    env: {},
    tickMs: 10,
    parentOf: (pid) => (pid === 4242 ? Deno.pid : null),
  });
  try {
    await r.until("the hello", () => r.lines().length > 0);
    assert.deepEqual(r.lines()[0], {
      type: "bridge.hello",
      serverUrl: url,
      directory: r.dir,
      opencode: "2.1.2",
      auth: { username: "opencode", password: "1799213449.fg25-token" },
      scope: "tui",
    });
    assert.deepEqual(redeemed, ["52rXcode"]);
    assert.ok(!r.read(r.log).includes("fg25-token"), "the token is never logged");
  } finally {
    await cleanup();
    await r.close();
    await server.shutdown();
  }
});

Deno.test("TUI normal mode: when the server stops taking the paired token (a restart with a new password), it pairs again and sends a new hello", async () => {
  let valid = "token-1";
  let codes = 0;
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (req) => {
    const path = new URL(req.url).pathname;
    if (path.startsWith("/auth/connect/")) return Response.json({ token: valid });
    if (path === "/api/info") {
      const ok = req.headers.get("authorization") === `Basic ${btoa(`opencode:${valid}`)}`;
      return ok ? Response.json({ version: "2.1.2" }) : new Response("{}", { status: 401 });
    }
    return new Response("no", { status: 404 });
  });
  const url = `http://127.0.0.1:${server.addr.port}`;
  const r = await rig();
  const t = fakeTui([url], options(r), 4242);
  const client = t.ctx.client as { server: Record<string, unknown> };
  client.server.pair = () => Promise.resolve({ code: `code${++codes}`, expires_in: 300 });
  t.location = { directory: r.dir };
  const cleanup = startTui(t.ctx, r.dir, { env: {}, tickMs: 10 });
  try {
    await r.until("the hello", () => r.lines().length > 0);
    // A reconnect while the token still works changes nothing.
    t.emit({ type: "server.connected", data: {} });
    await new Promise((res) => setTimeout(res, 300));
    const hellos = () => r.lines().filter((l) => l.type === "bridge.hello");
    assert.equal(hellos().length, 1);
    // The service restarted with a new password: the old token is refused.
    valid = "token-2";
    t.emit({ type: "server.connected", data: {} });
    await r.until("a second hello", () => hellos().length === 2);
    assert.deepEqual(hellos()[1].auth, { username: "opencode", password: "token-2" });
    assert.match(r.read(r.log), /paired again/);
  } finally {
    await cleanup();
    await r.close();
    await server.shutdown();
  }
});

Deno.test("TUI pane mode (MUXBRIDGE_PANE_SESSION): no bridge, nothing listened to; the view goes back to the child; Ctrl+C runs the TUI's own exit", async () => {
  const r = await rig();
  const t = fakeTui(undefined, options(r));
  t.location = { directory: r.dir };
  let killed = 0;
  const cleanup = startTui(t.ctx, r.dir, {
    env: { MUXBRIDGE_PANE_SESSION: "ses_child" },
    tickMs: 10,
    exit: () => killed++,
  });
  try {
    await r.until("the first correction", () => t.navigations.length === 1);
    assert.deepEqual(t.navigations[0], { type: "session", sessionID: "ses_child" });
    t.route = { type: "session", sessionID: "ses_parent" }; // Up, Esc or Ctrl+C went there
    await r.until("the view back on the child", () => t.navigations.length === 2);
    assert.deepEqual(t.route, { type: "session", sessionID: "ses_child" });
    t.route = { type: "plugin", id: "opencode.diffs", name: "diff" }; // a page: left alone
    await new Promise((res) => setTimeout(res, 60));
    assert.equal(t.navigations.length, 2);

    assert.equal(t.listening(), 0, "pane mode listens to nothing");
    assert.equal(t.layers.length, 1);
    const [command] = t.layers[0].commands as Array<{ bind: string; run(): void }>;
    assert.equal(command.bind, "ctrl+c");
    command.run();
    assert.deepEqual(t.dispatched, ["app.exit"]);
    assert.equal(killed, 0, "the TUI's own exit was enough");
    assert.equal(r.read("starts"), "", "no bridge in a pane");
    assert.match(r.read(r.log), /pane of ses_child: no bridge/);
  } finally {
    await cleanup();
    await r.close();
  }
});

Deno.test("TUI pane mode with a value that is no session id stays passive", async () => {
  const r = await rig();
  const t = fakeTui(undefined, options(r));
  const cleanup = startTui(t.ctx, r.dir, {
    env: { MUXBRIDGE_PANE_SESSION: "$(rm -rf ~)" },
    tickMs: 10,
  });
  try {
    await r.until("the log line", () => /not a session id/.test(r.read(r.log)));
    await new Promise((res) => setTimeout(res, 50));
    assert.deepEqual(t.navigations, []);
    assert.equal(r.read("starts"), "");
  } finally {
    await cleanup();
    await r.close();
  }
});

Deno.test("the TUI entry never throws into OpenCode, whatever the context", async () => {
  for (const ctx of [undefined, null, 42, {}, { data: {}, ui: {} }, { client: { server: {} } }]) {
    const cleanup = tuiEntry.setup(ctx);
    assert.equal(typeof cleanup, "function");
    await cleanup();
  }
});
