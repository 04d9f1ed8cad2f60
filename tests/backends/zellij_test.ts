/**
 * The zellij backend against a fake runner (exact argv, version gating, error mapping) and
 * against the fake zellij CLI (`tests/fakes/bin/zellij`: quirks and fault modes). zellij cannot
 * run here: nothing in this file touches a real zellij.
 */

import assert from "node:assert/strict";
import { createZellijBackend } from "../../backends/zellij/backend.ts";
import { ZELLIJ_MIN_VERSION } from "../../backends/zellij/_traits.ts";
import { parseNewPaneId, parsePaneList, parseZellijVersion } from "../../backends/zellij/_parse.ts";
import type { BackendDeps, SpawnRequest } from "../../lib/backend/backend.ts";
import { createRealClock, waitFor } from "../../lib/sys/clock.ts";
import { closePane } from "../../lib/session/close_pane.ts";
import type { ConfigLayer } from "../../lib/config/config.ts";
import { type FullConfig, resolveConfig } from "../helpers/config.ts";
import { isMuxError, MuxError } from "../../lib/sys/errors.ts";
import type { Identity } from "../../lib/backend/identity.ts";
import { silentLogger } from "../../lib/sys/log.ts";
import type { OutMessage } from "../../lib/bridge/protocol.ts";
import { SessionLoop } from "../../lib/session/loop.ts";
import { createFakeRunner, type FakeRunner } from "../fakes/fake_runner.ts";
import type { Runner } from "../../lib/sys/exec.ts";
import { createMemoryStore, fakeProcesses } from "../fakes/memory_store.ts";
import { recordedLaunches, writeStandIn } from "../helpers/stand_in.ts";
import { request } from "./_spawn_request.ts";
import { FAKE_SESSION, FAKE_ZELLIJ, insideSession, startFakeZellij } from "./zellij_fixture.ts";
import { validatePaneId, validateSessionId } from "../../lib/sys/validate.ts";
import { forgedPaneId } from "../helpers/ids.ts";
import { cutHungCall, PATIENT_TIMEOUT_MS } from "../helpers/hung_call.ts";
import { runTag } from "../helpers/run_tag.ts";

const clock = createRealClock();
const S = ["zellij", "--session", FAKE_SESSION, "action"];
const LIST = [...S, "list-panes", "--json", "--all"];

function deps(
  run: FakeRunner,
  flags: ConfigLayer = {},
  identity = insideSession(),
): BackendDeps<FullConfig> {
  return {
    run: run.run,
    env: () => undefined,
    clock,
    config: resolveConfig({ env: () => undefined, flags: { backend: "zellij", ...flags } }),
    identity,
    log: silentLogger,
  };
}

/** `list-panes --json` text for terminal panes `[id, title, tab]` plus the tab-bar plugin. */
function listJson(...panes: Array<[number, string, number?]>): string {
  return JSON.stringify([
    ...panes.map(([id, title, tab]) => ({
      id,
      is_plugin: false,
      is_focused: id === 0,
      title,
      exited: false,
      is_held: false,
      tab_id: tab ?? 0,
    })),
    { id: 1, is_plugin: true, is_focused: false, title: "tab-bar", exited: false, tab_id: 0 },
  ]);
}

const NEW_PANE_TAIL = [
  "--name=fix the bug",
  "--cwd=/w",
  "--close-on-exit",
];
const ATTACH = ["--", ...request().argv];

Deno.test("parseZellijVersion() reads release, short and suffixed versions and refuses others", () => {
  assert.equal(parseZellijVersion("zellij 0.44.1\n"), "0.44.1");
  assert.equal(parseZellijVersion("zellij 0.45"), "0.45.0");
  assert.equal(parseZellijVersion("zellij 0.45.0-dev+abc"), "0.45.0");
  assert.equal(parseZellijVersion("tmux 3.3a"), null);
  assert.equal(parseZellijVersion(""), null);
});

Deno.test("parseNewPaneId() takes terminal_N, reads silence as unknown and refuses the rest", () => {
  assert.equal(parseNewPaneId("terminal_5\n"), "terminal_5");
  assert.equal(parseNewPaneId("\n"), null);
  for (const bad of ["plugin_2", "5", "terminal_", "Error: no"]) {
    assert.throws(() => parseNewPaneId(bad), (e) => isMuxError(e, "unparseable_output"));
  }
});

