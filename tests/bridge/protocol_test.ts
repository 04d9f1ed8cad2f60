import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import {
  CLOSE_REASONS,
  type Inbound,
  MAX_LINE_BYTES,
  OutMessageSchema,
  parseLine,
  PROTOCOL_VERSION,
  protocolJsonSchema,
} from "../../lib/bridge/protocol.ts";

/**
 * Real events captured from `opencode serve` 1.18.33 (research/opencode-peer.md): lines 1-31
 * are one parent + child lifecycle; the rest are single events of other runs.
 */
const EVENTS_FILE = new URL("../testdata/opencode/events.jsonl", import.meta.url);
const EVENT_LINES = readFileSync(EVENTS_FILE, "utf8").split("\n").filter((l) => l !== "");

const PARENT = "ses_dd68594aeffek5v3H9oBXIe53D";
const CHILD = "ses_dd685941bffedK24NH8nUi9WA4";

const invalidMessage = (result: Inbound, pattern: RegExp) => {
  assert.equal(result.kind, "invalid");
  assert.equal(result.kind === "invalid" && result.code, "invalid_message");
  assert.match(result.kind === "invalid" ? result.message : "", pattern);
};

// ---------------------------------------------------------------- captured OpenCode events

Deno.test("parseLine() reads every captured OpenCode event without an invalid result", () => {
  assert.equal(EVENT_LINES.length, 37);
  for (const [i, line] of EVENT_LINES.entries()) {
    const raw = JSON.parse(line) as {
      type: string;
      properties: {
        sessionID?: string;
        info?: {
          id: string;
          parentID?: string;
          title?: string;
          directory?: string;
          agent?: string;
        };
        status?: { type: string; attempt?: number };
      };
    };
    const result = parseLine(line);
    const where = `line ${i + 1} (${raw.type})`;
    switch (raw.type) {
      case "session.created":
      case "session.updated":
      case "session.deleted": {
        const info = raw.properties.info!;
        assert.deepEqual(result, {
          kind: raw.type.slice("session.".length),
          info: {
            id: info.id,
            title: info.title,
            directory: info.directory,
            ...(info.parentID ? { parentId: info.parentID } : {}),
            ...(info.agent ? { agent: info.agent } : {}),
          },
        }, where);
        break;
      }
      case "session.status":
        assert.deepEqual(result, {
          kind: "status",
          sessionId: raw.properties.sessionID,
          status: raw.properties.status!.type === "idle" ? "idle" : "busy",
          ...(raw.properties.status!.type === "retry"
            ? { retry: raw.properties.status!.attempt }
            : {}),
        }, where);
        break;
      case "session.idle":
        assert.deepEqual(result, {
          kind: "status",
          sessionId: raw.properties.sessionID,
          status: "idle",
        }, where);
        break;
      default:
        assert.deepEqual(result, { kind: "ignored", type: raw.type }, where);
    }
  }
});

Deno.test("parseLine() gives the captured child its parent and the root none", () => {
  const created = EVENT_LINES.map(parseLine).filter((r) => r.kind === "created");
  assert.deepEqual(created, [
    { kind: "created", info: { id: PARENT, title: "run3 parent", directory: "$W/proj" } },
    {
      kind: "created",
      info: { id: CHILD, title: "run3 child", directory: "$W/proj", parentId: PARENT },
    },
  ]);
});

Deno.test("parseLine() turns the captured lifecycle into busy, idle, deleted for the child", () => {
  const kinds = EVENT_LINES.slice(0, 31).map(parseLine)
    .filter((r) => r.kind !== "ignored" && r.kind !== "updated")
    .map((r) => r.kind === "status" ? `${r.status}:${r.sessionId}` : `${r.kind}`);
  assert.deepEqual(kinds, [
    "created",
    "created",
    `busy:${CHILD}`,
    `busy:${CHILD}`,
    `busy:${CHILD}`,
    `idle:${CHILD}`,
    `idle:${CHILD}`,
    "deleted",
    "deleted",
  ]);
});

Deno.test("parseLine() counts the captured retry status as busy, with its attempt", () => {
  const retry = EVENT_LINES.find((l) => l.includes('"type":"retry"'));
  assert.ok(retry);
  assert.deepEqual(parseLine(retry), {
    kind: "status",
    sessionId: "ses_dd6878d49ffeIdCiGYQiuYqvLQ",
    status: "busy",
    retry: 1,
  });
});

