/** The OpenCode client against a fake fetch: request shapes, auth, error mapping. */

import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { createOpencodeClient, type OpencodeClientOptions } from "../../lib/opencode/client.ts";
import { createFakeFetch, type FakeFetch, hang } from "../fakes/fake_fetch.ts";

const URL_ = "http://127.0.0.1:4096";

function client(fake: FakeFetch, options: Partial<OpencodeClientOptions> = {}) {
  return createOpencodeClient({ url: URL_, fetch: fake.fetch, ...options });
}

// ---------------------------------------------------------------- requests

Deno.test("health() asks GET /global/health and returns healthy and the version", async () => {
  const fake = createFakeFetch().on(`${URL_}/global/health`, {
    json: { healthy: true, version: "1.18.33", extra: 1 },
  });
  const health = await client(fake).health();
  assert.equal(health.healthy, true);
  assert.equal(health.version, "1.18.33");
  assert.equal(fake.calls.length, 1);
  assert.equal(fake.calls[0].headers.get("accept"), "application/json");
});

Deno.test("the client sends Basic auth when credentials are given", async () => {
  const fake = createFakeFetch().on(`${URL_}/global/health`, { json: { healthy: true } });
  await client(fake, { auth: { username: "opencode", password: "s3cr:et ü" } }).health();
  const header = fake.calls[0].headers.get("authorization");
  assert.equal(
    header,
    `Basic ${Buffer.from("opencode:s3cr:et ü").toString("base64")}`,
  );
});

Deno.test("the client never puts the password in the URL", async () => {
  const fake = createFakeFetch()
    .on(`${URL_}/global/health`, { json: { healthy: true } })
    .on(`${URL_}/session/status?directory=%2Fp`, { json: {} })
    .on(`${URL_}/session/ses_1?directory=%2Fp`, { json: { id: "ses_1" } });
  const c = client(fake, { auth: { username: "u", password: "hunter2" }, directory: "/p" });
  await c.health();
  await c.statusMap();
  await c.session("ses_1");
  for (const call of fake.calls) {
    assert.ok(!call.url.includes("hunter2"), call.url);
    assert.ok(!call.url.includes("@"), call.url);
  }
});

Deno.test("the client sends no authorization header without credentials", async () => {
  const fake = createFakeFetch().on(`${URL_}/global/health`, { json: { healthy: false } });
  assert.deepEqual(await client(fake).health(), { healthy: false });
  assert.equal(fake.calls[0].headers.get("authorization"), null);
});

Deno.test("the client can scope to a directory with non-ASCII characters", async () => {
  // The real fetch refuses a raw header value outside Latin-1 ("中文目录", opencode #13087).
  const dir = "/home/u/中文目录/Masaüstü";
  const q = encodeURIComponent(dir);
  const fake = createFakeFetch()
    .on(`${URL_}/session/status?directory=${q}`, { json: {} })
    .on(`${URL_}/global/health`, { json: { healthy: true } });
  const c = client(fake, { directory: dir });
  assert.deepEqual(await c.statusMap(), new Map());
  assert.equal((await c.health()).healthy, true);
});

Deno.test("the client omits the directory when none is given", async () => {
  const fake = createFakeFetch()
    .on(`${URL_}/session/status`, { json: {} })
    .on(`${URL_}/session/ses_1`, { json: { id: "ses_1" } });
  await client(fake).statusMap();
  await client(fake).session("ses_1");
  for (const call of fake.calls) assert.equal(call.headers.get("x-opencode-directory"), null);
});

Deno.test("session() encodes the id into the path", async () => {
  const fake = createFakeFetch().on(`${URL_}/session/a%2F..%2Fb%3Fx`, { status: 404 });
  assert.equal(await client(fake).session("a/../b?x"), null);
});

// ---------------------------------------------------------------- answers

Deno.test("statusMap() maps busy and retry to busy (with the attempt) and keeps idle", async () => {
  const fake = createFakeFetch().on(`${URL_}/session/status`, {
    json: {
      ses_a: { type: "busy" },
      ses_b: { type: "retry", attempt: 1, message: "mock failure 500", next: 1795992091997 },
      ses_c: { type: "idle" },
      ses_d: { type: "compacting" },
    },
  });
  assert.deepEqual(
    await client(fake).statusMap(),
    new Map([
      ["ses_a", { status: "busy" }],
      ["ses_b", { status: "busy", retry: 1 }],
      ["ses_c", { status: "idle" }],
      ["ses_d", { status: "busy" }],
    ]),
  );
});

Deno.test("statusMap() reads an empty map as no busy session", async () => {
  const fake = createFakeFetch().on(`${URL_}/session/status`, { json: {} });
  assert.equal((await client(fake).statusMap()).size, 0);
});

Deno.test("session() returns the session the server describes", async () => {
  const fake = createFakeFetch().on(`${URL_}/session/ses_c`, {
    json: { id: "ses_c", parentID: "ses_p", title: "child", directory: "/p", slug: "x" },
  });
  const s = await client(fake).session("ses_c");
  assert.equal(s?.id, "ses_c");
  assert.equal(s?.parentID, "ses_p");
  assert.equal(s?.title, "child");
  assert.equal(s?.directory, "/p");
});

