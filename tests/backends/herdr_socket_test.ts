/**
 * The herdr backend over herdr's API socket (`herdr.transport`): the exact requests against a
 * scripted socket seam (no process runs), the socket's location, the protocol decision, the error
 * table; then against the fake API socket server (`tests/fakes/herdr_socket.ts`), which shares
 * its pane model and state with the fake CLI: the fallback to the CLI and the faults. herdr
 * cannot run here: nothing in this file touches a real herdr.
 */

import assert from "node:assert/strict";
import { createConnection } from "node:net";
import { createHerdrBackend } from "../../backends/herdr/backend.ts";
import { LAUNCH_LINE, LAUNCH_VAR, launchCommand } from "../../backends/herdr/_launch.ts";
import { resolveHerdrSocket, type UnixRequester } from "../../backends/herdr/_socket.ts";
import { createRealClock, waitFor } from "../../lib/sys/clock.ts";
import type { ConfigLayer } from "../../lib/config/config.ts";
import { isMuxError } from "../../lib/sys/errors.ts";
import type { Identity } from "../../lib/backend/identity.ts";
import { createLogger } from "../../lib/sys/log.ts";
import { unixRequest } from "../../lib/sys/unix_request.ts";
import { createFakeRunner } from "../fakes/fake_runner.ts";
import { recordedLaunches, writeStandIn } from "../helpers/stand_in.ts";
import { deps, inside, SOCKET } from "./_herdr_deps.ts";
import { request } from "./_spawn_request.ts";
import { FAKE_HERDR, type FakeHerdr, startFakeHerdr } from "./herdr_fixture.ts";
import { validatePaneId } from "../../lib/sys/validate.ts";

const clock = createRealClock();
/** Log lines, for "logged once". */
function recordingLog() {
  const lines: string[] = [];
  return { lines, log: createLogger("warn", (line) => lines.push(line)) };
}

interface Sent {
  path: string;
  id: string;
  method: string;
  params: Record<string, unknown>;
}

/**
 * A scripted socket: answers by method with a result body (struct order, as the server writes
 * it), an error, or a raw line; records every request.
 */
function scriptedSocket(
  answers: Record<string, Record<string, unknown> | { error: string } | { raw: string }>,
) {
  const sent: Sent[] = [];
  const send: UnixRequester = (path, line) => {
    const req = JSON.parse(line) as Omit<Sent, "path">;
    sent.push({ path, ...req });
    const answer = answers[req.method];
    if (answer === undefined) throw new Error(`unexpected request ${line}`);
    if ("raw" in answer) return Promise.resolve({ ok: true, line: answer.raw as string });
    if ("error" in answer) {
      return Promise.resolve({
        ok: true,
        line: JSON.stringify({
          id: req.id,
          error: { code: answer.error, message: `${answer.error} happened` },
        }),
      });
    }
    return Promise.resolve({ ok: true, line: JSON.stringify({ id: req.id, result: answer }) });
  };
  return { sent, send };
}

const pong = (version = "0.9.1", protocol = 22) => ({
  type: "pong",
  version,
  protocol,
  capabilities: null,
});
const paneInfo = (id: string, extra: Record<string, unknown> = {}) => ({
  type: "pane_info",
  pane: {
    pane_id: id,
    terminal_id: "term_1",
    workspace_id: "w1",
    tab_id: "w1:t1",
    focused: false,
    agent_status: "unknown",
    revision: 0,
    ...extra,
  },
});