Deno.test("parsePaneList() keeps terminal panes of the fixture and marks held ones dead", async () => {
  const text = await Deno.readTextFile(
    new URL("../testdata/zellij/list_panes.stdout", import.meta.url),
  );
  const panes = parsePaneList(text);
  assert.deepEqual(panes.map((p) => [p.paneId, p.tabId, p.dead, p.focused]), [
    ["terminal_0", 0, false, true],
    ["terminal_5", 0, false, false],
    ["terminal_6", 1, true, false],
  ]);
  assert.throws(() => parsePaneList("[{]"), (e) => isMuxError(e, "unparseable_output"));
  assert.throws(() => parsePaneList('{"id":1}'), (e) => isMuxError(e, "unparseable_output"));
});

Deno.test("zellij spawn() on 0.44.1 opens the pane in the caller's tab by argv, then renames it", async () => {
  const run = createFakeRunner()
    .on(["zellij", "--version"], { stdout: "zellij 0.44.1\n" })
    .on(LIST, { stdout: listJson([0, "~", 3]) })
    .on(
      [
        ...S,
        "new-pane",
        "--tab-id",
        "3",
        "--direction",
        "right",
        ...NEW_PANE_TAIL,
        ...ATTACH,
      ],
      { stdout: "terminal_5\n" },
    )
    .on([...S, "rename-pane", "-p", "terminal_5", "--", "fix the bug"], {});
  const backend = createZellijBackend(deps(run));
  assert.deepEqual(await backend.spawn(request()), { paneId: "terminal_5" });
  assert.equal(run.calls.length, 4);
  assert.equal(backend.capabilities.focusSafe, false, "0.44.1 has no --no-focus");
});

Deno.test("zellij spawn() adds --no-focus from 0.45.0 and splits down for main-horizontal", async () => {
  const run = createFakeRunner()
    .on(["zellij", "--version"], { stdout: "zellij 0.45.0\n" })
    .on(LIST, { stdout: listJson([0, "~"]) })
    .on(
      [
        ...S,
        "new-pane",
        "--tab-id",
        "0",
        "--direction",
        "down",
        ...NEW_PANE_TAIL,
        "--no-focus",
        ...ATTACH,
      ],
      { stdout: "terminal_7\n" },
    )
    .onPrefix([...S, "rename-pane"], {});
  const backend = createZellijBackend(deps(run, { layout: "main-horizontal" }));
  assert.equal((await backend.spawn(request())).paneId, "terminal_7");
  assert.equal(backend.capabilities.focusSafe, true);
});

Deno.test("zellij spawn() passes a hostile title and directory as single --opt=value elements", async () => {
  const title = "-n $(rm -rf ~) `x` 'q' \"d\" ; --close-on-exit";
  const cwd = "/tmp/a dir/-x";
  const run = createFakeRunner()
    .on(["zellij", "--version"], { stdout: "zellij 0.45.0" })
    .on(LIST, { stdout: listJson([0, "~"]) })
    .onPrefix([...S, "new-pane"], { stdout: "terminal_2" })
    .onPrefix([...S, "rename-pane"], {});
  await createZellijBackend(deps(run)).spawn(request({ title: `${title}\u001b]0;x\u0007`, cwd }));
  const open = run.calls[2].argv;
  assert.ok(
    open.includes(`--name=${title}]0;x`),
    "title cleaned of control characters, one element",
  );
  assert.ok(open.includes(`--cwd=${cwd}`));
  assert.deepEqual(run.calls[3].argv.slice(-2), ["--", `${title}]0;x`]);
});

Deno.test("zellij spawn() finds the new pane by listing when new-pane prints nothing", async () => {
  const run = createFakeRunner()
    .on(["zellij", "--version"], { stdout: "zellij 0.45.0" })
    .on(
      LIST,
      { stdout: listJson([0, "~"]) },
      { stdout: listJson([0, "~"], [4, "someone else's", 1], [9, "fix the bug"]) },
    )
    .onPrefix([...S, "new-pane"], { stdout: "" })
    .onPrefix([...S, "rename-pane"], {});
  assert.equal((await createZellijBackend(deps(run)).spawn(request())).paneId, "terminal_9");
  assert.equal(run.calls.filter((c) => c.argv.includes("new-pane")).length, 1);
});

