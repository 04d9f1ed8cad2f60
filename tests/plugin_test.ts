/**
 * The OpenCode plugin (`plugin/muxbridge.ts`) loaded in Deno with a fake PluginInput and fake
 * bridges (small sh scripts): hello first, only `session.*` forwarded, background jobs, a
 * stalled bridge, a crashing one, a missing one, and a host that stays silent.
 *
 * Timings come in through the plugin's options (`backoffMs`, …), so no assertion waits on wall
 * time; waits are bounded polls of files the fakes and the plugin write.
 */

import assert from "node:assert/strict";
import { createRealClock, waitFor } from "../lib/sys/clock.ts";
import v1 from "../plugin/muxbridge.ts";
import { setEnv, setEnvForFile } from "./helpers/env_scope.ts";
import { pluginInput } from "./helpers/load_plugin.ts";

const clock = createRealClock();
const MuxbridgePlugin = v1.server;
const SERVER = "http://127.0.0.1:4096/";
// The environment wins over options; a developer's own setting must not leak into these tests.
// The plugin's process locks live in the state directory: never the developer's own. Both are
// put back when this file is done, so later files of the run see the environment they got.
const STATE = Deno.makeTempDirSync({ prefix: "muxbridge-plugin-state-" });
setEnvForFile({
  MUXBRIDGE_BIN: undefined,
  MUXBRIDGE_PLUGIN_LOG: undefined,
  OPENCODE_SERVER_PASSWORD: undefined,
  MUXBRIDGE_STATE_DIR: STATE,
});
globalThis.addEventListener("unload", () => Deno.removeSync(STATE, { recursive: true }));

/** Fake bridges: each records what it got under its `--dir` ($5). */
const FAKES = {
  /** Records argv, says ready on stdout and something on stderr, copies stdin to a file. */
  recorder: `printf '%s\\n' "$@" > "$5/argv"
echo "recorder stderr" >&2
echo '{"type":"ready","protocol":1,"version":"fake","backend":null}'
exec cat > "$5/stdin.ndjson"`,
  /** Records each start and its first input line, then dies. */
  crasher: `echo start >> "$5/starts"
IFS= read -r line
printf '%s\\n' "$line" >> "$5/first-lines"
exit 3`,
  /** Says ready, then never reads its input. */
  staller: `echo '{"type":"ready","protocol":1,"version":"fake","backend":null}'
exec sleep 600`,
};

interface Rig {
  dir: string;
  log: string;
  hooks: Awaited<ReturnType<typeof MuxbridgePlugin>>;
  readLog(): string;
  lines(file: string): string[];
  until(what: string, cond: () => boolean): Promise<void>;
}

async function rig(
  fake: keyof typeof FAKES | "missing",
  options: Record<string, unknown> = {},
): Promise<Rig> {
  const dir = await Deno.makeTempDir({ prefix: "muxbridge-plugin-" });
  const bin = `${dir}/fake-${fake}`;
  if (fake !== "missing") {
    await Deno.writeTextFile(bin, `#!/bin/sh\n${FAKES[fake]}\n`);
    await Deno.chmod(bin, 0o755);
  }
  const log = `${dir}/state/bridge.log`;
  const hooks = await MuxbridgePlugin(pluginInput(dir, SERVER), { bin, log, ...options });
  const read = (path: string) => {
    try {
      return Deno.readTextFileSync(path);
    } catch {
      return "";
    }
  };
  return {
    dir,
    log,
    hooks,
    readLog: () => read(log),
    lines: (file) => read(`${dir}/${file}`).split("\n").filter((l) => l !== ""),
    async until(what, cond) {
      const ok = await waitFor(clock, cond, { deadline: clock.now() + 15_000, maxIntervalMs: 20 });
      assert.ok(ok, `timed out waiting for ${what}; log:\n${read(log)}`);
    },
  };
}

async function finish(r: Rig): Promise<void> {
  await r.hooks.dispose?.();
  await Deno.remove(r.dir, { recursive: true });
}

const ev = {
  created: (id: string, parentID?: string) => ({
    id: `evt_${id}c`,
    type: "session.created",
    properties: {
      sessionID: id,
      info: { id, title: "t", directory: "/p", ...(parentID ? { parentID } : {}) },
    },
  }),
  status: (id: string, type: string) => ({
    type: "session.status",
    properties: { sessionID: id, status: { type } },
  }),
  idle: (id: string) => ({ type: "session.idle", properties: { sessionID: id } }),
  error: (id: string, name: string) => ({
    type: "session.error",
    properties: { sessionID: id, error: { name, data: { message: "x" } } },
  }),
  deleted: (id: string) => ({
    type: "session.deleted",
    properties: { sessionID: id, info: { id, title: "t", directory: "/p", parentID: "ses_P" } },
  }),
};

