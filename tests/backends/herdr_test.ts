/**
 * The herdr backend through the CLI: against a fake runner (exact argv, error table, version gate,
 * binary and socket resolution; no socket answers), the typed launch line against real shells,
 * and the backend against the fake herdr CLI (`tests/fakes/bin/herdr`: quirks and faults; the
 * socket the fixture names has no server, so `auto` falls back to the CLI). The socket transport
 * is in `herdr_socket_test.ts`. herdr cannot run here: nothing in this file touches a real herdr.
 */

import type { FullConfig } from "../helpers/config.ts";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { dirname } from "node:path";
import semver from "semver";
import { createHerdrBackend } from "../../backends/herdr/backend.ts";
import { HERDR_MIN_VERSION } from "../../backends/herdr/_traits.ts";
import { LAUNCH_LINE, LAUNCH_VAR, launchCommand } from "../../backends/herdr/_launch.ts";
import {
  OkSchema,
  PaneListSchema,
  PaneResultSchema,
  parseErrorLine,
  parseHerdrVersion,
  parseResult,
} from "../../backends/herdr/_parse.ts";
import type { BackendDeps, SpawnRequest } from "../../lib/backend/backend.ts";
import { createRealClock, waitFor } from "../../lib/sys/clock.ts";
import { isMuxError, MuxError } from "../../lib/sys/errors.ts";
import { createRunner } from "../../lib/sys/exec.ts";
import { type PaneId, validatePaneId, validateText } from "../../lib/sys/validate.ts";
import type { UnixRequester } from "../../backends/herdr/_socket.ts";
import { createFakeRunner, type FakeRunner } from "../fakes/fake_runner.ts";
import { recordedLaunches, writeStandIn } from "../helpers/stand_in.ts";
import { deps, inside, SOCKET } from "./_herdr_deps.ts";
import { request } from "./_spawn_request.ts";
import { startFakeHerdr } from "./herdr_fixture.ts";
import { type Requirement, requires, tool, which } from "../helpers/requires.ts";
import { runTag } from "../helpers/run_tag.ts";
import { forgedPaneId } from "../helpers/ids.ts";
import { cutHungCall, PATIENT_TIMEOUT_MS } from "../helpers/hung_call.ts";
import { silentLogger } from "../../lib/sys/log.ts";

const clock = createRealClock();
/** No herdr socket answers here: every command goes through the fake runner. */
const noSocket: UnixRequester = () =>
  Promise.resolve({ ok: false, reason: "unreachable", sent: false, detail: "ENOENT" });

const herdrBackend = (d: BackendDeps<FullConfig>) =>
  createHerdrBackend(d, { unixRequest: noSocket });

const pane = (id: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    id: "cli:pane:split",
    result: { pane: { agent_status: "unknown", pane_id: id, ...extra }, type: "pane_info" },
  });
const apiError = (code: string, message: string, id = "cli:pane:get") =>
  JSON.stringify({ error: { code, message }, id });

/** A fake runner answering a healthy 0.9.1 whose split opens `newId`. */
function healthy(newId = "w1:p2", cmd: string[] = ["herdr"]): FakeRunner {
  return createFakeRunner()
    .on(["herdr", "--version"], { stdout: "herdr 0.9.1\n" })
    .onPrefix([...cmd, "pane", "split"], { stdout: pane(newId) })
    .onPrefix([...cmd, "pane", "process-info"], {
      stdout: JSON.stringify({
        id: "cli:pane:process_info",
        result: { process_info: { pane_id: newId, shell_pid: 4321 }, type: "pane_process_info" },
      }),
    })
    .onPrefix([...cmd, "pane", "run"], {})
    .onPrefix([...cmd, "pane", "rename"], { stdout: pane(newId, { label: "fix the bug" }) });
}

Deno.test("parseHerdrVersion() reads releases and previews, and refuses other text", () => {
  assert.equal(parseHerdrVersion("herdr 0.9.1\n"), "0.9.1");
  assert.equal(
    parseHerdrVersion("herdr 0.8.0-preview.2026-08-04-d78e3d3b5126"),
    "0.8.0-preview.2026-08-04-d78e3d3b5126",
  );
  assert.equal(parseHerdrVersion("zellij 0.9.1"), null);
  assert.equal(parseHerdrVersion("herdr 0.9"), null);
});