Deno.test("zellij spawn() retries once without --direction when a crowded tab drops the split", async () => {
  const run = createFakeRunner()
    .on(["zellij", "--version"], { stdout: "zellij 0.45.0" })
    .on(LIST, { stdout: listJson([0, "~"]) })
    .onPrefix([...S, "new-pane", "--tab-id", "0", "--direction"], { stdout: "" })
    .onPrefix([...S, "new-pane", "--tab-id", "0", "--name=fix the bug"], { stdout: "terminal_3" })
    .onPrefix([...S, "rename-pane"], {});
  assert.equal((await createZellijBackend(deps(run)).spawn(request())).paneId, "terminal_3");
  assert.equal(run.calls.filter((c) => c.argv.includes("new-pane")).length, 2);
});

Deno.test("zellij spawn() reports no_space when neither split opened anything", async () => {
  const run = createFakeRunner()
    .on(["zellij", "--version"], { stdout: "zellij 0.45.0" })
    .on(LIST, { stdout: listJson([0, "~"]) })
    .onPrefix([...S, "new-pane"], { stdout: "" });
  await assert.rejects(
    () => createZellijBackend(deps(run)).spawn(request()),
    (e) => isMuxError(e, "no_space"),
  );
  assert.equal(run.calls.filter((c) => c.argv.includes("new-pane")).length, 2, "one retry only");
});

Deno.test("zellij spawn() hands credentials over in a private 0600 file the pane's /bin/sh reads and removes, never on argv", async () => {
  const state = await Deno.makeTempDir({ prefix: "muxbridge-zellij-state-" });
  try {
    const password = "p@ss 'x' $(no) --help";
    let file = "";
    const run = createFakeRunner()
      .on(["zellij", "--version"], { stdout: "zellij 0.45.0\n" })
      .on(LIST, { stdout: listJson([0, "~"]) }, { stdout: listJson([0, "~"], [5, "fix the bug"]) })
      .onPrefix([...S, "new-pane"], async (argv) => {
        // The program: /bin/sh reads the file (its path as $0), removes it, then execs argv.
        const program = argv.slice(argv.indexOf("--") + 1);
        assert.deepEqual(program.slice(0, 3), [
          "/bin/sh",
          "-c",
          '. "$0"; rm -f -- "$0"; exec "$@"',
        ]);
        file = program[3];
        assert.deepEqual(program.slice(4), request().argv);
        const st = await Deno.lstat(file);
        assert.ok(st.isFile);
        assert.equal(st.mode! & 0o777, 0o600);
        assert.equal((await Deno.stat(`${state}/credentials`)).mode! & 0o777, 0o700);
        return { stdout: "terminal_5\n" };
      })
      .onPrefix([...S, "rename-pane"], {})
      .onPrefix([...S, "close-pane"], {});
    const backend = createZellijBackend(deps(run, { state_dir: state }));
    assert.equal(backend.capabilities.env, true);
    const spawned = await backend.spawn(request({ env: { OPENCODE_SERVER_PASSWORD: password } }));
    assert.deepEqual(spawned, { paneId: "terminal_5" });
    assert.ok(file.startsWith(`${await Deno.realPath(state)}/credentials/`), file);
    assert.ok(
      !run.calls.some((c) => c.argv.some((a) => a.includes("p@ss"))),
      "the password is on no argv",
    );
    // What /bin/sh gets from the file is exactly the value.
    const sourced = await new Deno.Command("/bin/sh", {
      args: ["-c", '. "$0"; printf %s "$OPENCODE_SERVER_PASSWORD"', file],
      clearEnv: true,
      env: runTag(),
    }).output();
    assert.equal(new TextDecoder().decode(sourced.stdout), password);
    // The pane's program never ran here: closing the pane removes the file.
    await backend.kill(validatePaneId("terminal_5"));
    await assert.rejects(() => Deno.lstat(file), Deno.errors.NotFound);
  } finally {
    await Deno.remove(state, { recursive: true });
  }
});