Deno.test("herdr over the socket: a pane's life is these requests and no process; the password is in none", async () => {
  const { sent, send } = scriptedSocket({
    ping: pong(),
    "pane.split": paneInfo("w1:p2"),
    "pane.process_info": {
      type: "pane_process_info",
      process_info: { pane_id: "w1:p2", shell_pid: 4321 },
    },
    "pane.send_input": { type: "ok" },
    "pane.rename": paneInfo("w1:p2", { label: "fix the bug" }),
    "pane.get": paneInfo("w1:p2", { label: "fix the bug" }),
    "pane.send_keys": { type: "ok" },
    "pane.close": { type: "ok" },
  });
  const run = createFakeRunner();
  const state = Deno.makeTempDirSync({ prefix: "muxbridge-herdr-state-" });
  const backend = createHerdrBackend(deps(run, { state_dir: state }), { unixRequest: send });
  const password = "--help $(x) 'q'";
  const spawned = await backend.spawn(request({ env: { OPENCODE_SERVER_PASSWORD: password } }));
  Deno.removeSync(state, { recursive: true });
  assert.deepEqual(spawned, { paneId: "w1:p2", pid: 4321 });
  const launch = sent[1].params.env as Record<string, string>;
  const m = /^unset MUXBRIDGE_LAUNCH; \. '([^']+\.env)'; rm -f -- '\1'; exec /.exec(
    launch[LAUNCH_VAR],
  );
  assert.ok(m, launch[LAUNCH_VAR]);
  assert.deepEqual(sent.map(({ method, params }) => [method, params]), [
    ["ping", {}],
    ["pane.split", {
      target_pane_id: "w1:p1",
      direction: "right",
      cwd: "/w",
      focus: false,
      env: { [LAUNCH_VAR]: launchCommand(request().argv, { file: m[1] }) },
    }],
    ["pane.process_info", { pane_id: "w1:p2" }],
    ["pane.send_input", { pane_id: "w1:p2", text: LAUNCH_LINE, keys: ["Enter"] }],
    ["pane.rename", { pane_id: "w1:p2", label: "fix the bug" }],
  ]);
  assert.ok(sent.every((s) => s.path === SOCKET));
  assert.equal(new Set(sent.map((s) => s.id)).size, sent.length, "one id per request");
  assert.deepEqual(await backend.inspect(validatePaneId("w1:p2")), {
    paneId: "w1:p2",
    dead: false,
    title: "fix the bug",
  });
  await backend.interrupt(validatePaneId("w1:p2"));
  await backend.setTitle(validatePaneId("w1:p2"), "\u0007");
  await backend.kill(validatePaneId("w1:p2"));
  assert.deepEqual(sent.slice(5).map(({ method, params }) => [method, params]), [
    ["pane.get", { pane_id: "w1:p2" }],
    ["pane.send_keys", { pane_id: "w1:p2", keys: ["ctrl+c"] }],
    ["pane.rename", { pane_id: "w1:p2" }],
    ["pane.close", { pane_id: "w1:p2" }],
  ]);
  assert.ok(
    !sent.some((s) => JSON.stringify(s).includes("p@ss") || JSON.stringify(s).includes(password)),
  );
  assert.equal(run.calls.length, 0, "no herdr process ran");
});

Deno.test("herdr finds its socket as the herdr CLI would for muxbridge's commands", () => {
  const where = (
    flags: ConfigLayer,
    env: Record<string, string>,
    identity: Identity = { backend: null, layers: [], harness: { name: null } },
  ) => {
    const layer = identity.layers.find((l) => l.backend === "herdr");
    const r = resolveHerdrSocket(deps(createFakeRunner(), flags, { identity, env }), layer);
    return r.path ?? `none: ${r.why}`;
  };
  const env = {
    HOME: "/home/u",
    XDG_CONFIG_HOME: "/cfg",
    HERDR_SOCKET_PATH: "/env.sock",
    HERDR_SESSION: "envs",
  };
  assert.equal(
    where({ herdr: { session: "job" } }, env, inside()),
    "/cfg/herdr/sessions/job/herdr.sock",
  );
  assert.equal(where({ herdr: { session: "default" } }, env), "/cfg/herdr/herdr.sock");
  assert.equal(where({ herdr: { socket_path: "/s.sock" } }, env, inside()), "/s.sock");
  assert.equal(where({}, env, inside()), SOCKET);
  assert.equal(where({}, env), "/env.sock");
  assert.equal(where({}, { ...env, HERDR_SOCKET_PATH: "" }), "/cfg/herdr/sessions/envs/herdr.sock");
  assert.equal(where({}, { HOME: "/home/u" }), "/home/u/.config/herdr/herdr.sock");
  assert.match(where({}, {}), /^none: neither XDG_CONFIG_HOME nor HOME/);
  // A name that could leave herdr's sessions folder is refused (the config refuses it as a key).
  assert.match(
    where({}, { ...env, HERDR_SOCKET_PATH: "", HERDR_SESSION: "../x" }),
    /^none: HERDR_SESSION "\.\.\/x" is not a plain session name: it holds "\/"/,
  );
});

