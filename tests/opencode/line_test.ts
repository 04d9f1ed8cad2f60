import assert from "node:assert/strict";
import { decodeEvent } from "../../lib/opencode/decode.ts";
import { lineById, lineOf, supportedRanges } from "../../lib/opencode/line.ts";

Deno.test("lineOf() puts OpenCode 1.x on the attach line and 2.1+ on the --server line", () => {
  for (const v of ["1.0.0", "1.1.24", "1.18.33", "v1.19.3", "1.99.0-beta.2"]) {
    const verdict = lineOf(v);
    assert.ok(verdict.supported === true && verdict.line.id === 1, v);
  }
  for (const v of ["2.1.0", "2.1.2", "opencode v2.1.2", "2.9.0-beta.1"]) {
    const verdict = lineOf(v);
    assert.ok(verdict.supported === true && verdict.line.id === 2, v);
  }
});

Deno.test("lineOf() refuses 0.x, 2.0.x and 3+ with a hint that names what to do", () => {
  const old = lineOf("0.15.8");
  assert.ok(old.supported === false && /too old/.test(old.hint));
  const early = lineOf("2.0.3");
  assert.ok(early.supported === false && early.hint.includes("@opencode/cli@2"));
  const future = lineOf("3.0.0");
  assert.ok(future.supported === false && /update muxbridge/.test(future.hint));
  for (const v of [old, early, future]) {
    assert.ok(v.supported === false && v.hint.includes(supportedRanges()));
  }
});

Deno.test("lineOf() says unknown for a missing or non-semver version", () => {
  for (const v of [undefined, null, "", "nightly"]) {
    assert.deepEqual(lineOf(v), { supported: null, version: null }, String(v));
  }
});

Deno.test("each line's pane runs its own command, the password only in the environment", () => {
  const input = {
    bin: "opencode",
    url: "http://127.0.0.1:49374",
    sessionId: "ses_child",
    dir: "/home/me/p q",
    auth: { username: "opencode", password: "s3cret" },
    ownsTitle: true,
  };
  const v1 = lineById(1).pane(input);
  assert.deepEqual(v1.argv, [
    "opencode",
    "attach",
    "http://127.0.0.1:49374",
    "--session",
    "ses_child",
    "--dir",
    "/home/me/p q",
  ]);
  assert.deepEqual(v1.env, {
    OPENCODE_SERVER_USERNAME: "opencode",
    OPENCODE_SERVER_PASSWORD: "s3cret",
  });
  const v2 = lineById(2).pane(input);
  assert.deepEqual(v2.argv, [
    "opencode",
    "--server",
    "http://127.0.0.1:49374",
    "--session",
    "ses_child",
    "/home/me/p q",
  ]);
  assert.equal(v2.env.OPENCODE_PASSWORD, "s3cret");
  assert.equal(v2.env.MUXBRIDGE_PANE_SESSION, "ses_child");
  assert.deepEqual(JSON.parse(v2.env.OPENCODE_CLI_CONFIG_CONTENT), { terminal: { title: false } });
  for (const p of [v1, v2]) assert.ok(!p.argv.some((a) => a.includes("s3cret")));
  const untitled = lineById(2).pane({ ...input, ownsTitle: false });
  assert.equal(untitled.env.OPENCODE_CLI_CONFIG_CONTENT, undefined);
});

Deno.test("1.x closes a pane with a typed Ctrl+C, 2.x with SIGTERM to the recorded program", () => {
  assert.equal(lineById(1).interrupt, "key");
  assert.equal(lineById(2).interrupt, "signal");
});

Deno.test("decodeEvent() reads each line's events by their shape", () => {
  assert.deepEqual(
    decodeEvent("session.status", {
      type: "session.status",
      properties: { sessionID: "ses_a", status: { type: "busy" } },
    }),
    { kind: "status", sessionId: "ses_a", status: "busy" },
  );
  assert.deepEqual(
    decodeEvent("session.execution.started", {
      type: "session.execution.started",
      data: { sessionID: "ses_a" },
    }),
    { kind: "status", sessionId: "ses_a", status: "busy" },
  );
  const neither = decodeEvent("session.idle", { type: "session.idle", sessionID: "ses_a" });
  assert.equal(neither.kind, "invalid");
  assert.deepEqual(decodeEvent("message.part.delta", { type: "message.part.delta" }), {
    kind: "ignored",
    type: "message.part.delta",
  });
});