Deno.test("parseErrorLine() reads sorted and struct-order error lines, nothing else", () => {
  assert.deepEqual(
    parseErrorLine(
      '{"error":{"code":"pane_not_found","message":"pane w9:p9 not found"},"id":"cli:pane:get"}\n',
    ),
    { code: "pane_not_found", message: "pane w9:p9 not found" },
  );
  assert.equal(
    parseErrorLine(
      '{"id":"cli:pane:current","error":{"code":"server_not_running","message":"no herdr server"}}',
    )?.code,
    "server_not_running",
  );
  assert.equal(parseErrorLine("usage: herdr pane get <pane_id>"), null);
  assert.equal(parseErrorLine('Error: Os { code: 2, kind: NotFound, message: "x" }'), null);
});

Deno.test("herdr spawn() splits the anchor, passes the command by --env and credentials in a private file, types one constant line", async () => {
  const run = healthy().onPrefix(["herdr", "pane", "close"], {
    stdout: '{"id":"cli:pane:close","result":{"type":"ok"}}',
  });
  const state = Deno.makeTempDirSync({ prefix: "muxbridge-herdr-state-" });
  const backend = herdrBackend(deps(run, { state_dir: state }));
  const password = "--help $(x) 'q'";
  const spawned = await backend.spawn(request({ env: { OPENCODE_SERVER_PASSWORD: password } }));
  assert.deepEqual(spawned, { paneId: "w1:p2", pid: 4321 });
  const split = run.calls[1].argv;
  const launch = split.at(-1)!;
  const m = /^MUXBRIDGE_LAUNCH=unset MUXBRIDGE_LAUNCH; \. '([^']+\.env)'; rm -f -- '\1'; exec /
    .exec(launch);
  assert.ok(m, launch);
  const [, file] = m;
  const dir = `${Deno.realPathSync(state)}/credentials`;
  assert.deepEqual(run.calls.map((c) => c.argv), [
    ["herdr", "--version"],
    [
      "herdr",
      "pane",
      "split",
      "w1:p1",
      "--direction",
      "right",
      "--cwd",
      "/w",
      "--no-focus",
      "--env",
      `${LAUNCH_VAR}=${launchCommand(request().argv, { file })}`,
    ],
    ["herdr", "pane", "process-info", "--pane", "w1:p2"],
    ["herdr", "pane", "run", "w1:p2", LAUNCH_LINE],
    ["herdr", "pane", "rename", "w1:p2", "fix the bug"],
  ]);
  assert.ok(run.calls.every((c) => c.opts.env?.HERDR_SOCKET_PATH === SOCKET));
  assert.ok(
    !run.calls.some((c) => c.argv.some((a) => a.includes(password))),
    "the password is on no argv, typed text included",
  );
  // The file: 0600 in the state directory's 0700 credentials folder, sourced by /bin/sh to
  // exactly the value.
  assert.equal(dirname(file), dir);
  assert.equal(Deno.statSync(dir).mode! & 0o777, 0o700);
  assert.equal(Deno.statSync(file).mode! & 0o777, 0o600);
  const sourced = await new Deno.Command("/bin/sh", {
    args: ["-c", '. "$0"; printf %s "$OPENCODE_SERVER_PASSWORD"', file],
    env: runTag(),
    clearEnv: true,
  }).output();
  assert.equal(new TextDecoder().decode(sourced.stdout), password);
  // Closing the pane removes a file its shell never read.
  await backend.kill(validatePaneId("w1:p2"));
  assert.ok(!existsSync(file));
  Deno.removeSync(state, { recursive: true });
});

