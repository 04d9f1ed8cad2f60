/**
 * The provider backend's protocol handling against a scripted provider in memory (no process):
 * exactly what is written, and what each kind of answer becomes.
 */

import assert from "node:assert/strict";
import { createProviderBackend } from "../../backends/provider/backend.ts";
import { providerJsonSchema } from "../../backends/provider/protocol.ts";
import type { LineProcessExit, LineProcessOpener } from "../../lib/sys/line_process.ts";
import { isMuxError } from "../../lib/sys/errors.ts";
import { createLogger } from "../../lib/sys/log.ts";
import { until } from "../helpers/until.ts";
import { providerDeps } from "./provider_fixture.ts";
import { validatePaneId, validateSessionId } from "../../lib/sys/validate.ts";

type Request = { id: number; method: string; params: Record<string, unknown> };

/**
 * A provider in memory: `answer` gets each request and returns the lines to send back (or
 * null: no answer). Every request is kept.
 */
function scripted(answer: (req: Request) => string[] | null) {
  const requests: Request[] = [];
  const open: LineProcessOpener = (_argv, options) => {
    let done = false;
    let resolveExit!: (e: LineProcessExit) => void;
    const exited = new Promise<LineProcessExit>((r) => resolveExit = r);
    const exit = () => {
      if (done) return;
      done = true;
      const e = { code: 0, signal: null, stderr: "" };
      options.onExit(e);
      resolveExit(e);
    };
    let lineNo = 0;
    return {
      pid: 4242,
      exited,
      write(text) {
        if (done) return false;
        const req = JSON.parse(text) as Request;
        requests.push(req);
        const lines = answer(req);
        queueMicrotask(() => {
          for (const line of lines ?? []) options.onItem({ kind: "line", line, lineNo: ++lineNo });
        });
        return true;
      },
      end: exit,
      kill: exit,
      stop: () => {
        exit();
        return exited;
      },
    };
  };
  return { open, requests };
}

const ok = (id: number, result: unknown) => JSON.stringify({ jsonrpc: "2.0", id, result });
const INIT = (caps: Record<string, boolean>) => ({
  protocolVersion: "1",
  provider: { name: "mem", version: "2.0.0" },
  capabilities: caps,
  selfPaneId: "a1",
});

function backendOn(answer: (req: Request) => string[] | null, timeoutMs = 5000) {
  const logs: string[] = [];
  const s = scripted(answer);
  const backend = createProviderBackend(
    providerDeps(
      ["mem"],
      { command_timeout_ms: timeoutMs },
      createLogger("debug", (l) => logs.push(l)),
    ),
    { open: s.open },
  );
  return { backend, requests: s.requests, logs };
}

const spawnReq = (env: Record<string, string> = {}) => ({
  sessionId: validateSessionId("ses_mem"),
  title: "fix #{pane_id} $HOME ^C",
  argv: ["opencode", "attach", "http://127.0.0.1:4096", "--session", "ses_mem"],
  cwd: "/tmp",
  env,
  owner: "cli",
  token: "0123456789abcdef0123456789abcdef",
});

Deno.test("provider backend: initialize sends protocol 1 and muxbridge's name; capabilities come from the answer", async () => {
  const { backend, requests } = backendOn((r) =>
    r.method === "initialize"
      ? [ok(r.id, INIT({ title: true, env: true }))]
      : [ok(r.id, { panes: [] })]
  );
  assert.equal(backend.capabilities.title, false, "nothing is promised before the handshake");
  const probe = await backend.probe();
  assert.deepEqual(probe, { binary: "mem", version: "2.0.0" });
  assert.deepEqual(requests[0].params.protocolVersion, "1");
  assert.deepEqual((requests[0].params.client as { name: string }).name, "muxbridge");
  assert.deepEqual(backend.capabilities, {
    layout: false,
    title: true,
    focusSafe: false,
    env: true,
    spawnToken: false,
    marks: false,
  });
  await backend.dispose?.();
});

Deno.test("provider backend: spawn sends argv, cwd, env, the clean title, the anchor and the token, and checks the list", async () => {
  const { backend, requests } = backendOn((r) => {
    if (r.method === "initialize") return [ok(r.id, INIT({ env: true, spawnToken: true }))];
    if (r.method === "spawn") return [ok(r.id, { paneId: "p7", pid: 99 })];
    return [ok(r.id, { panes: [{ paneId: "p7", alive: true, token: spawnReq().token }] })];
  });
  const pane = await backend.spawn(spawnReq({ OPENCODE_SERVER_PASSWORD: "s3cret" }));
  assert.deepEqual(pane, { paneId: "p7", pid: 99 });
  const spawn = requests.find((r) => r.method === "spawn")!;
  assert.deepEqual(spawn.params, {
    argv: spawnReq().argv,
    cwd: "/tmp",
    // The token goes into the program's environment too: a pid the provider names is only
    // signalled while it carries it.
    env: { OPENCODE_SERVER_PASSWORD: "s3cret", MUXBRIDGE_SPAWN_TOKEN: spawnReq().token },
    title: "fix #{pane_id} $HOME ^C",
    anchor: "a1",
    sessionId: validateSessionId("ses_mem"),
    token: spawnReq().token,
  });
  assert.equal(requests.at(-1)!.method, "list", "the new pane is checked in the list");
  await backend.dispose?.();
});