// deno-lint-ignore no-explicit-any
const send = (r: Rig, event: any) => r.hooks.event!({ event });

/** Whether a promise is already settled: its callback runs before a later-queued one. */
async function settledAtOnce(p: Promise<unknown>): Promise<boolean> {
  return await Promise.race([p.then(() => true), Promise.resolve().then(() => false)]);
}

Deno.test("MuxbridgePlugin starts `bridge --url --dir`, sends bridge.hello first, then only session.* events", async () => {
  const r = await rig("recorder");
  try {
    const events = [
      { type: "server.connected", properties: {} },
      ev.created("ses_P"),
      ev.created("ses_C", "ses_P"),
      { type: "message.part.delta", properties: { sessionID: "ses_C", delta: "x" } },
      ev.status("ses_C", "busy"),
      { type: "file.edited", properties: { file: "/p/a" } },
      ev.status("ses_C", "idle"),
      ev.idle("ses_C"),
      { type: "server.heartbeat", properties: {} },
      ev.deleted("ses_C"),
    ];
    for (const e of events) await send(r, e);
    await r.until("the bridge's ready in the log", () => r.readLog().includes('"type":"ready"'));
    await r.hooks.dispose?.(); // ends the bridge's input, so the recorder's file is complete
    assert.deepEqual(r.lines("argv"), ["bridge", "--url", SERVER, "--dir", r.dir]);
    const got = r.lines("stdin.ndjson").map((l) => JSON.parse(l));
    assert.deepEqual(got[0], { type: "bridge.hello", serverUrl: SERVER, directory: r.dir });
    assert.deepEqual(got.slice(1), events.filter((e) => e.type.startsWith("session.")));
    const log = r.readLog();
    assert.match(log, /recorder stderr/, "the bridge's stderr goes to the log file");
    assert.match(log, /muxbridge-plugin\[\d+\] stopped/);
  } finally {
    await finish(r);
  }
});

Deno.test("MuxbridgePlugin forwards the events that open and end a request for the user with their ids only", async () => {
  const r = await rig("recorder");
  try {
    const events = [
      {
        id: "evt_1",
        type: "permission.asked",
        properties: {
          id: "per_1",
          sessionID: "ses_C",
          permission: "bash",
          patterns: ["cat ~/.ssh/id_ed25519"],
          metadata: { command: "cat ~/.ssh/id_ed25519", diff: "x".repeat(100_000) },
          always: ["cat *"],
          tool: { messageID: "msg_1", callID: "call_1" },
        },
      },
      {
        type: "permission.replied",
        properties: { sessionID: "ses_C", requestID: "per_1", reply: "once" },
      },
      {
        type: "question.asked",
        properties: { id: "que_1", sessionID: "ses_C", questions: [{ question: "secret?" }] },
      },
      { type: "question.rejected", properties: { sessionID: "ses_C", requestID: "que_1" } },
      { type: "permission.weird", properties: { sessionID: 7, requestID: ["x"] } },
    ];
    for (const e of events) await send(r, e);
    await r.until("the bridge's ready in the log", () => r.readLog().includes('"type":"ready"'));
    await r.hooks.dispose?.();
    const got = r.lines("stdin.ndjson").slice(1).map((l) => JSON.parse(l));
    assert.deepEqual(got, [
      { type: "permission.asked", properties: { id: "per_1", sessionID: "ses_C" } },
      { type: "permission.replied", properties: { sessionID: "ses_C", requestID: "per_1" } },
      { type: "question.asked", properties: { id: "que_1", sessionID: "ses_C" } },
      { type: "question.rejected", properties: { sessionID: "ses_C", requestID: "que_1" } },
      { type: "permission.weird", properties: {} },
    ]);
  } finally {
    await finish(r);
  }
});

Deno.test("MuxbridgePlugin puts OPENCODE_SERVER_USERNAME/PASSWORD into bridge.hello auth", async () => {
  const restore = setEnv({ OPENCODE_SERVER_PASSWORD: "s3cret", OPENCODE_SERVER_USERNAME: "alice" });
  let r: Rig;
  try {
    r = await rig("recorder");
  } finally {
    restore();
  }
  try {
    await r.hooks.dispose?.();
    const hello = JSON.parse(r.lines("stdin.ndjson")[0]);
    assert.deepEqual(hello.auth, { username: "alice", password: "s3cret" });
    assert.ok(!r.lines("argv").join(" ").includes("s3cret"), "never on argv");
  } finally {
    await finish(r);
  }
});