Deno.test("zellij spawn() removes the credentials file when no pane opened", async () => {
  const state = await Deno.makeTempDir({ prefix: "muxbridge-zellij-state-" });
  try {
    const run = createFakeRunner()
      .on(["zellij", "--version"], { stdout: "zellij 0.45.0\n" })
      .on(LIST, { stdout: listJson([0, "~"]) })
      .onPrefix([...S, "new-pane"], { stdout: "" });
    const backend = createZellijBackend(deps(run, { state_dir: state }));
    await assert.rejects(
      () => backend.spawn(request({ env: { OPENCODE_SERVER_PASSWORD: "x" } })),
      (e) => isMuxError(e, "no_space"),
    );
    assert.deepEqual([...Deno.readDirSync(`${state}/credentials`)], []);
  } finally {
    await Deno.remove(state, { recursive: true });
  }
});

Deno.test("zellij refuses a session name from ZELLIJ_SESSION_NAME that could leave its socket folder, naming the variable, before running anything", async () => {
  const run = createFakeRunner().on(["zellij", "--version"], { stdout: "zellij 0.45.0\n" });
  const identity: Identity = {
    backend: "zellij",
    layers: [{ backend: "zellij", paneId: "terminal_0", session: "../evil/s" }],
    harness: { name: null },
  };
  const backend = createZellijBackend(deps(run, {}, identity));
  await assert.rejects(() => backend.spawn(request()), (e) => {
    assert.ok(isMuxError(e, "invalid_argument"));
    assert.match(e.message, /^Cannot use ZELLIJ_SESSION_NAME "\.\.\/evil\/s": it holds "\/"/);
    return true;
  });
  assert.ok(!run.calls.some((c) => c.argv.includes("--session")), "no call named the session");
});

Deno.test("zellij spawn() says so when the caller's pane is not in the session", async () => {
  const run = createFakeRunner()
    .on(["zellij", "--version"], { stdout: "zellij 0.45.0" })
    .on(LIST, { stdout: listJson([4, "other"]) });
  await assert.rejects(
    () => createZellijBackend(deps(run)).spawn(request()),
    (e) => isMuxError(e, "pane_not_found") && /terminal_0/.test(e.message) && !!e.hint,
  );
});

Deno.test("zellij refuses versions before 0.44.1 with the version needed, and does nothing else", async () => {
  for (const v of ["0.43.1", "0.44.0"]) {
    const run = createFakeRunner().on(["zellij", "--version"], { stdout: `zellij ${v}\n` });
    const backend = createZellijBackend(deps(run));
    for (
      const op of [
        () => backend.probe(),
        () => backend.spawn(request()),
        () => backend.kill(validatePaneId("terminal_3")),
      ]
    ) {
      await assert.rejects(op, (e) => {
        assert.ok(isMuxError(e, "unsupported_version"));
        assert.equal(e.message, `zellij ${v} is too old, need >= ${ZELLIJ_MIN_VERSION}`);
        return true;
      });
    }
    assert.ok(run.calls.every((c) => c.argv[1] === "--version"), "no action ever ran");
  }
});

Deno.test("zellij addresses zellij.session first, else ZELLIJ_SESSION_NAME, else no --session", async () => {
  const cases: Array<[ConfigLayer, Identity, string[]]> = [
    [{ zellij: { session: "cfg" } }, insideSession(), ["zellij", "--session", "cfg", "action"]],
    [{}, insideSession(), S],
    [{}, { backend: null, layers: [], harness: { name: null } }, ["zellij", "action"]],
  ];
  for (const [flags, identity, prefix] of cases) {
    const run = createFakeRunner()
      .on(["zellij", "--version"], { stdout: "zellij 0.45.0" })
      .onPrefix(prefix, { stdout: listJson([0, "~"]) });
    assert.equal(
      await createZellijBackend(deps(run, flags, identity)).inspect(validatePaneId("terminal_5")),
      null,
    );
    assert.deepEqual(run.calls[1].argv, [...prefix, "list-panes", "--json", "--all"]);
  }
});