Deno.test("provider backend: credentials are refused (auth_unsupported) by a provider without env, and no spawn is sent", async () => {
  const { backend, requests } = backendOn((r) => [ok(r.id, INIT({}))]);
  await assert.rejects(
    backend.spawn(spawnReq({ OPENCODE_SERVER_PASSWORD: "x" })),
    (e) => isMuxError(e, "auth_unsupported"),
  );
  assert.deepEqual(requests.map((r) => r.method), ["initialize"]);
  await backend.dispose?.();
});

Deno.test("provider backend: the provider's error codes become muxbridge's", async () => {
  const errors: Record<string, number> = {
    interrupt: -32001,
    close: -32004,
    setTitle: -32601,
    layout: -32602,
  };
  const { backend } = backendOn((r) => {
    if (r.method === "initialize") return [ok(r.id, INIT({ title: true, layout: true }))];
    return [
      JSON.stringify({
        jsonrpc: "2.0",
        id: r.id,
        error: { code: errors[r.method] ?? -1, message: "no" },
      }),
    ];
  });
  await assert.rejects(
    backend.interrupt(validatePaneId("p1")),
    (e) => isMuxError(e, "pane_not_found"),
  );
  await assert.rejects(
    backend.kill(validatePaneId("p1")),
    (e) => isMuxError(e, "backend_unreachable"),
  );
  await assert.rejects(
    backend.setTitle(validatePaneId("p1"), "t"),
    (e) => isMuxError(e, "unsupported"),
  );
  await assert.rejects(
    backend.applyLayout({ layout: "tiled", mainPaneSize: 60, panes: [validatePaneId("p1")] }),
    (e) => isMuxError(e, "invalid_argument"),
  );
  await backend.dispose?.();
});

Deno.test("provider backend: no layout and no titles where the provider has none, and nothing is sent for them", async () => {
  const { backend, requests } = backendOn((r) =>
    r.method === "initialize"
      ? [ok(r.id, INIT({}))]
      : [ok(r.id, { panes: [{ paneId: "p1", alive: true }] })]
  );
  const layout = await backend.applyLayout({ layout: "tiled", mainPaneSize: 60, panes: [] });
  assert.equal(layout.applied, false);
  await assert.rejects(
    backend.setTitle(validatePaneId("p1"), "t"),
    (e) => isMuxError(e, "unsupported"),
  );
  await assert.rejects(
    backend.setTitle(validatePaneId("p2"), "t"),
    (e) => isMuxError(e, "pane_not_found"),
  );
  assert.deepEqual(requests.map((r) => r.method), ["initialize", "list", "list"]);
  await backend.dispose?.();
});

Deno.test("provider backend: an aborted call is interrupted, and its late answer is dropped without a violation", async () => {
  let hold = false;
  let held: Request | undefined;
  const { backend, logs } = backendOn((r) => {
    if (r.method === "initialize") return [ok(r.id, INIT({}))];
    if (hold) {
      hold = false;
      held = r;
      return null;
    }
    // The held call's answer comes late, right before this one's.
    const late = held ? [ok(held.id, { panes: [] })] : [];
    held = undefined;
    return [...late, ok(r.id, { panes: [] })];
  });
  await backend.probe();
  hold = true;
  const controller = new AbortController();
  const pending = backend.inspect(validatePaneId("p1"), controller.signal);
  await until("the call is written", () => held !== undefined);
  controller.abort();
  await assert.rejects(pending, (e) => isMuxError(e, "interrupted"));
  assert.equal(
    await backend.inspect(validatePaneId("p1")),
    null,
    "the next call gets its own answer",
  );
  assert.ok(!logs.some((l) => l.includes("violation")), logs.join(""));
  await backend.dispose?.();
});

Deno.test("provider backend: an error for a request the provider could not read (id null) and an answer without a result are violations", async () => {
  for (
    const bad of [
      (_id: number) =>
        JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32700, message: "parse" } }),
      (id: number) => JSON.stringify({ jsonrpc: "2.0", id }),
      (id: number) => JSON.stringify({ id, result: {} }),
    ]
  ) {
    const { backend, logs } = backendOn((r) =>
      r.method === "initialize" ? [ok(r.id, INIT({}))] : [bad(r.id)]
    );
    await backend.probe().catch(() => {});
    await assert.rejects(
      backend.inspect(validatePaneId("p1")),
      (e) => isMuxError(e, "unparseable_output"),
    );
    assert.ok(logs.some((l) => / error: provider mem: /.test(l)), logs.join(""));
    await backend.dispose?.();
  }
});

Deno.test("provider backend: a result of the wrong shape is unparseable_output; the provider stays", async () => {
  const { backend, requests } = backendOn((r) =>
    r.method === "initialize" ? [ok(r.id, INIT({}))] : [ok(r.id, { panes: "nope" })]
  );
  await assert.rejects(backend.probe(), (e) => isMuxError(e, "unparseable_output"));
  await assert.rejects(
    backend.inspect(validatePaneId("p1")),
    (e) => isMuxError(e, "unparseable_output"),
  );
  assert.equal(requests.filter((r) => r.method === "initialize").length, 1, "not restarted");
  await backend.dispose?.();
});

Deno.test("schema provider: the JSON Schema names every method and the error codes", () => {
  const text = JSON.stringify(providerJsonSchema());
  for (const m of ["initialize", "spawn", "interrupt", "close", "list", "setTitle", "layout"]) {
    assert.ok(text.includes(`"const":"${m}"`), m);
  }
  assert.ok(text.includes("-32001 paneNotFound"));
});