Deno.test("MuxbridgePlugin turns a background task into bridge.job running, then completed, error or cancelled", async () => {
  const r = await rig("recorder");
  try {
    const background = (owner: string, jobSession: string) =>
      r.hooks["tool.execute.after"]!(
        { tool: "task", sessionID: owner, callID: `call_${jobSession}`, args: {} },
        {
          title: "t",
          output: "started",
          metadata: { background: true, sessionId: jobSession, parentSessionId: owner },
        },
      );
    // A foreground task and other tools are not jobs.
    await r.hooks["tool.execute.after"]!(
      { tool: "task", sessionID: "ses_A", callID: "c0", args: {} },
      { title: "t", output: "", metadata: { sessionId: "ses_F", parentSessionId: "ses_A" } },
    );
    await r.hooks["tool.execute.after"]!(
      { tool: "bash", sessionID: "ses_A", callID: "c1", args: {} },
      { title: "t", output: "", metadata: { background: true, sessionId: "ses_X" } },
    );
    await background("ses_A", "ses_J1");
    await background("ses_A", "ses_J1"); // reported once
    await send(r, ev.status("ses_J1", "busy"));
    await send(r, ev.idle("ses_J1"));
    await send(r, ev.idle("ses_J1")); // idle comes twice after an abort; completed once
    await background("ses_B", "ses_J2");
    await send(r, ev.error("ses_J2", "UnknownError"));
    await background("ses_B", "ses_J3");
    await send(r, ev.error("ses_J3", "MessageAbortedError"));
    await background("ses_B", "ses_J4");
    await send(r, ev.deleted("ses_J4"));
    await r.hooks.dispose?.();
    const jobs = r.lines("stdin.ndjson").map((l) => JSON.parse(l))
      .filter((m) => m.type === "bridge.job")
      .map((m) => `${m.sessionID} ${m.status}`);
    assert.deepEqual(jobs, [
      "ses_A running",
      "ses_A completed",
      "ses_B running",
      "ses_B error",
      "ses_B running",
      "ses_B cancelled",
      "ses_B running",
      "ses_B cancelled",
    ]);
  } finally {
    await finish(r);
  }
});

Deno.test("MuxbridgePlugin with a stalled bridge: the hook returns at once, the queue stays bounded, drops are counted", async () => {
  const queueBytes = 4096;
  const r = await rig("staller", { queueBytes, stopGraceMs: 100 });
  try {
    await r.until("the staller's ready", () => r.readLog().includes('"type":"ready"'));
    const pad = "x".repeat(200);
    const total = 5000;
    let lineBytes = 0;
    for (let i = 0; i < total; i++) {
      const e = { ...ev.status("ses_C", i % 2 ? "busy" : "idle"), pad };
      lineBytes = JSON.stringify(e).length + 1;
      assert.ok(await settledAtOnce(send(r, e)), `event ${i}: the hook must not wait`);
    }
    await r.hooks.dispose?.();
    const log = r.readLog();
    assert.equal(log.match(/queue full \(4096 bytes\)/g)?.length, 1, "one line per stall");
    const dropped = Number(log.match(/(\d+) events were dropped in total/)?.[1]);
    // What is not dropped sits in the queue (≤ queueBytes), the Node stream (≤ 16 KiB + a
    // line) or the kernel pipe (64 KiB on Linux); allow generous slack for the last two.
    const kept = Math.ceil((queueBytes + 256 * 1024) / lineBytes);
    assert.ok(dropped >= total - kept, `dropped ${dropped} of ${total}; at most ${kept} kept`);
    assert.ok(dropped <= total, `dropped ${dropped} of ${total}`);
  } finally {
    await finish(r);
  }
});

Deno.test("MuxbridgePlugin restarts a crashing bridge with doubling, capped delays, re-sends hello, then gives up in one line", async () => {
  const r = await rig("crasher", { backoffMs: 5, backoffMaxMs: 20, maxRestarts: 4 });
  try {
    await r.until("giving up", () => r.readLog().includes("giving up"));
    const log = r.readLog();
    const delays = [...log.matchAll(/restart (\d) of 4 in (\d+) ms/g)].map((m) => Number(m[2]));
    assert.deepEqual(delays, [5, 10, 20, 20]);
    assert.equal(log.match(/giving up after 4 restarts/g)?.length, 1);
    assert.equal(r.lines("starts").length, 5, "the first start and four restarts");
    for (const line of r.lines("first-lines")) {
      assert.equal(JSON.parse(line).type, "bridge.hello", "every start begins with hello");
    }
    // After giving up, events go nowhere and nothing more is logged.
    const before = r.readLog();
    await send(r, ev.status("ses_C", "busy"));
    assert.equal(r.readLog(), before);
  } finally {
    await finish(r);
  }
});