Deno.test("herdr spawn() stacks later panes beside the newest one still open", async () => {
  const list = (...ids: string[]) =>
    JSON.stringify({
      id: "cli:pane:list",
      result: { panes: ids.map((pane_id) => ({ pane_id })), type: "pane_list" },
    });
  const run = healthy("w3:pB")
    .on(["herdr", "pane", "list"], { stdout: list("w1:p1", "w3:pB") }, {
      stdout: list("w1:p1"),
    });
  const backend = herdrBackend(deps(run));
  await backend.spawn(request());
  await backend.spawn(request());
  await backend.spawn(request());
  const splits = run.calls.filter((c) => c.argv[2] === "split").map((c) => c.argv.slice(3, 6));
  assert.deepEqual(splits, [
    ["w1:p1", "--direction", "right"],
    ["w3:pB", "--direction", "down"],
    ["w1:p1", "--direction", "right"],
  ]);
  assert.ok(run.calls.some((c) => c.argv.join(" ") === `herdr pane run w3:pB ${LAUNCH_LINE}`));
});

Deno.test("herdr spawn() closes the new pane when typing the launch line fails", async () => {
  const run = healthy()
    .on(["herdr", "pane", "run", "w1:p2", LAUNCH_LINE], {
      code: 1,
      stderr: apiError("pane_send_failed", "write failed", "cli:request"),
    })
    .on(["herdr", "pane", "close", "w1:p2"], {
      stdout: '{"id":"cli:pane:close","result":{"type":"ok"}}',
    });
  await assert.rejects(
    () => herdrBackend(deps(run)).spawn(request()),
    (e) => isMuxError(e, "command_failed") && /pane_send_failed/.test(e.message),
  );
  assert.deepEqual(run.calls.at(-1)?.argv, ["herdr", "pane", "close", "w1:p2"]);
});

Deno.test("herdr spawn() leaves out a title that would read as a flag, and setTitle() refuses it", async () => {
  const run = healthy();
  const backend = herdrBackend(deps(run));
  await backend.spawn(request({ title: "--help" }));
  assert.ok(!run.calls.some((c) => c.argv.includes("rename")));
  await assert.rejects(
    () => backend.setTitle(validatePaneId("w1:p2"), "-x"),
    (e) => isMuxError(e, "invalid_argument"),
  );
  await backend.setTitle(validatePaneId("w1:p2"), "a\u001b]0;pwned\u0007b\u2028c");
  assert.deepEqual(run.calls.at(-1)?.argv, ["herdr", "pane", "rename", "w1:p2", "a]0;pwnedbc"]);
  await backend.setTitle(validatePaneId("w1:p2"), "\u0007");
  assert.deepEqual(run.calls.at(-1)?.argv, ["herdr", "pane", "rename", "w1:p2", "--clear"]);
});

Deno.test("herdr refuses unsafe ids and variables before running anything", async () => {
  const run = createFakeRunner();
  const backend = herdrBackend(deps(run));
  for (const bad of ["", "-t", "--session", "w1:p1 --help", "w1:\np2"]) {
    const id = forgedPaneId(bad);
    await assert.rejects(() => backend.kill(id), (e) => isMuxError(e, "invalid_argument"));
    await assert.rejects(() => backend.interrupt(id), (e) => isMuxError(e, "invalid_argument"));
  }
  const envs: Array<Record<string, string>> = [
    { HERDR_PANE_ID: "x" },
    { [LAUNCH_VAR]: "x" },
    { "A-B": "x" },
    { A: "\0" },
  ];
  for (const env of envs) {
    await assert.rejects(
      () => backend.spawn(request({ env })),
      (e) => isMuxError(e, "invalid_argument"),
    );
  }
  assert.equal(run.calls.length, 0);
});

Deno.test("herdr maps its error codes through one table", async () => {
  const cases: Array<[string, string]> = [
    ["pane_not_found", "pane_not_found"],
    ["server_not_running", "backend_unreachable"],
    ["protocol_mismatch", "unsupported_version"],
    ["invalid_key", "command_failed"],
    ["confirmation_required", "command_failed"],
  ];
  for (const [herdrCode, code] of cases) {
    const run = createFakeRunner()
      .on(["herdr", "--version"], { stdout: "herdr 0.9.1" })
      .on(["herdr", "pane", "close", "w1:p2"], { code: 1, stderr: apiError(herdrCode, "m") });
    await assert.rejects(
      () => herdrBackend(deps(run)).kill(validatePaneId("w1:p2")),
      (e) => isMuxError(e) && e.code === code,
      herdrCode,
    );
  }
  const usage = createFakeRunner()
    .on(["herdr", "--version"], { stdout: "herdr 0.9.1" })
    .on(["herdr", "pane", "close", "w1:p2"], { code: 2, stderr: "usage: herdr pane close <id>\n" });
  await assert.rejects(
    () => herdrBackend(deps(usage)).kill(validatePaneId("w1:p2")),
    (e) => isMuxError(e, "command_failed") && /usage: herdr pane close/.test(e.message),
  );
});