Deno.test("herdr auto uses the CLI for a protocol outside 20-22, logged once; socket mode refuses it", async () => {
  const version = { stdout: "herdr 0.9.9\n" };
  const list = { stdout: '{"id":"cli:pane:list","result":{"panes":[],"type":"pane_list"}}' };
  for (const protocol of [19, 23]) {
    const { sent, send } = scriptedSocket({ ping: pong("0.9.9", protocol) });
    const run = createFakeRunner().on(["herdr", "--version"], version).on(
      ["herdr", "pane", "list"],
      list,
    );
    const { lines, log } = recordingLog();
    const backend = createHerdrBackend(deps(run, {}, { log }), { unixRequest: send });
    assert.equal((await backend.probe()).version, "0.9.9");
    await backend.probe();
    assert.equal(sent.length, 1, "one ping for the backend's life");
    assert.equal(run.calls.length, 3);
    assert.equal(lines.length, 1, lines.join(""));
    assert.match(lines[0], new RegExp(`speaks protocol ${protocol}; muxbridge's socket client`));
    const forced = createHerdrBackend(
      deps(createFakeRunner(), { herdr: { transport: "socket" } }),
      {
        unixRequest: send,
      },
    );
    await assert.rejects(() => forced.probe(), (e) => {
      assert.ok(isMuxError(e, "unsupported_version"));
      assert.match(e.hint ?? "", /herdr\.transport/);
      return true;
    });
  }
  for (const [v, p] of [["0.8.1", 19], ["0.8.2-preview.1", 20]] as const) {
    const { send } = scriptedSocket({ ping: pong(v, p) });
    await assert.rejects(
      () => createHerdrBackend(deps(createFakeRunner()), { unixRequest: send }).probe(),
      (e) => isMuxError(e, "unsupported_version") && /is too old, need >= 0\.8\.2/.test(e.message),
    );
  }
});

Deno.test("herdr auto falls back when ping answers garbage, an error or another id; socket mode does not", async () => {
  const cases: Array<[Record<string, unknown>, string]> = [
    [{ raw: "thread 'main' panicked" }, "unparseable_output"],
    [
      { raw: '{"id":"someone-else","result":{"type":"pong","version":"0.9.1","protocol":22}}' },
      "unparseable_output",
    ],
    [{ raw: '{"id":"x","result":{"type":"pong"}}' }, "unparseable_output"],
    [{ error: "not_implemented" }, "command_failed"],
    [{ error: "server_not_running" }, "backend_unreachable"],
  ];
  for (const [answer, code] of cases) {
    const { send } = scriptedSocket({ ping: answer as Record<string, unknown> });
    const run = createFakeRunner()
      .on(["herdr", "--version"], { stdout: "herdr 0.9.1" })
      .on(["herdr", "pane", "list"], {
        stdout: '{"id":"cli:pane:list","result":{"panes":[],"type":"pane_list"}}',
      });
    await createHerdrBackend(deps(run), { unixRequest: send }).probe();
    assert.equal(run.calls.length, 2, JSON.stringify(answer));
    const forced = createHerdrBackend(
      deps(createFakeRunner(), { herdr: { transport: "socket" } }),
      {
        unixRequest: send,
      },
    );
    await assert.rejects(
      () => forced.probe(),
      (e) => isMuxError(e) && e.code === code,
      JSON.stringify(answer),
    );
  }
});

Deno.test("herdr over the socket maps herdr's error codes through the one table", async () => {
  const cases: Array<[string, string]> = [
    ["pane_not_found", "pane_not_found"],
    ["server_not_running", "backend_unreachable"],
    ["protocol_mismatch", "unsupported_version"],
    ["invalid_key", "command_failed"],
    ["server_unavailable", "command_failed"],
  ];
  for (const [herdrCode, code] of cases) {
    const { send } = scriptedSocket({ ping: pong(), "pane.close": { error: herdrCode } });
    const backend = createHerdrBackend(deps(createFakeRunner()), { unixRequest: send });
    await assert.rejects(
      () => backend.kill(validatePaneId("w1:p2")),
      (e) => isMuxError(e) && e.code === code,
      herdrCode,
    );
  }
  const { send } = scriptedSocket({ ping: pong(), "pane.get": { error: "pane_not_found" } });
  assert.equal(
    await createHerdrBackend(deps(createFakeRunner()), { unixRequest: send }).inspect(
      validatePaneId("w9:p9"),
    ),
    null,
  );
});