Deno.test("parseLine() ignores the captured session.error of an aborted request", () => {
  const aborted = EVENT_LINES.find((l) => l.includes('"type":"session.error"'));
  assert.ok(aborted !== undefined && aborted.includes("MessageAbortedError"));
  assert.deepEqual(parseLine(aborted), { kind: "ignored", type: "session.error" });
});

Deno.test("parseLine() reads session.error of a session, leniently, as its error", () => {
  const error = (properties: unknown) => JSON.stringify({ type: "session.error", properties });
  assert.deepEqual(
    parseLine(error({ sessionID: "ses_e", error: { name: "APIError", data: { message: "x" } } })),
    { kind: "error", sessionId: "ses_e" },
  );
  assert.deepEqual(parseLine(error({ sessionID: "ses_e", error: "weird" })), {
    kind: "error",
    sessionId: "ses_e",
  });
  assert.deepEqual(parseLine(error({ sessionID: "ses_e" })), { kind: "error", sessionId: "ses_e" });
  assert.deepEqual(parseLine(error({ error: { name: "UnknownError" } })), {
    kind: "ignored",
    type: "session.error",
  });
  const bad = parseLine(error({ sessionID: "-rf", error: { name: "UnknownError" } }));
  assert.equal(bad.kind, "invalid");
});

Deno.test("parseLine() reads a retry's attempt leniently: none usable is 0", () => {
  const retry = (attempt: unknown) =>
    parseLine(JSON.stringify({
      type: "session.status",
      properties: { sessionID: "ses_1", status: { type: "retry", attempt, next: 1 } },
    }));
  assert.deepEqual(retry(3), { kind: "status", sessionId: "ses_1", status: "busy", retry: 3 });
  for (const bad of [0, -1, 1.5, "2", null, 1e300]) {
    assert.deepEqual(retry(bad), { kind: "status", sessionId: "ses_1", status: "busy", retry: 0 });
  }
});

Deno.test("parseLine() takes a child's agent from info.agent only when it is text", () => {
  const created = (agent: unknown) =>
    parseLine(JSON.stringify({
      type: "session.created",
      properties: { info: { id: "ses_c", parentID: "ses_p", title: "t", agent } },
    }));
  assert.deepEqual(created("explore"), {
    kind: "created",
    info: { id: "ses_c", parentId: "ses_p", title: "t", agent: "explore" },
  });
  assert.deepEqual(created({ name: "x" }), {
    kind: "created",
    info: { id: "ses_c", parentId: "ses_p", title: "t" },
  });
});

Deno.test("parseLine() ignores other session.* events such as session.diff", () => {
  for (const type of ["session.diff", "session.error", "session.compacted", "session.future"]) {
    assert.deepEqual(parseLine(JSON.stringify({ type, properties: {} })), {
      kind: "ignored",
      type,
    });
  }
});

// ---------------------------------------------------------------- session events, leniently

const status = (type: unknown) =>
  JSON.stringify({ type: "session.status", properties: { sessionID: "ses_1", status: { type } } });

Deno.test("parseLine() reads status busy, idle and retry, and unknown types as busy", () => {
  assert.deepEqual(parseLine(status("busy")), {
    kind: "status",
    sessionId: "ses_1",
    status: "busy",
  });
  assert.deepEqual(parseLine(status("idle")), {
    kind: "status",
    sessionId: "ses_1",
    status: "idle",
  });
  assert.deepEqual(parseLine(status("retry")), {
    kind: "status",
    sessionId: "ses_1",
    status: "busy",
    retry: 0,
  });
  assert.deepEqual(parseLine(status("compacting")), {
    kind: "status",
    sessionId: "ses_1",
    status: "busy",
  });
});

Deno.test("parseLine() reads session.idle as an idle status", () => {
  assert.deepEqual(
    parseLine('{"type":"session.idle","properties":{"sessionID":"ses_2"}}'),
    { kind: "status", sessionId: "ses_2", status: "idle" },
  );
});