Deno.test("herdr inspect() returns null for pane_not_found and the label as title", async () => {
  const run = createFakeRunner()
    .on(["herdr", "--version"], { stdout: "herdr 0.9.1" })
    .on(["herdr", "pane", "get", "w9:p9"], {
      code: 1,
      stderr: apiError("pane_not_found", "pane w9:p9 not found"),
    })
    .on(["herdr", "pane", "get", "w1:pZ"], { stdout: pane("w1:pZ", { label: "t" }) });
  const backend = herdrBackend(deps(run));
  assert.equal(await backend.inspect(validatePaneId("w9:p9")), null);
  assert.deepEqual(await backend.inspect(validatePaneId("w1:pZ")), {
    paneId: "w1:pZ",
    dead: false,
    title: "t",
  });
});

Deno.test("herdr gates the version at 0.8.2 and refuses previews of it", async () => {
  for (
    const [text, ok] of [
      ["herdr 0.8.1", false],
      ["herdr 0.8.2-preview.2026-08-04-d78e3d3b5126", false],
      ["herdr 0.8.2", true],
      ["herdr 0.9.2-preview.1", true],
    ] as const
  ) {
    const run = createFakeRunner()
      .on(["herdr", "--version"], { stdout: `${text}\n` })
      .on(["herdr", "pane", "list"], {
        stdout: '{"id":"cli:pane:list","result":{"panes":[],"type":"pane_list"}}',
      });
    const probe = herdrBackend(deps(run)).probe();
    if (ok) await probe;
    else {
      await assert.rejects(() => probe, (e) => {
        assert.ok(isMuxError(e, "unsupported_version"));
        assert.match(e.message, new RegExp(`is too old, need >= ${HERDR_MIN_VERSION}$`));
        return true;
      });
    }
  }
});

Deno.test("herdr resolves herdr.bin, else HERDR_BIN_PATH, else herdr on PATH", async () => {
  const missing = new MuxError("binary_not_found", "program not found");
  const version = { stdout: "herdr 0.9.1" };
  const list = { stdout: '{"id":"cli:pane:list","result":{"panes":[],"type":"pane_list"}}' };
  // HERDR_BIN_PATH names a binary that is gone: fall back to PATH.
  const fallback = createFakeRunner()
    .on(["/gone/herdr", "--version"], missing)
    .on(["herdr", "--version"], version)
    .on(["herdr", "pane", "list"], list);
  assert.equal(
    (await herdrBackend(deps(fallback, {}, { identity: inside({ binPath: "/gone/herdr" }) }))
      .probe())
      .binary,
    "herdr",
  );
  const fromEnv = createFakeRunner()
    .on(["/opt/herdr", "--version"], version)
    .on(["/opt/herdr", "pane", "list"], list);
  await herdrBackend(deps(fromEnv, {}, { identity: inside({ binPath: "/opt/herdr" }) })).probe();
  const configured = createFakeRunner()
    .on(["/cfg/herdr", "--version"], missing);
  await assert.rejects(
    () =>
      herdrBackend(
        deps(configured, { herdr: { bin: "/cfg/herdr" } }, {
          identity: inside({ binPath: "/opt/herdr" }),
        }),
      )
        .probe(),
    (e) => isMuxError(e, "binary_not_found") && /0\.8\.2/.test(e.hint ?? ""),
  );
  assert.equal(configured.calls.length, 1, "a configured binary is used alone");
});

