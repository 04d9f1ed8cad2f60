/**
 * The OpenCode client over real loopback HTTP against the fake server, timeouts on the fake
 * clock.
 */

import assert from "node:assert/strict";
import { isMuxError } from "../../lib/sys/errors.ts";
import { createOpencodeClient } from "../../lib/opencode/client.ts";
import { createFakeClock } from "../fakes/fake_clock.ts";
import { createFakeOpencode } from "../fakes/fake_opencode.ts";
import { serveFakeOpencode } from "../helpers/fake_opencode_server.ts";

Deno.test("OpencodeClient reads health, the status map and sessions from a server over HTTP", async () => {
  const srv = serveFakeOpencode();
  try {
    const client = createOpencodeClient({ url: srv.url, fetch });
    assert.deepEqual(await client.health(), { healthy: true, version: "1.18.33" });
    srv.fake.busy("ses_busy");
    srv.fake.status.set("ses_retry", "retry");
    srv.fake.known.add("ses_idle");
    const map = await client.statusMap({ directory: "/w/p q" });
    assert.deepEqual([...map], [["ses_busy", { status: "busy" }], [
      "ses_retry",
      { status: "busy", retry: 1 },
    ]]);
    assert.equal((await client.session("ses_idle"))?.id, "ses_idle");
    assert.equal(await client.session("ses_gone"), null);
    assert.ok(srv.fake.requests.includes("GET /session/status?directory=%2Fw%2Fp%20q"));
  } finally {
    await srv.close();
  }
});

Deno.test("OpencodeClient sends Basic auth and maps 401 to auth_failed with a hint", async () => {
  const srv = serveFakeOpencode();
  try {
    srv.fake.password = "s3cret";
    const good = createOpencodeClient({
      url: srv.url,
      fetch,
      auth: { username: "opencode", password: "s3cret" },
    });
    assert.equal((await good.health()).healthy, true);
    assert.deepEqual(srv.fake.authorizations, [`Basic ${btoa("opencode:s3cret")}`]);
    const bad = createOpencodeClient({ url: srv.url, fetch });
    await assert.rejects(
      bad.statusMap(),
      (e) => isMuxError(e, "auth_failed") && /OPENCODE_SERVER_PASSWORD/.test(e.hint ?? ""),
    );
  } finally {
    await srv.close();
  }
});

Deno.test("OpencodeClient reports a closed port as server_unreachable, pointing at the plugin, never at an unauthenticated --port", async () => {
  const srv = serveFakeOpencode();
  const url = srv.url;
  await srv.close();
  const client = createOpencodeClient({ url, fetch });
  await assert.rejects(
    client.health(),
    (e) =>
      isMuxError(e, "server_unreachable") && /muxbridge install/.test(e.hint ?? "") &&
      !/--port 0/.test(e.hint ?? ""),
  );
});

Deno.test("OpencodeClient times a hanging request out on the injected clock", async () => {
  const fake = createFakeOpencode();
  fake.mode = "hang";
  const clock = createFakeClock();
  const client = createOpencodeClient({
    url: "http://x",
    fetch: fake.fetch,
    clock,
    timeoutMs: 700,
  });
  const settled: unknown[] = [];
  const call = client.health().catch((e) => settled.push(e));
  await clock.advance(600);
  assert.equal(settled.length, 0, "still waiting");
  await clock.advance(200);
  await call;
  const err = settled[0];
  assert.ok(isMuxError(err, "server_unreachable") && /700 ms/.test(err.message));
  assert.equal(clock.pending(), 0);
});

Deno.test("OpencodeClient reports an aborted call as interrupted", async () => {
  const fake = createFakeOpencode();
  fake.mode = "hang";
  const clock = createFakeClock();
  const client = createOpencodeClient({ url: "http://x", fetch: fake.fetch, clock });
  const abort = new AbortController();
  const call = client.session("ses_a", { signal: abort.signal });
  abort.abort();
  await assert.rejects(call, (e) => isMuxError(e, "interrupted"));
  assert.equal(clock.pending(), 0);
});

Deno.test("OpencodeClient says unparseable_output for an answer that is not OpenCode's", async () => {
  const client = createOpencodeClient({
    url: "http://x",
    fetch: () => Promise.resolve(new Response("<html>hello</html>")),
  });
  await assert.rejects(client.statusMap(), (e) => isMuxError(e, "unparseable_output"));
  const shape = createOpencodeClient({
    url: "http://x",
    fetch: () => Promise.resolve(new Response('{"healthy":"yes"}')),
  });
  await assert.rejects(shape.health(), (e) => isMuxError(e, "unparseable_output"));
});

Deno.test("OpencodeClient takes a server without /global/health as healthy with no version", async () => {
  const client = createOpencodeClient({
    url: "http://x",
    fetch: () => Promise.resolve(new Response("not found", { status: 404 })),
  });
  assert.deepEqual(await client.health(), { healthy: true });
});