Deno.test("MuxbridgePlugin resets the restart count after a bridge ran for stableMs", async () => {
  const r = await rig("crasher", { backoffMs: 5, maxRestarts: 1, stableMs: 0 });
  try {
    await r.until("three starts", () => r.lines("starts").length >= 3);
    await r.hooks.dispose?.();
    const log = r.readLog();
    assert.ok(!log.includes("giving up"), log);
    assert.ok([...log.matchAll(/restart (\d+) of 1 in 5 ms/g)].every((m) => m[1] === "1"));
  } finally {
    await finish(r);
  }
});

Deno.test("MuxbridgePlugin with a missing binary logs exactly one line and ignores events", async () => {
  const r = await rig("missing");
  try {
    await r.until("the missing-binary line", () => r.readLog().includes("cannot start"));
    for (let i = 0; i < 100; i++) await send(r, ev.status("ses_C", "busy"));
    await r.hooks.dispose?.();
    const lines = r.readLog().trim().split("\n");
    assert.deepEqual(
      lines.map((l) => l.replace(/^\S+ muxbridge-plugin\[\d+\] /, "").slice(0, 40)),
      [
        `starting "${r.dir}/fake-missing" for http`.slice(0, 40),
        `cannot start "${r.dir}/fake-missing" (ENOENT)`.slice(0, 40),
        "stopped",
      ],
    );
    assert.match(lines[1], /install muxbridge on PATH or run `muxbridge install`/);
  } finally {
    await finish(r);
  }
});

Deno.test("MuxbridgePlugin never writes to its host's stdout or stderr (missing, crashing and stalled bridges)", async () => {
  const dir = await Deno.makeTempDir({ prefix: "muxbridge-plugin-host-" });
  try {
    for (const name of ["crasher", "staller"] as const) {
      await Deno.writeTextFile(`${dir}/${name}`, `#!/bin/sh\n${FAKES[name]}\n`);
      await Deno.chmod(`${dir}/${name}`, 0o755);
    }
    const plugin = new URL("../plugin/muxbridge.ts", import.meta.url).href;
    const host = `
      const { default: { server: MuxbridgePlugin } } = await import(${JSON.stringify(plugin)});
      const dir = ${JSON.stringify(dir)};
      const input = { serverUrl: new URL(${JSON.stringify(SERVER)}), directory: dir };
      const all = await Promise.all([
        MuxbridgePlugin(input, { instance: "a", bin: dir + "/missing", log: dir + "/a.log" }),
        MuxbridgePlugin(input, { instance: "b", bin: dir + "/crasher", log: dir + "/b.log", backoffMs: 1, maxRestarts: 3 }),
        MuxbridgePlugin(input, { instance: "c", bin: dir + "/staller", log: dir + "/c.log", queueBytes: 1024, stopGraceMs: 50 }),
      ]);
      for (let i = 0; i < 2000; i++) {
        for (const h of all) h.event({ event: { type: "session.status", properties: { sessionID: "ses_C", status: { type: "busy" } } } });
      }
      // Until the crasher gave up (bounded), so the restarts happen while the host runs.
      for (let i = 0; i < 500; i++) {
        try { if (Deno.readTextFileSync(dir + "/b.log").includes("giving up")) break; } catch {}
        await new Promise((r) => setTimeout(r, 20));
      }
      await Promise.all(all.map((h) => h.dispose()));
    `;
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["eval", "--quiet", "--ext=ts", host],
      env: { MUXBRIDGE_BIN: "", MUXBRIDGE_PLUGIN_LOG: "", MUXBRIDGE_STATE_DIR: dir },
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    const dec = new TextDecoder();
    assert.equal(dec.decode(out.stderr), "", "host stderr");
    assert.equal(dec.decode(out.stdout), "", "host stdout");
    assert.equal(out.code, 0);
    assert.match(Deno.readTextFileSync(`${dir}/a.log`), /cannot start/);
    assert.match(Deno.readTextFileSync(`${dir}/b.log`), /giving up after 3 restarts/);
    assert.match(Deno.readTextFileSync(`${dir}/c.log`), /events were dropped in total/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