Deno.test("herdr honours herdr.session (--session first, no foreign anchor) and herdr.socket_path", async () => {
  const run = healthy("w1:p2", ["herdr", "--session", "work"]);
  await herdrBackend(deps(run, { herdr: { session: "work" } })).spawn(request());
  const split = run.calls.find((c) => c.argv.includes("split"))!.argv;
  assert.deepEqual(split.slice(0, 6), [
    "herdr",
    "--session",
    "work",
    "pane",
    "split",
    "--direction",
  ]);
  const sock = healthy();
  await herdrBackend(deps(sock, { herdr: { socket_path: "/tmp/other.sock" } })).spawn(
    request(),
  );
  assert.ok(sock.calls.every((c) => c.opts.env?.HERDR_SOCKET_PATH === "/tmp/other.sock"));
  assert.ok(!sock.calls.some((c) => c.argv.includes("w1:p1")), "w1:p1 belongs to another server");
});

Deno.test("herdr applyLayout() is an honest no-op", async () => {
  const run = createFakeRunner();
  const backend = herdrBackend(deps(run));
  assert.equal(backend.capabilities.layout, false);
  const result = await backend.applyLayout({ layout: "tiled", mainPaneSize: 60, panes: [] });
  assert.equal(result.applied, false);
  assert.equal(run.calls.length, 0);
});

// ---- the typed line against real shells ----

const hostile = [
  "it's",
  "$(touch /tmp/pwned)",
  "`id`",
  "a\\b",
  '"q"',
  "--help",
  "; exit 3",
  "tab\there",
  "new\nline",
  "",
  "*",
  "~",
  "$HOME",
  "é ✓",
];

for (const name of ["sh", "dash", "bash", "fish"]) {
  const shell = which(name) ?? name;
  Deno.test({
    name: `herdr LAUNCH_LINE typed into ${name} runs exactly the argv from ${LAUNCH_VAR}`,
    ...requires(`herdr's launch line under ${name}`, [tool(name, `apt-get install -y ${name}`)]),
    async fn() {
      const dir = await Deno.makeTempDir({ prefix: "muxbridge-launch-" });
      try {
        const recorder = `${dir}/record`;
        await Deno.writeTextFile(
          recorder,
          `#!/bin/sh\nfor a in "$@"; do printf '%s\\0' "$a"; done > "${dir}/argv"\nprintf '%s' "\${${LAUNCH_VAR}-unset}" > "${dir}/leak"\n`,
        );
        await Deno.chmod(recorder, 0o755);
        validateText("launch line", LAUNCH_LINE);
        const result = await createRunner()([shell, "-c", LAUNCH_LINE], {
          timeoutMs: 10_000,
          cwd: dir,
          env: { [LAUNCH_VAR]: launchCommand([recorder, ...hostile]), HOME: dir },
        });
        assert.equal(result.code, 0, result.stderr);
        const argv = (await Deno.readTextFile(`${dir}/argv`)).split("\0").slice(0, -1);
        assert.deepEqual(argv, hostile);
        assert.equal(await Deno.readTextFile(`${dir}/leak`), "unset", "the variable is unset");
        assert.ok(!existsSync("/tmp/pwned"));
      } finally {
        await Deno.remove(dir, { recursive: true });
      }
    },
  });
}

// ---- against the fake herdr CLI ----

const fakeTest = (name: string, fn: () => Promise<void>, need: readonly Requirement[] = []) =>
  Deno.test({ name, ...requires(name, need), fn });

async function spawnStandIn(
  backend: ReturnType<typeof createHerdrBackend>,
  dir: string,
  extra: Partial<SpawnRequest> = {},
) {
  const progDir = await Deno.makeTempDir({ dir, prefix: "prog-" });
  const standIn = await writeStandIn(progDir);
  const argv = [
    standIn,
    "attach",
    "http://127.0.0.1:4096",
    "--session",
    "ses_abc",
    "--dir",
    progDir,
  ];
  const spawned = await backend.spawn(request({ argv, cwd: progDir, ...extra }));
  const started = await waitFor(clock, async () => (await recordedLaunches(progDir)).length > 0, {
    deadline: clock.now() + 8000,
    maxIntervalMs: 50,
  });
  assert.ok(started, "the pane program started");
  return { ...spawned, progDir, launch: (await recordedLaunches(progDir))[0] };
}