Deno.test("session() returns null when the server answers 404", async () => {
  const fake = createFakeFetch().on(`${URL_}/session/ses_gone`, {
    status: 404,
    json: { name: "NotFoundError" },
  });
  assert.equal(await client(fake).session("ses_gone"), null);
});

// ---------------------------------------------------------------- failures

Deno.test("a 401 or 403 answer is auth_failed with a hint about the password", async () => {
  for (const status of [401, 403]) {
    const fake = createFakeFetch()
      .on(`${URL_}/global/health`, { status, body: "Unauthorized" })
      .on(`${URL_}/session/ses_1`, { status, body: "Unauthorized" });
    await assert.rejects(client(fake).health(), {
      name: "MuxError",
      code: "auth_failed",
      message: `Cannot use the OpenCode server at ${URL_}: it answered ${status}`,
      hint: /OPENCODE_SERVER_PASSWORD/,
    });
    // A 401 on a session lookup is not "session gone".
    await assert.rejects(client(fake).session("ses_1"), { code: "auth_failed" });
  }
});

Deno.test("a connection error is server_unreachable with a hint", async () => {
  const fake = createFakeFetch().on(
    `${URL_}/global/health`,
    new TypeError("error sending request: Connection refused (os error 111)"),
  );
  await assert.rejects(client(fake).health(), {
    name: "MuxError",
    code: "server_unreachable",
    message:
      /^Cannot reach the OpenCode server at http:\/\/127\.0\.0\.1:4096: .*Connection refused/,
    hint: /--port/,
  });
});

Deno.test("a 5xx answer is server_unreachable naming the status", async () => {
  const fake = createFakeFetch().on(`${URL_}/session/status`, { status: 503, body: "down" });
  await assert.rejects(client(fake).statusMap(), {
    code: "server_unreachable",
    message: /GET \/session\/status answered 503/,
  });
});

Deno.test("a 404 from a route other than a session lookup is not null", async () => {
  const fake = createFakeFetch().on(`${URL_}/session/status`, { status: 404, body: "nope" });
  await assert.rejects(client(fake).statusMap(), { name: "MuxError" });
});

Deno.test("an answer that is not JSON is unparseable_output with the text cut short", async () => {
  const html = `<!doctype html><title>Not OpenCode</title>${"x".repeat(1000)}`;
  // A page where 1.x's health is: the client asks 2.x's route too before it gives up.
  const fake = createFakeFetch().on(`${URL_}/global/health`, { body: html })
    .on(`${URL_}/api/info`, { status: 404, body: "not found" });
  await assert.rejects(client(fake).health(), (err: Error & { code: string; hint: string }) => {
    assert.equal(err.code, "unparseable_output");
    assert.match(
      err.message,
      /^Cannot parse GET \/global\/health from http:\/\/127\.0\.0\.1:4096: "<!doctype/,
    );
    assert.ok(err.message.length < 400, `message of ${err.message.length} characters`);
    assert.match(err.hint, /OpenCode server/);
    return true;
  });
});

Deno.test("JSON of the wrong shape is unparseable_output", async () => {
  const fake = createFakeFetch()
    .on(`${URL_}/global/health`, { json: { status: "ok" } })
    .on(`${URL_}/session/status`, { json: { ses_a: "busy" } })
    .on(`${URL_}/session/ses_1`, { json: [] });
  const c = client(fake);
  await assert.rejects(c.health(), { code: "unparseable_output", message: /unexpected shape/ });
  await assert.rejects(c.statusMap(), { code: "unparseable_output" });
  await assert.rejects(c.session("ses_1"), { code: "unparseable_output" });
});

Deno.test("a server that never answers is cut off at timeoutMs as server_unreachable", async () => {
  const fake = createFakeFetch().on(`${URL_}/global/health`, hang);
  const started = performance.now();
  await assert.rejects(client(fake, { timeoutMs: 50 }).health(), {
    code: "server_unreachable",
  });
  const ms = performance.now() - started;
  // The fake never answers: the rejection itself proves the timeout; only a lower bound here.
  assert.ok(ms >= 40, `gave up after ${ms} ms, before the timeout`);
  assert.ok(fake.calls[0].signal, "the request carried a signal");
});

Deno.test("the client bounds a request with a signal even when the caller gives none", async () => {
  let seen: AbortSignal | undefined;
  const fake = createFakeFetch().on(`${URL_}/global/health`, (_url, init) => {
    seen = init.signal ?? undefined;
    return Promise.resolve(Response.json({ healthy: true }));
  });
  await client(fake).health();
  assert.ok(seen);
  assert.equal(seen.aborted, false);
});

Deno.test("aborting the caller's signal ends the request as interrupted", async () => {
  const fake = createFakeFetch().on(`${URL_}/session/status`, hang);
  const controller = new AbortController();
  const pending = client(fake, { timeoutMs: 60_000 }).statusMap({ signal: controller.signal });
  controller.abort();
  await assert.rejects(pending, { name: "MuxError", code: "interrupted" });
});

Deno.test("an already aborted signal ends the request as interrupted", async () => {
  const fake = createFakeFetch().on(`${URL_}/global/health`, hang);
  await assert.rejects(client(fake).health({ signal: AbortSignal.abort() }), {
    code: "interrupted",
  });
});
