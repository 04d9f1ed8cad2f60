/**
 * OpenCode 2.x events in the shapes 2.1.2 emits (`docs/opencode.md`, "OpenCode 2.x") decoded
 * into muxbridge's session facts; anything else ignored or refused, never thrown.
 */

import assert from "node:assert/strict";
import { decodeEvent } from "../../lib/opencode/decode.ts";

const ev = (type: string, data: unknown, extra: Record<string, unknown> = {}) => ({
  id: "evt_1",
  created: 1796616821714,
  type,
  ...extra,
  data,
});

Deno.test("a 2.x child's session.created names its parent, title, agent and directory", () => {
  const line = ev("session.created", {
    sessionID: "ses_C",
    slug: "quick-island",
    version: "2.1.2",
    parentID: "ses_P",
    location: { directory: "/home/u/proj" },
    title: "count slowly",
    agent: "general",
  }, { location: { directory: "/home/u/proj" } });
  assert.deepEqual(decodeEvent(line.type, line), {
    kind: "created",
    info: {
      id: "ses_C",
      parentId: "ses_P",
      title: "count slowly",
      directory: "/home/u/proj",
      agent: "general",
    },
  });
});

Deno.test("a 2.x session.created takes the event's location when the data has none", () => {
  const line = ev("session.created", { sessionID: "ses_C", parentID: "ses_P", title: "t" }, {
    location: { directory: "/p" },
  });
  const got = decodeEvent(line.type, line);
  assert.ok(got.kind === "created" && got.info.directory === "/p");
});

Deno.test("2.x execution events are busy, idle, retry and a failed turn", () => {
  const cases: Array<[string, Record<string, unknown>, unknown]> = [
    ["session.execution.started", {}, { status: "busy" }],
    ["session.execution.succeeded", {}, { status: "idle" }],
    ["session.execution.interrupted", { reason: "user" }, { status: "idle" }],
    ["session.execution.failed", { error: { type: "x", message: "boom" } }, {
      status: "idle",
      failed: true,
    }],
    ["session.retry.scheduled", { attempt: 2, at: 1 }, { status: "busy", retry: 2 }],
    ["session.retry.scheduled", { attempt: "2" }, { status: "busy", retry: 0 }],
  ];
  for (const [type, more, want] of cases) {
    const line = ev(type, { sessionID: "ses_C", ...more });
    assert.deepEqual(
      decodeEvent(type, line),
      { kind: "status", sessionId: "ses_C", ...want as object },
      type,
    );
  }
});

Deno.test("2.x session.renamed updates the title and session.deleted deletes", () => {
  const renamed = ev("session.renamed", { sessionID: "ses_C", title: "new title" });
  assert.deepEqual(decodeEvent(renamed.type, renamed), {
    kind: "updated",
    info: { id: "ses_C", title: "new title" },
  });
  const deleted = ev("session.deleted", { sessionID: "ses_C" });
  assert.deepEqual(decodeEvent(deleted.type, deleted), {
    kind: "deleted",
    info: { id: "ses_C", title: "" },
  });
});

Deno.test("2.x events muxbridge does not act on are ignored unread; root sessions silently", () => {
  for (const type of ["session.tool.progress", "session.inbox.enqueued", "session.viewed"]) {
    assert.deepEqual(decodeEvent(type, ev(type, { sessionID: "ses_C" })), {
      kind: "ignored",
      type,
    });
  }
  for (const type of ["message.part.delta", "vcs.branch.updated"]) {
    assert.deepEqual(decodeEvent(type, ev(type, {})), { kind: "ignored", type });
  }
  const root = ev("session.created", { sessionID: "not-an-id", title: "root" });
  assert.deepEqual(decodeEvent(root.type, root), { kind: "ignored", type: "session.created" });
});

Deno.test("malformed or hostile 2.x events are refused with what is wrong, never thrown", () => {
  const noId = ev("session.execution.started", {});
  const a = decodeEvent(noId.type, noId);
  assert.ok(a.kind === "invalid" && /data\.sessionID/.test(a.message), JSON.stringify(a));
  const badParent = ev("session.created", { sessionID: "ses_C", parentID: "../x" });
  assert.equal(decodeEvent(badParent.type, badParent).kind, "invalid");
  const flag = ev("session.created", { sessionID: "-rf", parentID: "ses_P", title: "t" });
  const b = decodeEvent(flag.type, flag);
  assert.ok(b.kind === "invalid" && b.skip?.sessionID === "-rf", JSON.stringify(b));
  const notObject = { type: "session.execution.started", data: "ses_C" };
  assert.equal(decodeEvent(notObject.type, notObject).kind, "invalid");
  const longDir = ev("session.created", {
    sessionID: "ses_C",
    parentID: "ses_P",
    location: { directory: `/${"x".repeat(10_000)}` },
  });
  assert.equal(decodeEvent(longDir.type, longDir).kind, "invalid");
});

Deno.test("2.x permission and form events open and end a request, in the shapes 2.1.2 emits", () => {
  const loc = { location: { directory: "/home/user/proj" } };
  const lines: Array<[string, unknown, unknown]> = [
    [
      "permission.asked",
      {
        id: "per_24eb51bd2001CLs3LpoB2GYl6O",
        sessionID: "ses_C",
        action: "shell",
        resources: ["echo hi"],
        save: ["echo *"],
        source: { type: "tool", messageID: "msg_1", id: "call_mock1" },
      },
      { requestId: "per_24eb51bd2001CLs3LpoB2GYl6O", what: "permission", open: true },
    ],
    [
      "permission.replied",
      { sessionID: "ses_C", requestID: "per_24eb51bd2001CLs3LpoB2GYl6O", reply: "once" },
      { requestId: "per_24eb51bd2001CLs3LpoB2GYl6O", what: "permission", open: false },
    ],
    [
      "form.created",
      {
        form: {
          id: "frm_24eb57cef001758mb8gYAIUQIe",
          sessionID: "ses_C",
          title: "Questions",
          metadata: { kind: "question" },
          fields: [{ key: "q0", title: "Color", type: "string" }],
        },
      },
      { requestId: "frm_24eb57cef001758mb8gYAIUQIe", what: "question", open: true },
    ],
    [
      "form.replied",
      { id: "frm_24eb57cef001758mb8gYAIUQIe", sessionID: "ses_C", answer: { q0: "red" } },
      { requestId: "frm_24eb57cef001758mb8gYAIUQIe", what: "question", open: false },
    ],
    [
      "form.cancelled",
      { id: "frm_24eb5b30b001KGKe9CYRoxElIK", sessionID: "ses_C" },
      { requestId: "frm_24eb5b30b001KGKe9CYRoxElIK", what: "question", open: false },
    ],
  ];
  for (const [type, data, want] of lines) {
    assert.deepEqual(
      decodeEvent(type, ev(type, data, loc)),
      { kind: "attention", sessionId: "ses_C", ...want as object },
      type,
    );
  }
  // A form's session id is nested in the form: one at the top does not count.
  const flat = ev("form.created", { id: "frm_1", sessionID: "ses_C" });
  assert.equal(decodeEvent(flat.type, flat).kind, "invalid");
  const noId = ev("permission.asked", { sessionID: "ses_C" });
  assert.equal(decodeEvent(noId.type, noId).kind, "invalid");
});
