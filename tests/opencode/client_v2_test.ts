/**
 * The client against a fake OpenCode 2.x service over loopback HTTP: it finds the line by
 * itself (one extra request, once), reads `/api/*` with Basic auth, and reports 2.x's hint.
 */

import assert from "node:assert/strict";
import { createOpencodeClient } from "../../lib/opencode/client.ts";
import { isMuxError } from "../../lib/sys/errors.ts";
import { serveFakeOpencode } from "../helpers/fake_opencode_server.ts";

const AUTH = { username: "opencode", password: "pw" };

Deno.test("a client finds a 2.x service from its answers and reads its routes", async () => {
  const srv = serveFakeOpencode();
  try {
    srv.fake.line = 2;
    srv.fake.version = "2.1.2";
    srv.fake.password = "pw";
    srv.fake.busy("ses_run");
    srv.fake.known.add("ses_idle");
    const client = createOpencodeClient({ url: srv.url, fetch, auth: AUTH });
    const lineNow = () => client.line?.id ?? null;
    assert.equal(lineNow(), null);
    assert.deepEqual(await client.health(), { healthy: true, version: "2.1.2" });
    assert.equal(lineNow(), 2);
    assert.deepEqual([...await client.statusMap()], [["ses_run", { status: "running" }]]);
    assert.equal((await client.session("ses_idle"))?.id, "ses_idle");
    assert.equal(await client.session("ses_gone"), null);
    assert.deepEqual(srv.fake.requests, [
      "GET /global/health",
      "GET /api/info",
      "GET /api/session/active",
      "GET /api/session/ses_idle",
      "GET /api/session/ses_gone",
    ]);
  } finally {
    await srv.close();
  }
});

Deno.test("a first status read on a 2.x service finds the line and is answered", async () => {
  const srv = serveFakeOpencode();
  try {
    srv.fake.line = 2;
    srv.fake.version = "2.1.2";
    srv.fake.busy("ses_run");
    const client = createOpencodeClient({ url: srv.url, fetch });
    assert.deepEqual([...await client.statusMap()], [["ses_run", { status: "running" }]]);
    assert.equal(client.line?.id, 2);
  } finally {
    await srv.close();
  }
});

Deno.test("a client told the line asks no other route, and 401 carries 2.x's hint", async () => {
  const srv = serveFakeOpencode();
  try {
    srv.fake.line = 2;
    srv.fake.version = "2.1.2";
    srv.fake.password = "right";
    const client = createOpencodeClient({ url: srv.url, fetch, line: 2, auth: AUTH });
    await assert.rejects(
      client.health(),
      (e) => isMuxError(e, "auth_failed") && /OPENCODE_PASSWORD/.test(e.hint ?? ""),
    );
    assert.deepEqual(srv.fake.requests, ["GET /api/info"]);
  } finally {
    await srv.close();
  }
});

Deno.test("a 1.x server pays no extra request: its routes are tried first", async () => {
  const srv = serveFakeOpencode();
  try {
    srv.fake.busy("ses_a");
    const client = createOpencodeClient({ url: srv.url, fetch });
    assert.equal((await client.statusMap()).get("ses_a")?.status, "busy");
    assert.equal(client.line?.id, 1);
    assert.deepEqual(srv.fake.requests, ["GET /session/status"]);
  } finally {
    await srv.close();
  }
});

Deno.test("a 2.x client reads the pending permission requests and forms of a location", async () => {
  const srv = serveFakeOpencode();
  try {
    srv.fake.line = 2;
    srv.fake.version = "2.1.2";
    srv.fake.pending = {
      permission: [{ id: "per_1", sessionID: "ses_a", action: "shell", resources: [] }],
      question: [{ id: "frm_1", sessionID: "ses_b", title: "Questions", fields: [] }, { id: 3 }],
    };
    const client = createOpencodeClient({ url: srv.url, fetch, line: 2 });
    assert.deepEqual(await client.pendingRequests?.({ directory: "/p q" }), [
      { sessionId: "ses_a", requestId: "per_1", kind: "permission" },
      { sessionId: "ses_b", requestId: "frm_1", kind: "question" },
    ]);
    assert.ok(
      srv.fake.requests.includes("GET /api/form?location%5Bdirectory%5D=%2Fp%20q"),
      srv.fake.requests.join("; "),
    );
  } finally {
    await srv.close();
  }
});