Deno.test("zellij interrupt() writes the raw ETX byte, never send-keys", async () => {
  const run = createFakeRunner()
    .on(["zellij", "--version"], { stdout: "zellij 0.45.0" })
    .on(LIST, { stdout: listJson([0, "~"], [5, "t"]) })
    .on([...S, "write", "-p", "terminal_5", "3"], {});
  await createZellijBackend(deps(run)).interrupt(validatePaneId("terminal_5"));
  assert.deepEqual(run.calls.at(-1)?.argv, [...S, "write", "-p", "terminal_5", "3"]);
});

Deno.test("zellij interrupt(), kill() and setTitle() check the pane first: zellij exits 0 on unknown ids", async () => {
  const run = createFakeRunner()
    .on(["zellij", "--version"], { stdout: "zellij 0.45.0" })
    .on(LIST, { stdout: listJson([0, "~"]) });
  const backend = createZellijBackend(deps(run));
  for (
    const op of [
      () => backend.interrupt(validatePaneId("terminal_9")),
      () => backend.kill(validatePaneId("terminal_9")),
      () => backend.setTitle(validatePaneId("terminal_9"), "x"),
    ]
  ) {
    await assert.rejects(op, (e) => isMuxError(e, "pane_not_found"));
  }
  assert.ok(run.calls.every((c) => !c.argv.some((a) => /write|close-pane|rename-pane/.test(a))));
});

Deno.test("zellij refuses ids of another form before running anything", async () => {
  const run = createFakeRunner();
  const backend = createZellijBackend(deps(run));
  for (const bad of ["5", "plugin_1", "%3", "-p", "terminal_1 ", "w1:p1"]) {
    await assert.rejects(
      () => backend.kill(forgedPaneId(bad)),
      (e) => isMuxError(e, "invalid_argument"),
    );
  }
  assert.equal(run.calls.length, 0);
});

Deno.test("zellij maps session failures to backend_unreachable and usage errors to command_failed", async () => {
  const noSession = createFakeRunner()
    .on(["zellij", "--version"], { stdout: "zellij 0.45.0" })
    .on(LIST, { code: 1, stderr: "There is no active session!\n" });
  await assert.rejects(
    () => createZellijBackend(deps(noSession)).probe(),
    (e) => isMuxError(e, "backend_unreachable") && /no active session/.test(e.message) && !!e.hint,
  );
  const usage = createFakeRunner()
    .on(["zellij", "--version"], { stdout: "zellij 0.45.0" })
    .on(LIST, { stdout: listJson([0, "~"], [5, "t"]) })
    .onPrefix([...S, "close-pane"], { code: 2, stderr: "Malformed pane id: x\n" });
  await assert.rejects(
    () => createZellijBackend(deps(usage)).kill(validatePaneId("terminal_5")),
    (e) => isMuxError(e, "command_failed") && e.exitCode === 2,
  );
});

Deno.test("zellij reports a missing binary with a hint", async () => {
  const run = createFakeRunner().on(
    ["zellij", "--version"],
    new MuxError("binary_not_found", 'Cannot run "zellij": program not found'),
  );
  await assert.rejects(
    () => createZellijBackend(deps(run)).probe(),
    (e) => isMuxError(e, "binary_not_found") && /0\.44\.1/.test(e.hint ?? ""),
  );
});

Deno.test("zellij applyLayout() is an honest no-op", async () => {
  const run = createFakeRunner();
  const backend = createZellijBackend(deps(run));
  assert.equal(backend.capabilities.layout, false);
  const result = await backend.applyLayout({ layout: "tiled", mainPaneSize: 60, panes: [] });
  assert.equal(result.applied, false);
  assert.match(result.detail, /no command/);
  assert.equal(run.calls.length, 0);
});

// ---- against the fake zellij CLI ----

const fakeTest = (name: string, fn: () => Promise<void>) => Deno.test({ name, fn });