Deno.test("herdr transport cli never touches the socket", async () => {
  const send: UnixRequester = () => {
    throw new Error("the socket was used");
  };
  const run = createFakeRunner()
    .on(["herdr", "--version"], { stdout: "herdr 0.9.1" })
    .on(["herdr", "pane", "list"], {
      stdout: '{"id":"cli:pane:list","result":{"panes":[],"type":"pane_list"}}',
    });
  const backend = createHerdrBackend(deps(run, { herdr: { transport: "cli" } }), {
    unixRequest: send,
  });
  assert.equal((await backend.probe()).binary, "herdr");
  const checks = await backend.doctor();
  assert.equal(checks.find((c) => c.name === "herdr transport")?.status, "pass");
});

// ---- against the fake API socket server (and the fake CLI, on the same state) ----

const fakeTest = (name: string, fn: () => Promise<void>) => Deno.test({ name, fn });

async function spawnStandIn(backend: ReturnType<typeof createHerdrBackend>, server: FakeHerdr) {
  const progDir = await Deno.makeTempDir({ dir: server.dir, prefix: "prog-" });
  const standIn = await writeStandIn(progDir);
  const spawned = await backend.spawn(request({
    argv: [standIn, "attach", "http://127.0.0.1:4096", "--session", "ses_abc", "--dir", progDir],
    cwd: progDir,
    env: { OPENCODE_SERVER_PASSWORD: "s3cret 'pw'" },
  }));
  const started = await waitFor(clock, async () => (await recordedLaunches(progDir)).length > 0, {
    deadline: clock.now() + 8000,
    maxIntervalMs: 50,
  });
  assert.ok(started, "the pane program started");
  return { ...spawned, launch: (await recordedLaunches(progDir))[0] };
}

/** The fake CLI's argv log, without `--version`. */
const cliCommands = async (server: FakeHerdr) =>
  (await server.calls()).filter((a) => a[0] !== "--version");

fakeTest(
  "herdr (fake socket) auto: a pane's life runs no herdr process, and the CLI sees the same panes",
  async () => {
    const server = await startFakeHerdr({ socket: true });
    try {
      const viaSocket = server.backend();
      const viaCli = server.backend({ herdr: { transport: "cli" } });
      const { paneId, launch, pid } = await spawnStandIn(viaSocket, server);
      assert.equal(launch.password, "s3cret 'pw'");
      assert.equal(pid, launch.pid, "the pane's shell exec'd into the program");
      assert.deepEqual(await server.calls(), [], "no herdr process so far");
      assert.equal((await viaCli.inspect(paneId))?.title, "fix the bug", "the CLI sees the pane");
      await viaCli.setTitle(paneId, "renamed by the CLI");
      assert.equal((await viaSocket.inspect(paneId))?.title, "renamed by the CLI");
      await viaSocket.kill(paneId);
      assert.equal(await viaCli.inspect(paneId), null);
      assert.match((await viaSocket.probe()).binary, /^socket .*herdr\.sock$/);
      const checks = await viaSocket.doctor();
      assert.deepEqual(checks.filter((c) => c.status !== "pass"), []);
      assert.match(checks.find((c) => c.name === "herdr transport")!.detail, /protocol 22/);
    } finally {
      await server.close();
    }
  },
);