Deno.test("parseLine() ignores unknown fields of session events", () => {
  assert.deepEqual(
    parseLine(JSON.stringify({
      type: "session.created",
      id: "evt_1",
      extra: [1, 2],
      properties: {
        sessionID: "ses_c",
        more: true,
        info: { id: "ses_c", parentID: "ses_p", title: "t", directory: "/d", cost: 0, time: {} },
      },
    })),
    { kind: "created", info: { id: "ses_c", parentId: "ses_p", title: "t", directory: "/d" } },
  );
});

Deno.test("parseLine() accepts null or missing parentID, title and directory", () => {
  assert.deepEqual(
    parseLine(
      '{"type":"session.updated","properties":{"info":{"id":"ses_r","parentID":null,"title":null}}}',
    ),
    { kind: "updated", info: { id: "ses_r", title: "" } },
  );
  assert.deepEqual(
    parseLine('{"type":"session.deleted","properties":{"info":{"id":"ses_r"}}}'),
    { kind: "deleted", info: { id: "ses_r", title: "" } },
  );
});

Deno.test("parseLine() checks every session id where it enters, once", () => {
  const bad = "not-an-id";
  for (
    const event of [
      { type: "session.idle", properties: { sessionID: bad } },
      { type: "session.status", properties: { sessionID: bad, status: { type: "busy" } } },
      { type: "session.updated", properties: { info: { id: bad, parentID: "ses_p" } } },
      { type: "session.deleted", properties: { info: { id: bad } } },
      { type: "bridge.job", sessionID: bad, status: "running" },
    ]
  ) {
    assert.deepEqual(parseLine(JSON.stringify(event)), {
      kind: "invalid",
      code: "invalid_message",
      message: 'Cannot use session id "not-an-id"',
    }, event.type);
  }
});

Deno.test("parseLine() asks for pane.skipped invalid_id for a child created with a bad id", () => {
  const r = parseLine(
    JSON.stringify({
      type: "session.created",
      properties: { info: { id: "ses_$(touch x)", parentID: "ses_p", title: "t" } },
    }),
  );
  assert.deepEqual(r, {
    kind: "invalid",
    code: "invalid_message",
    message: 'Cannot use session id "ses_$(touch x)"',
    skip: {
      sessionID: "ses_$(touch x)",
      hint: 'A session id is "ses_" followed by 1-128 letters or digits',
    },
  });
});

Deno.test("parseLine() says nothing of a root session, whatever its id", () => {
  for (const type of ["session.created", "session.updated"]) {
    const line = JSON.stringify({ type, properties: { info: { id: "root session", title: "r" } } });
    assert.deepEqual(parseLine(line), { kind: "ignored", type });
  }
});

Deno.test("parseLine() refuses session events without the fields muxbridge needs", () => {
  invalidMessage(
    parseLine('{"type":"session.created","properties":{}}'),
    /^Cannot use session\.created: key "properties\.info"/,
  );
  invalidMessage(
    parseLine('{"type":"session.created","properties":{"info":{"title":"x"}}}'),
    /key "properties\.info\.id"/,
  );
  invalidMessage(
    parseLine('{"type":"session.status","properties":{"sessionID":"ses_1","status":"busy"}}'),
    /key "properties\.status"/,
  );
  invalidMessage(parseLine('{"type":"session.idle"}'), /key "properties"/);
  invalidMessage(
    parseLine('{"type":"session.idle","properties":{"sessionID":5}}'),
    /key "properties\.sessionID"/,
  );
});

Deno.test("parseLine() ignores event types muxbridge does not act on", () => {
  for (const type of ["message.part.delta", "server.connected", "tui.toast.show", "", "bridge"]) {
    assert.deepEqual(parseLine(JSON.stringify({ type })), { kind: "ignored", type });
  }
});

// ---------------------------------------------------------------- requests for the user

/** Events shaped as OpenCode 1.18.33 publishes them (`permission/index.ts`, `question/index.ts`). */
const ASKED_PERMISSION = {
  type: "permission.asked",
  properties: {
    id: "per_1a2b",
    sessionID: CHILD,
    permission: "bash",
    patterns: ["rm -rf /"],
    metadata: { command: "rm -rf /" },
    always: ["rm *"],
    tool: { messageID: "msg_1", callID: "call_1" },
  },
};