/** Starts the stand-in `opencode` through the backend and waits for its launch. */
async function spawnStandIn(
  backend: ReturnType<typeof createZellijBackend>,
  dir: string,
  extra: Partial<SpawnRequest> = {},
) {
  const progDir = await Deno.makeTempDir({ dir, prefix: "prog-" });
  const standIn = await writeStandIn(progDir);
  const { paneId } = await backend.spawn(request({
    argv: [standIn, "attach", "http://127.0.0.1:4096", "--session", "ses_abc", "--dir", progDir],
    cwd: progDir,
    ...extra,
  }));
  const started = await waitFor(clock, async () => (await recordedLaunches(progDir)).length > 0, {
    deadline: clock.now() + 5000,
    maxIntervalMs: 50,
  });
  assert.ok(started, "the pane program started");
  return { paneId, progDir, launch: (await recordedLaunches(progDir))[0] };
}

fakeTest(
  "zellij (fake CLI) 0.43.1: refused before any action, so nothing can hit the focused pane",
  async () => {
    const z = await startFakeZellij({ version: "0.43.1" });
    try {
      const backend = z.backend();
      await assert.rejects(
        () => backend.kill(validatePaneId("terminal_0")),
        (e) => isMuxError(e, "unsupported_version"),
      );
      await assert.rejects(() => backend.probe(), (e) => isMuxError(e, "unsupported_version"));
      assert.ok((await z.calls()).every((argv) => argv[0] === "--version"));
      const checks = await backend.doctor();
      assert.equal(checks.find((c) => c.name === "zellij version")?.status, "fail");
    } finally {
      await z.close();
    }
  },
);

fakeTest("zellij (fake CLI) keeps the user's focus from 0.45.0; 0.44.1 cannot", async () => {
  for (const [version, keeps] of [["0.45.0", true], ["0.44.1", false]] as const) {
    const z = await startFakeZellij({ version });
    try {
      const backend = z.backend();
      const { paneId } = await spawnStandIn(backend, z.dir);
      const panes = (await z.state()).sessions[FAKE_SESSION].panes;
      assert.equal(panes.find((p) => p.id === 0)?.focused, keeps, `${version}: anchor focus`);
      assert.equal(backend.capabilities.focusSafe, keeps);
      const newPane = (await z.calls()).find((a) => a.includes("new-pane"))!;
      assert.equal(newPane.includes("--no-focus"), keeps);
      assert.ok(newPane.includes("--tab-id"));
      const doctor = await backend.doctor();
      assert.equal(
        doctor.find((c) => c.name === "zellij version")?.status,
        keeps ? "pass" : "warn",
      );
      await backend.kill(paneId);
    } finally {
      await z.close();
    }
  }
});

fakeTest(
  "zellij (fake CLI) runs the pane with zellij's server environment, not muxbridge's",
  async () => {
    const z = await startFakeZellij();
    try {
      const { launch } = await spawnStandIn(z.backend(), z.dir);
      const env = await Deno.readTextFile(`/proc/${launch.pid}/environ`);
      assert.ok(env.includes(`ZELLIJ_SESSION_NAME=${FAKE_SESSION}\0`));
      assert.ok(
        !env.includes("FAKE_ZELLIJ_STATE="),
        "the caller's environment does not reach panes",
      );
    } finally {
      await z.close();
    }
  },
);

fakeTest(
  "zellij (fake CLI) plain opencode's credentials reach the program, never on an argv, from a 0600 file gone once it started",
  async () => {
    const z = await startFakeZellij();
    try {
      const password = "p@ss 'x' $(no) --help";
      let file = "";
      let mode = 0;
      const run: Runner = async (argv, opts) => {
        const at = argv.indexOf("new-pane");
        if (at > 0) {
          file = argv[argv.indexOf("--") + 4];
          mode = (await Deno.lstat(file)).mode! & 0o777;
        }
        return await z.runner(argv, opts);
      };
      const { launch } = await spawnStandIn(z.backend({}, insideSession(), run), z.dir, {
        env: { OPENCODE_SERVER_PASSWORD: password },
      });
      assert.equal(launch.password, password);
      assert.equal(mode, 0o600);
      assert.match(file, /\/credentials\/[0-9a-f]{24}\.env$/);
      await assert.rejects(() => Deno.lstat(file), Deno.errors.NotFound);
      const calls = await z.calls();
      assert.ok(!calls.some((a) => a.some((v) => v.includes("p@ss"))), "not on zellij's argv");
      const cmdline = await Deno.readTextFile(`/proc/${launch.pid}/cmdline`);
      assert.ok(!cmdline.includes("p@ss"), "not on the program's argv");
    } finally {
      await z.close();
    }
  },
);