fakeTest(
  "herdr (fake socket) auto falls back to the CLI when the socket is missing or refuses, logged once",
  async () => {
    const server = await startFakeHerdr();
    try {
      for (const stage of ["missing", "refused"]) {
        if (stage === "refused") {
          await server.startSocket();
          await server.stopSocket(true);
        }
        const { lines, log } = recordingLog();
        const backend = server.backend({}, server.identity(), log);
        const { paneId } = await spawnStandIn(backend, server);
        await backend.kill(paneId);
        assert.equal(lines.length, 1, lines.join(""));
        assert.match(lines[0], stage === "missing" ? /ENOENT/ : /ECONNREFUSED/);
        assert.ok(
          (await cliCommands(server)).some((a) => a[1] === "split" && a.includes("--no-focus")),
        );
        const checks = await backend.doctor();
        assert.equal(checks.find((c) => c.name === "herdr transport")?.status, "warn");
        assert.deepEqual(checks.filter((c) => c.status === "fail"), []);
      }
    } finally {
      await server.close();
    }
  },
);

fakeTest(
  "herdr (fake socket) auto: a socket that fails later hands every later command to the CLI; only reads are repeated",
  async () => {
    const server = await startFakeHerdr({ socket: true });
    try {
      const fresh = async () => {
        const { lines, log } = recordingLog();
        // The fake CLI is a Deno program: on a loaded machine it took over 1.5 s to answer
        // `--version` (load gate, twice). The bound only has to end the one hang below.
        const backend = server.backend({ command_timeout_ms: 10_000 }, server.identity(), log);
        await backend.probe();
        return { backend, lines };
      };
      // Garbage on a read: repeated through the CLI, and the CLI from then on.
      let { backend, lines } = await fresh();
      await server.update((s) => (s.socketFault = "garbage:pane.get"));
      assert.equal((await backend.inspect(validatePaneId("w1:p1")))?.paneId, "w1:p1");
      await server.update((s) => delete s.socketFault);
      await backend.setTitle(validatePaneId("w1:p1"), "mine");
      assert.deepEqual((await cliCommands(server)).map((a) => a.slice(0, 2)), [
        ["pane", "get"],
        ["pane", "rename"],
      ]);
      assert.equal(lines.length, 1, lines.join(""));
      assert.match(lines[0], /from now on/);
      // Half a line after a split: the split may have run, so it is not repeated.
      ({ backend } = await fresh());
      const before = (await server.calls()).length;
      await server.update((s) => (s.socketFault = "crash:pane.split"));
      await assert.rejects(
        () => backend.spawn(request({ cwd: server.dir })),
        (e) => isMuxError(e, "command_failed") && /before a complete line/.test(e.message),
      );
      await server.update((s) => delete s.socketFault);
      assert.ok(!(await server.calls()).slice(before).some((a) => a[1] === "split"));
      const { paneId } = await spawnStandIn(backend, server);
      assert.ok((await server.calls()).slice(before).some((a) => a[1] === "split"), "then the CLI");
      await backend.kill(paneId);
      // A hang: timed_out, not repeated (the CLI talks to the same server), then the CLI.
      ({ backend } = await fresh());
      const mark = (await server.calls()).length;
      await server.update((s) => (s.socketFault = "hang:pane.get"));
      await assert.rejects(
        () => backend.inspect(validatePaneId("w1:p1")),
        (e) => isMuxError(e, "timed_out"),
      );
      assert.equal((await server.calls()).length, mark, "not repeated");
      await server.update((s) => delete s.socketFault);
      assert.equal((await backend.inspect(validatePaneId("w1:p1")))?.paneId, "w1:p1");
      assert.ok((await server.calls()).slice(mark).some((a) => a[1] === "get"));
      // The server dies: a request that never reached it is repeated through the CLI.
      ({ backend } = await fresh());
      await server.stopSocket(true);
      assert.equal((await backend.inspect(validatePaneId("w1:p1")))?.paneId, "w1:p1");
    } finally {
      await server.close();
    }
  },
);