fakeTest(
  "herdr (fake CLI) with fish as the user's shell: hostile argv and password arrive byte for byte",
  async () => {
    const server = await startFakeHerdr({ shell: which("fish") ?? "fish" });
    try {
      const backend = server.backend();
      const progDir = await Deno.makeTempDir({ dir: server.dir, prefix: "prog-" });
      const standIn = await writeStandIn(progDir);
      const password = "p@ss 'word' $(nope) \\ \"";
      const { paneId, pid } = await backend.spawn(request({
        title: "fix 'it' $(now)",
        argv: [standIn, ...hostile.slice(0, 9), "--dir", progDir],
        cwd: progDir,
        env: { OPENCODE_SERVER_PASSWORD: password },
      }));
      assert.ok(
        await waitFor(clock, async () => (await recordedLaunches(progDir)).length > 0, {
          deadline: clock.now() + 8000,
        }),
      );
      const launch = (await recordedLaunches(progDir))[0];
      assert.deepEqual(launch.argv, [...hostile.slice(0, 9), "--dir", progDir]);
      assert.equal(launch.password, password);
      assert.equal(pid, launch.pid, "the pane's shell exec'd into the program");
      assert.equal((await backend.inspect(paneId))?.title, "fix 'it' $(now)");
      const run = (await server.calls()).find((a) => a[1] === "run")!;
      assert.deepEqual(run, ["pane", "run", paneId, LAUNCH_LINE]);
      assert.ok(
        !(await server.calls()).some((a) => a.join("").includes("p@ss")),
      );
    } finally {
      await server.close();
    }
  },
  [tool("fish", "apt-get install -y fish")],
);

fakeTest("herdr (fake CLI) ids with letters stay strings: w1:p9, w1:pA, w1:pB", async () => {
  const server = await startFakeHerdr();
  try {
    await server.update((s) => (s.workspaces.w1.nextPane = 9));
    const backend = server.backend();
    const ids: PaneId[] = [];
    for (let i = 0; i < 3; i++) ids.push((await spawnStandIn(backend, server.dir)).paneId);
    assert.deepEqual(ids, ["w1:p9", "w1:pA", "w1:pB"]);
    const panes = (await server.state()).panes;
    assert.deepEqual(
      panes.filter((p) => p.pane_id !== "w1:p1").map((p) => [p.pane_id, p.anchor, p.direction]),
      [["w1:p9", "w1:p1", "right"], ["w1:pA", "w1:p9", "down"], ["w1:pB", "w1:pA", "down"]],
    );
    assert.ok(panes.find((p) => p.pane_id === "w1:p1")?.focused, "the user's pane keeps focus");
    for (const id of ids) await backend.kill(id);
  } finally {
    await server.close();
  }
});

fakeTest(
  "herdr (fake CLI) server and protocol problems are backend_unreachable and unsupported_version, with hints",
  async () => {
    const server = await startFakeHerdr();
    try {
      for (
        const flags of [{ herdr: { socket_path: `${server.dir}/nope.sock` } }, {
          herdr: { session: "elsewhere" },
        }]
      ) {
        const backend = server.backend(flags);
        await assert.rejects(
          () => backend.probe(),
          (e) =>
            isMuxError(e, "backend_unreachable") && /no herdr server is running/.test(e.message),
        );
        const checks = await backend.doctor();
        const check = checks.find((c) => c.name === "herdr server");
        assert.equal(check?.status, "fail");
        assert.ok(check?.hint);
      }
      await server.update((s) => (s.serverProtocol = 23));
      await assert.rejects(
        () => server.backend().probe(),
        (e) => isMuxError(e, "unsupported_version") && /protocol/.test(e.message),
      );
    } finally {
      await server.close();
    }
  },
);