Deno.test("parseLine() reads the events that open and end a request for the user (1.x)", () => {
  const open = (what: string, requestId: string) => ({
    kind: "attention",
    sessionId: CHILD,
    requestId,
    what,
    open: true,
  });
  const close = (what: string, requestId: string) => ({ ...open(what, requestId), open: false });
  assert.deepEqual(parseLine(JSON.stringify(ASKED_PERMISSION)), open("permission", "per_1a2b"));
  assert.deepEqual(
    parseLine(JSON.stringify({
      type: "permission.replied",
      properties: { sessionID: CHILD, requestID: "per_1a2b", reply: "reject" },
    })),
    close("permission", "per_1a2b"),
  );
  assert.deepEqual(
    parseLine(JSON.stringify({
      type: "question.asked",
      properties: {
        id: "que_9",
        sessionID: CHILD,
        questions: [{ question: "Which?", header: "Pick", options: [] }],
      },
    })),
    open("question", "que_9"),
  );
  for (const type of ["question.replied", "question.rejected"]) {
    assert.deepEqual(
      parseLine(JSON.stringify({
        type,
        properties: { sessionID: CHILD, requestID: "que_9", answers: [["a"]] },
      })),
      close("question", "que_9"),
    );
  }
  // As the plugin forwards them: the ids alone.
  assert.deepEqual(
    parseLine('{"type":"permission.asked","properties":{"id":"per_2","sessionID":"ses_c"}}'),
    { kind: "attention", sessionId: "ses_c", requestId: "per_2", what: "permission", open: true },
  );
});

Deno.test("parseLine() refuses a request event without usable ids, and ignores other permission.* types", () => {
  const bad: Array<[unknown, RegExp]> = [
    [{ type: "permission.asked", properties: { id: "per_1" } }, /properties\.sessionID/],
    [{ type: "permission.asked", properties: { sessionID: CHILD } }, /properties\.id/],
    [{ type: "permission.replied", properties: { sessionID: CHILD, id: "per_1" } }, /requestID/],
    [{ type: "question.asked", properties: "x" }, /properties\.sessionID/],
    [{ type: "question.rejected" }, /properties\.sessionID/],
    [{ type: "permission.asked", properties: { id: "per_1", sessionID: "-rf" } }, /-rf/],
    [{ type: "permission.asked", properties: { id: "-x;rm", sessionID: CHILD } }, /request id/],
    [{ type: "permission.asked", properties: { id: "p".repeat(201), sessionID: CHILD } }, /id/],
    [{ type: "permission.asked", properties: { id: 7, sessionID: CHILD } }, /id/],
  ];
  for (const [event, pattern] of bad) invalidMessage(parseLine(JSON.stringify(event)), pattern);
  for (const type of ["permission.updated", "question.something", "permission"]) {
    assert.deepEqual(parseLine(JSON.stringify({ type, properties: {} })), {
      kind: "ignored",
      type,
    });
  }
});

// ---------------------------------------------------------------- control messages, strictly

Deno.test("parseLine() reads bridge.hello with auth and config", () => {
  const hello = {
    type: "bridge.hello",
    serverUrl: "http://127.0.0.1:4096/",
    directory: "/abs/path",
    auth: { username: "u", password: "p" },
    config: { backend: "tmux", tmux: { target: "%1" } },
  };
  assert.deepEqual(parseLine(JSON.stringify(hello)), { kind: "hello", hello });
});

Deno.test("parseLine() reads a minimal bridge.hello", () => {
  const hello = { type: "bridge.hello", serverUrl: "http://h:1", directory: "/" };
  assert.deepEqual(parseLine(JSON.stringify(hello)), { kind: "hello", hello });
});

Deno.test("parseLine() refuses a bridge.hello without serverUrl or directory", () => {
  invalidMessage(
    parseLine('{"type":"bridge.hello","directory":"/x"}'),
    /^Cannot use bridge\.hello: key "serverUrl"/,
  );
  invalidMessage(
    parseLine('{"type":"bridge.hello","serverUrl":"http://h","directory":""}'),
    /key "directory"/,
  );
});