fakeTest(
  "herdr (fake socket) transport socket: every failure is the error, nothing falls back",
  async () => {
    const server = await startFakeHerdr({ socket: true });
    try {
      const backend = server.backend({ command_timeout_ms: 1500, herdr: { transport: "socket" } });
      await backend.probe();
      const cases: Array<[string, string]> = [
        ["garbage", "unparseable_output"],
        ["wrong-id", "unparseable_output"],
        ["close", "command_failed"],
        ["crash", "command_failed"],
        ["hang", "timed_out"],
      ];
      for (const [fault, code] of cases) {
        await server.update((s) => (s.socketFault = `${fault}:pane.get`));
        await assert.rejects(
          () => backend.inspect(validatePaneId("w1:p1")),
          (e) => isMuxError(e) && e.code === code,
          fault,
        );
      }
      await server.update((s) => delete s.socketFault);
      assert.equal(
        (await backend.inspect(validatePaneId("w1:p1")))?.paneId,
        "w1:p1",
        "still the socket",
      );
      await server.stopSocket(true);
      await assert.rejects(
        () => backend.inspect(validatePaneId("w1:p1")),
        (e) => isMuxError(e, "backend_unreachable") && /no herdr server is running/.test(e.message),
      );
      const gone = server.backend({
        herdr: { transport: "socket", socket_path: `${server.dir}/none.sock` },
      });
      await assert.rejects(() => gone.probe(), (e) => isMuxError(e, "backend_unreachable"));
      assert.equal((await gone.doctor()).find((c) => c.name === "herdr transport")?.status, "fail");
      assert.deepEqual(await cliCommands(server), [], "no herdr process ran");
    } finally {
      await server.close();
    }
  },
);

/** Sends raw bytes on one connection and reads until the server closes it. */
function rawExchange(path: string, bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = "";
    const socket = createConnection({ path }, () => socket.write(bytes));
    socket.on("data", (chunk) => (text += chunk.toString()));
    socket.on("error", reject);
    socket.on("close", () => resolve(text));
  });
}

fakeTest(
  "herdr fake socket server: struct order, one request per connection, herdr's error lines",
  async () => {
    const server = await startFakeHerdr({ socket: true });
    try {
      const ask = async (line: string) => {
        const r = await unixRequest(server.socket, line, { timeoutMs: 5000 });
        assert.ok(r.ok);
        return r.line;
      };
      assert.equal(
        await ask('{"id":"p","method":"ping","params":{}}'),
        '{"id":"p","result":{"type":"pong","version":"0.9.1","protocol":22,"capabilities":{"live_handoff":true,"detached_server_daemon":true}}}',
      );
      assert.match(
        await ask('{"id":"g","method":"pane.get","params":{"pane_id":"w1:p1"}}'),
        /^\{"id":"g","result":\{"type":"pane_info","pane":\{"pane_id":"w1:p1","terminal_id":"term_1","workspace_id":"w1","tab_id":"w1:t1","focused":true,"cwd":"[^"]+","agent_status":"unknown","scroll":\{"offset_from_bottom":0,"max_offset_from_bottom":0,"viewport_rows":40\},"revision":0\}\}\}$/,
      );
      assert.equal(
        await ask('{"id":"g","method":"pane.get","params":{"pane_id":"w9:p9"}}'),
        '{"id":"g","error":{"code":"pane_not_found","message":"pane w9:p9 not found"}}',
      );
      assert.match(
        await ask("{not json"),
        /^\{"id":"","error":\{"code":"invalid_request","message":"invalid request: /,
      );
      // Two requests on one connection: the first is answered, then the server closes.
      const both = await rawExchange(
        server.socket,
        '{"id":"a","method":"ping","params":{}}\n{"id":"b","method":"ping","params":{}}\n',
      );
      assert.equal(both.split("\n").length, 2, both);
      assert.match(both, /^\{"id":"a",/);
      // The CLI prints the same pane with keys sorted at every level.
      const cli = await server.runner([FAKE_HERDR, "pane", "get", "w1:p1"], {
        timeoutMs: 10_000,
        env: { HERDR_SOCKET_PATH: server.socket },
      });
      assert.equal(cli.code, 0, cli.stderr);
      assert.match(
        cli.stdout,
        /^\{"id":"cli:pane:get","result":\{"pane":\{"agent_status":"unknown","cwd":"[^"]+","focused":true,"pane_id":"w1:p1","revision":0,"scroll":\{"max_offset_from_bottom":0,"offset_from_bottom":0,"viewport_rows":40\},"tab_id":"w1:t1","terminal_id":"term_1","workspace_id":"w1"\},"type":"pane_info"\}\}\n$/,
      );
    } finally {
      await server.close();
    }
  },
);