fakeTest(
  "zellij (fake CLI) unknown ids: pane_not_found although zellij itself exits 0",
  async () => {
    const z = await startFakeZellij();
    try {
      const backend = z.backend();
      await assert.rejects(
        () => backend.kill(validatePaneId("terminal_99")),
        (e) => isMuxError(e, "pane_not_found"),
      );
      await assert.rejects(
        () => backend.interrupt(validatePaneId("terminal_99")),
        (e) => isMuxError(e, "pane_not_found"),
      );
      // The quirk itself, straight from the fake: exit 0 and nothing printed.
      const raw = await z.runner(
        [FAKE_ZELLIJ, "--session", FAKE_SESSION, "action", "close-pane", "-p", "terminal_99"],
        { timeoutMs: 10_000 },
      );
      assert.deepEqual([raw.code, raw.stdout, raw.stderr], [0, "", ""]);
    } finally {
      await z.close();
    }
  },
);

fakeTest(
  "zellij (fake CLI) crowded tab: the dropped split is retried without --direction",
  async () => {
    const z = await startFakeZellij();
    try {
      z.env.FAKE_ZELLIJ_FAULT = "crowded:new-pane";
      const { paneId } = await spawnStandIn(z.backend(), z.dir);
      const opens = (await z.calls()).filter((a) => a.includes("new-pane"));
      assert.equal(opens.length, 2);
      assert.ok(opens[0].includes("--direction") && !opens[1].includes("--direction"));
      assert.match(paneId, /^terminal_\d+$/);
    } finally {
      await z.close();
    }
  },
);

fakeTest(
  "zellij (fake CLI) a new-pane that prints no id is found by listing before and after",
  async () => {
    const z = await startFakeZellij();
    try {
      z.env.FAKE_ZELLIJ_FAULT = "no-id:new-pane";
      const backend = z.backend();
      const { paneId } = await spawnStandIn(backend, z.dir);
      assert.equal(paneId, "terminal_1");
      assert.equal((await z.calls()).filter((a) => a.includes("new-pane")).length, 1);
      assert.equal((await backend.inspect(paneId))?.title, "fix the bug");
    } finally {
      await z.close();
    }
  },
);

fakeTest(
  "zellij (fake CLI) faults: hang → timed_out, crash → command_failed, garbage → unparseable_output, missing → binary_not_found",
  async () => {
    const z = await startFakeZellij();
    try {
      // Only the hung call is cut short (a slow healthy call under load is no fault).
      const run = cutHungCall(z.runner, () => z.env.FAKE_ZELLIJ_FAULT);
      const backend = z.backend({ command_timeout_ms: PATIENT_TIMEOUT_MS }, insideSession(), run);
      await backend.probe();
      z.env.FAKE_ZELLIJ_FAULT = "hang:list-panes";
      await assert.rejects(
        () => backend.inspect(validatePaneId("terminal_0")),
        (e) => isMuxError(e, "timed_out"),
      );
      z.env.FAKE_ZELLIJ_FAULT = "crash:list-panes";
      await assert.rejects(
        () => backend.inspect(validatePaneId("terminal_0")),
        (e) => isMuxError(e, "command_failed") && e.exitCode === 139,
      );
      z.env.FAKE_ZELLIJ_FAULT = "garbage:list-panes";
      await assert.rejects(
        () => backend.inspect(validatePaneId("terminal_0")),
        (e) => isMuxError(e, "unparseable_output"),
      );
      z.env.FAKE_ZELLIJ_FAULT = "garbage:version";
      await assert.rejects(() => z.backend().probe(), (e) => isMuxError(e, "unparseable_output"));
      delete z.env.FAKE_ZELLIJ_FAULT;
      assert.equal(
        (await backend.inspect(validatePaneId("terminal_0")))?.paneId,
        "terminal_0",
        "works again",
      );
      const missing = z.backend({ zellij: { bin: `${z.dir}/no-such-zellij` } });
      await assert.rejects(() => missing.probe(), (e) => isMuxError(e, "binary_not_found"));
      const checks = await missing.doctor();
      assert.equal(checks[0].status, "fail");
      assert.ok(checks[0].hint);
    } finally {
      await z.close();
    }
  },
);