Deno.test("parseLine() refuses an extra key in a control message, naming it", () => {
  invalidMessage(
    parseLine('{"type":"bridge.hello","serverUrl":"http://h","directory":"/","severUrl":"x"}'),
    /^Cannot use bridge\.hello: unknown key "severUrl"$/,
  );
  invalidMessage(
    parseLine(
      '{"type":"bridge.hello","serverUrl":"http://h","directory":"/","auth":{"password":"p","user":"u"}}',
    ),
    /unknown key "auth\.user"/,
  );
  invalidMessage(parseLine('{"type":"bridge.ping","id":1,"x":2}'), /unknown key "x"/);
  invalidMessage(parseLine('{"type":"bridge.shutdown","now":true}'), /unknown key "now"/);
  invalidMessage(
    parseLine('{"type":"bridge.job","sessionID":"ses_1","status":"running","pid":3}'),
    /unknown key "pid"/,
  );
});

Deno.test("parseLine() reads bridge.job, running or not", () => {
  const job = (s: string) => JSON.stringify({ type: "bridge.job", sessionID: "ses_1", status: s });
  assert.deepEqual(parseLine(job("running")), { kind: "job", sessionId: "ses_1", running: true });
  for (const s of ["completed", "error", "cancelled"]) {
    assert.deepEqual(parseLine(job(s)), { kind: "job", sessionId: "ses_1", running: false });
  }
  invalidMessage(parseLine(job("paused")), /key "status"/);
});

Deno.test("parseLine() reads a 2.x plugin's bridge.hello with its OpenCode version and scope", () => {
  const r = parseLine(JSON.stringify({
    type: "bridge.hello",
    serverUrl: "http://127.0.0.1:49374",
    directory: "/p",
    opencode: "2.1.2",
    scope: "tui",
  }));
  assert.ok(r.kind === "hello" && r.hello.opencode === "2.1.2" && r.hello.scope === "tui");
  invalidMessage(
    parseLine(JSON.stringify({
      type: "bridge.hello",
      serverUrl: "http://127.0.0.1:49374",
      directory: "/p",
      scope: "everyone",
    })),
    /scope/,
  );
});

Deno.test("parseLine() reads bridge.view and checks its session id", () => {
  assert.deepEqual(parseLine('{"type":"bridge.view","sessionID":"ses_P"}'), {
    kind: "view",
    sessionId: "ses_P",
  });
  invalidMessage(parseLine('{"type":"bridge.view","sessionID":"../x"}'), /session id/);
  invalidMessage(parseLine('{"type":"bridge.view","sessionID":"ses_P","tab":1}'), /tab/);
});

Deno.test("parseLine() reads 2.x events with data as 2.x's, 1.x events with properties as 1.x's", () => {
  assert.deepEqual(
    parseLine(JSON.stringify({
      id: "evt_1",
      type: "session.execution.succeeded",
      data: { sessionID: "ses_C" },
    })),
    { kind: "status", sessionId: "ses_C", status: "idle" },
  );
  assert.deepEqual(
    parseLine('{"type":"session.idle","properties":{"sessionID":"ses_C"}}'),
    { kind: "status", sessionId: "ses_C", status: "idle" },
  );
});

Deno.test("parseLine() reads bridge.ping with a string, number or no id", () => {
  assert.deepEqual(parseLine('{"type":"bridge.ping","id":"a"}'), { kind: "ping", id: "a" });
  assert.deepEqual(parseLine('{"type":"bridge.ping","id":7}'), { kind: "ping", id: 7 });
  assert.deepEqual(parseLine('{"type":"bridge.ping"}'), { kind: "ping", id: null });
  invalidMessage(parseLine('{"type":"bridge.ping","id":{}}'), /key "id"/);
});

Deno.test("parseLine() reads bridge.shutdown", () => {
  assert.deepEqual(parseLine('{"type":"bridge.shutdown"}'), { kind: "shutdown" });
});

Deno.test("parseLine() refuses an unknown bridge.* message, naming its type", () => {
  invalidMessage(
    parseLine('{"type":"bridge.x"}'),
    /^Cannot use line: unknown control message "bridge\.x"$/,
  );
  invalidMessage(parseLine('{"type":"bridge."}'), /unknown control message/);
});

// ---------------------------------------------------------------- not a message

Deno.test("parseLine() refuses JSON that is not an object", () => {
  for (const line of ["null", "[]", '[{"type":"bridge.shutdown"}]', "1", '"text"', "true"]) {
    invalidMessage(parseLine(line), /not a JSON object/);
  }
});