fakeTest(
  "herdr (fake CLI) faults: hang → timed_out then recovers, crash, garbage, missing, old",
  async () => {
    const server = await startFakeHerdr();
    try {
      // Only the hung call is cut short (a slow healthy call under load is no fault).
      const backend = server.backend(
        { command_timeout_ms: PATIENT_TIMEOUT_MS },
        server.identity(),
        silentLogger,
        { run: cutHungCall(server.runner, () => server.env.FAKE_HERDR_FAULT) },
      );
      await backend.probe();
      server.env.FAKE_HERDR_FAULT = "hang:get";
      await assert.rejects(
        () => backend.inspect(validatePaneId("w1:p1")),
        (e) => isMuxError(e, "timed_out"),
      );
      server.env.FAKE_HERDR_FAULT = "crash:close";
      await assert.rejects(
        () => backend.kill(validatePaneId("w1:p1")),
        (e) => isMuxError(e, "command_failed") && e.exitCode === 139,
      );
      server.env.FAKE_HERDR_FAULT = "garbage:split";
      await assert.rejects(
        () => backend.spawn(request({ cwd: server.dir })),
        (e) => isMuxError(e, "unparseable_output"),
      );
      delete server.env.FAKE_HERDR_FAULT;
      assert.equal(
        (await backend.inspect(validatePaneId("w1:p1")))?.paneId,
        "w1:p1",
        "works again",
      );
      const missing = server.backend({ herdr: { bin: `${server.dir}/no-herdr` } });
      await assert.rejects(() => missing.probe(), (e) => isMuxError(e, "binary_not_found"));
      assert.equal((await missing.doctor())[0].status, "fail");
      await server.update((s) => (s.version = "0.8.1"));
      await assert.rejects(
        () => server.backend().probe(),
        (e) =>
          isMuxError(e, "unsupported_version") &&
          e.message === "herdr 0.8.1 is too old, need >= 0.8.2",
      );
    } finally {
      await server.close();
    }
  },
);

fakeTest(
  "herdr (fake CLI) a pane whose launch line cannot be typed is closed, not left as a shell",
  async () => {
    const server = await startFakeHerdr();
    try {
      server.env.FAKE_HERDR_FAULT = "crash:run";
      await assert.rejects(
        () => server.backend().spawn(request({ cwd: server.dir })),
        (e) => isMuxError(e, "command_failed"),
      );
      delete server.env.FAKE_HERDR_FAULT;
      assert.deepEqual((await server.state()).panes.map((p) => p.pane_id), ["w1:p1"]);
    } finally {
      await server.close();
    }
  },
);

fakeTest(
  "herdr (fake CLI) a program that exits closes its pane: inspect() sees it gone",
  async () => {
    const server = await startFakeHerdr();
    try {
      const backend = server.backend();
      const { paneId, launch } = await spawnStandIn(backend, server.dir);
      await backend.interrupt(paneId);
      assert.ok(
        await waitFor(clock, async () => (await backend.inspect(paneId)) === null, {
          deadline: clock.now() + 5000,
        }),
      );
      const stat = await Deno.readTextFile(`/proc/${launch.pid}/stat`).catch(() => "gone");
      assert.ok(stat === "gone" || / Z /.test(stat), "the program ended");
    } finally {
      await server.close();
    }
  },
);

Deno.test("herdr parsers accept the fixtures of tests/testdata/herdr", async () => {
  const read = (name: string) =>
    Deno.readTextFile(new URL(`../testdata/herdr/${name}`, import.meta.url));
  assert.equal(parseHerdrVersion(await read("version.txt")), "0.9.1");
  assert.ok(semver.lt(parseHerdrVersion(await read("version_preview.txt"))!, HERDR_MIN_VERSION));
  assert.equal(
    parseResult(await read("pane_split.stdout"), PaneResultSchema, "split").result.pane.pane_id,
    "w1:p2",
  );
  assert.deepEqual(
    parseResult(await read("pane_list.stdout"), PaneListSchema, "list").result.panes.map((p) =>
      p.pane_id
    ),
    ["w1:p1", "w1:p3"],
  );
  parseResult(await read("pane_close.stdout"), OkSchema, "close");
  for (
    const [file, code] of [
      ["error_pane_not_found.stderr", "pane_not_found"],
      ["error_server_not_running.stderr", "server_not_running"],
      ["error_protocol_mismatch.stderr", "protocol_mismatch"],
    ]
  ) {
    assert.equal(parseErrorLine(await read(file))?.code, code);
  }
});