fakeTest(
  "zellij (fake CLI) a hanging zellij fails one spawn with timed_out and the loop goes on",
  async () => {
    const z = await startFakeZellij();
    try {
      const config = resolveConfig({
        env: () => undefined,
        flags: { backend: "zellij", close_grace_ms: 200, poll_interval_ms: 60_000 },
      });
      const out: OutMessage[] = [];
      const loop = new SessionLoop(
        {
          clock,
          log: silentLogger,
          emit: (m) => out.push(m),
          config,
          store: createMemoryStore(),
          processes: fakeProcesses(),
          owner: "4242:1",
        },
        {
          backend: z.backend(
            { command_timeout_ms: PATIENT_TIMEOUT_MS, opencode_bin: "/bin/sleep" },
            insideSession(),
            cutHungCall(z.runner, () => z.env.FAKE_ZELLIJ_FAULT),
          ),
          serverUrl: "http://127.0.0.1:4096",
          directory: z.dir,
        },
      );
      const child = (id: string) => ({
        kind: "created" as const,
        info: {
          id: validateSessionId(id),
          title: id,
          parentId: validateSessionId("ses_parent"),
          directory: z.dir,
        },
      });
      z.env.FAKE_ZELLIJ_FAULT = "hang:new-pane";
      loop.handle(child("ses_hang"));
      assert.ok(
        await waitFor(clock, () => out.some((m) => m.type === "pane.failed"), {
          deadline: clock.now() + 8000,
        }),
      );
      const failed = out.find((m) => m.type === "pane.failed") as Record<string, unknown>;
      assert.equal(failed.code, "timed_out");
      delete z.env.FAKE_ZELLIJ_FAULT;
      loop.handle(child("ses_next"));
      assert.ok(
        await waitFor(clock, () => out.some((m) => m.type === "pane.opened"), {
          deadline: clock.now() + 8000,
        }),
        `the loop opened the next pane: ${JSON.stringify(out)}`,
      );
      await loop.shutdown(true);
    } finally {
      await z.close();
    }
  },
);

fakeTest(
  "zellij (fake CLI) closePane() closes through write 3, and a pane that went away is gone",
  async () => {
    const z = await startFakeZellij();
    try {
      const backend = z.backend();
      const { paneId } = await spawnStandIn(backend, z.dir);
      const result = await closePane(backend, paneId, { graceMs: 3000, clock });
      assert.deepEqual(result, { alreadyGone: false, killed: false, programTerminated: false });
      const calls = await z.calls();
      assert.ok(calls.some((a) => a.join(" ").endsWith(`write -p ${paneId} 3`)));
      assert.ok(!calls.some((a) => a.includes("send-keys")));
      assert.equal(await backend.inspect(paneId), null);
    } finally {
      await z.close();
    }
  },
);

Deno.test("zellij findSpawned() finds the pane whose command carries the token, not one whose command carries it followed by more hex", async () => {
  const token = "0123456789abcdef0123456789abcdef";
  const pane = (id: number, command: string | null) => ({
    id,
    is_plugin: false,
    is_focused: false,
    title: "t",
    exited: false,
    is_held: false,
    tab_id: 0,
    terminal_command: command,
  });
  const attach = "opencode attach http://127.0.0.1:4096 --session ses_x";
  const run = createFakeRunner()
    .on(["zellij", "--version"], { stdout: "zellij 0.44.1\n" })
    .on(LIST, {
      stdout: JSON.stringify([
        pane(0, null),
        pane(5, `/bin/sh -c exec "$@" muxbridge-spawn=${token} ${attach}`),
        // Another spawn's token that begins with this one's (a token is fixed-length hex).
        pane(6, `/bin/sh -c exec "$@" muxbridge-spawn=${token}0 ${attach}`),
        pane(7, `/bin/sh -c exec "$@" muxbridge-spawn=${"f".repeat(32)} ${attach}`),
      ]),
    });
  const backend = createZellijBackend(deps(run));
  assert.deepEqual((await backend.findSpawned(token)).map((p) => p.paneId), ["terminal_5"]);
});