Deno.test("parseLine() refuses an object without a string type", () => {
  for (const line of ["{}", '{"type":1}', '{"type":null}', '{"properties":{}}', '{"type":["a"]}']) {
    invalidMessage(parseLine(line), /no string "type"/);
  }
});

Deno.test("parseLine() reports text that is not JSON as invalid_json", () => {
  for (const line of ["", "{", "not json", "{'type':'x'}", '{"type":"bridge.ping"} trailing']) {
    const r = parseLine(line);
    assert.equal(r.kind, "invalid", line);
    assert.equal(r.kind === "invalid" && r.code, "invalid_json", line);
    assert.match(r.kind === "invalid" ? r.message : "", /^Cannot parse line: /);
  }
});

Deno.test("parseLine() never throws on hostile values inside a message", () => {
  const hostile = JSON.stringify({
    type: "session.created",
    properties: {
      info: { id: "ses_x", parentID: "ses_p", title: "\x1b]0;pwned\x07\u202e$(rm -rf ~)" },
    },
  });
  const r = parseLine(hostile);
  assert.equal(r.kind, "created");
  // Titles are cleaned where they are used (cleanTitle), not here.
  assert.equal(r.kind === "created" && r.info.title, "\x1b]0;pwned\x07\u202e$(rm -rf ~)");
});

// ---------------------------------------------------------------- schema and constants

Deno.test("the protocol is version 1 with a 1 MiB line limit", () => {
  assert.equal(PROTOCOL_VERSION, 1);
  assert.equal(MAX_LINE_BYTES, 1024 * 1024);
});

Deno.test("protocolJsonSchema() holds every message type, in and out", () => {
  const text = JSON.stringify(protocolJsonSchema());
  const types = [
    "session.created",
    "session.updated",
    "session.deleted",
    "session.status",
    "session.idle",
    "permission.asked",
    "permission.replied",
    "question.asked",
    "question.replied",
    "question.rejected",
    "session.created",
    "session.renamed",
    "bridge.hello",
    "bridge.job",
    "bridge.view",
    "bridge.ping",
    "bridge.shutdown",
    "ready",
    "pane.opened",
    "pane.closed",
    "pane.skipped",
    "pane.failed",
    "error",
    "pong",
    "bye",
  ];
  for (const type of types) assert.ok(text.includes(JSON.stringify(type)), type);
  for (const reason of CLOSE_REASONS) assert.ok(text.includes(JSON.stringify(reason)), reason);
});

Deno.test("protocolJsonSchema() lists exactly the out message types of OutMessageSchema", () => {
  type Node = { properties?: Record<string, Node>; anyOf?: Node[]; oneOf?: Node[]; const?: string };
  const schema = protocolJsonSchema() as Node;
  const out = schema.properties?.out;
  assert.ok(out);
  const variants = out.oneOf ?? out.anyOf ?? [];
  const types = variants.map((v) => v.properties?.type?.const).sort();
  assert.deepEqual(types, [
    "bye",
    "error",
    "pane.closed",
    "pane.failed",
    "pane.opened",
    "pane.skipped",
    "pong",
    "ready",
  ]);
  assert.equal(OutMessageSchema.options.length, types.length);
});

Deno.test("OutMessageSchema accepts the contract's examples", () => {
  const messages = [
    { type: "ready", protocol: 1, version: "0.1.0", backend: null, reason: "no multiplexer" },
    { type: "ready", protocol: 1, version: "0.1.0", backend: "tmux" },
    { type: "pane.opened", sessionID: "ses_1", paneId: "%3", backend: "tmux" },
    { type: "pane.closed", sessionID: "ses_1", paneId: "%3", reason: "gone" },
    { type: "pane.skipped", sessionID: "ses_1", reason: "server_unreachable", hint: "h" },
    { type: "pane.failed", sessionID: "ses_1", op: "close", code: "timed_out", message: "m" },
    { type: "error", code: "invalid_json", message: "m", line: 3 },
    { type: "pong", id: 1 },
    { type: "bye", closed: 2 },
  ];
  for (const m of messages) assert.ok(OutMessageSchema.safeParse(m).success, JSON.stringify(m));
});
