/**
 * The cmux backend: parsers and argv shapes against a fake runner, then end to end against the
 * fake cmux CLI (`tests/fakes/bin/cmux`) with its faults, including the released bug where
 * `close-surface` on a surface it cannot resolve closes the selected surface and exits 0.
 * cmux itself cannot run here (macOS app); nothing in this file ran against the real program.
 */

import assert from "node:assert/strict";
import { createCmuxBackend } from "../../backends/cmux/backend.ts";
import { CMUX_ERROR_CODES, cmuxError } from "../../backends/cmux/_command.ts";
import {
  parseCmuxVersion,
  parseErrorLine,
  parseReceipt,
  parseSplit,
  parseSplitHelp,
  parseTree,
} from "../../backends/cmux/_parse.ts";
import { typedCommand } from "../../backends/cmux/_typed.ts";
import type { BackendDeps } from "../../lib/backend/backend.ts";
import { createRealClock, waitFor } from "../../lib/sys/clock.ts";
import { closePane } from "../../lib/session/close_pane.ts";
import type { ConfigLayer } from "../../lib/config/config.ts";
import { detectAll, type FullConfig, resolveConfig } from "../helpers/config.ts";
import { isMuxError } from "../../lib/sys/errors.ts";
import type { Runner } from "../../lib/sys/exec.ts";
import { createLogger, silentLogger } from "../../lib/sys/log.ts";
import { createProcesses } from "../../lib/sys/processes.ts";
import { createFakeRunner } from "../fakes/fake_runner.ts";
import { fakeEnv } from "../fakes/fake_env.ts";
import { assertMuxError } from "../helpers/assert_mux_error.ts";
import { cutHungCall, PATIENT_TIMEOUT_MS } from "../helpers/hung_call.ts";
import { recordedLaunches, writeStandIn } from "../helpers/stand_in.ts";
import { FAKE_CMUX, type FakeCmux, startFakeCmux } from "./cmux_fixture.ts";
import type { OutMessage } from "../../lib/bridge/protocol.ts";
import { SessionLoop } from "../../lib/session/loop.ts";
import { createMemoryStore } from "../fakes/memory_store.ts";
import { validatePaneId, validateSessionId } from "../../lib/sys/validate.ts";
import { forgedPaneId } from "../helpers/ids.ts";

const clock = createRealClock();
const W = "11111111-1111-1111-1111-111111111111";
const C = validatePaneId("22222222-2222-2222-2222-222222222222");
const N = validatePaneId("33333333-3333-3333-3333-333333333333");
const P = "44444444-4444-4444-4444-444444444444";
const SOCK = "/tmp/cmux-test.sock";
const ENV = { CMUX_SOCKET_PATH: SOCK, CMUX_WORKSPACE_ID: W, CMUX_SURFACE_ID: C };
const base = ["cmux", "--socket", SOCK];

function makeDeps(run: Runner, flags: ConfigLayer = {}, env: Record<string, string> = ENV) {
  const lookup = fakeEnv(env);
  const deps: BackendDeps<FullConfig> = {
    run,
    env: lookup,
    clock,
    config: resolveConfig({ env: lookup, flags: { backend: "cmux", ...flags } }),
    identity: detectAll(lookup),
    log: silentLogger,
  };
  return deps;
}

const HELP_ALL = [
  "Usage: cmux new-split <left|right|up|down> [options]",
  "  --workspace <id|ref>",
  "  --surface <id|ref>",
  "  --focus <true|false>",
  "  --command <text>       Text typed into the new terminal's shell",
  "  --cwd <path|inherit>   Working directory",
  "  --title <text>         Initial title",
].join("\n");
const HELP_OLD = HELP_ALL.split("\n").slice(0, 4).join("\n");

function tree(surfaces: Array<{ id: string; title?: string }>, ws = W): string {
  return JSON.stringify({
    windows: [{
      id: P,
      ref: "window:1",
      workspaces: [{
        id: ws,
        ref: "workspace:2",
        title: "w",
        panes: surfaces.map((s, i) => ({
          id: `${s.id.slice(0, 35)}${i}`,
          ref: `pane:${i + 1}`,
          surfaces: [{
            id: s.id,
            ref: `surface:${i + 1}`,
            type: "terminal",
            title: s.title ?? "t",
          }],
        })),
      }],
    }],
  });
}

const rc = (json: boolean, ...args: string[]) => [
  ...base,
  ...(json ? ["--json"] : []),
  "--id-format",
  "uuids",
  ...args,
];

function fakeCli(help = HELP_ALL, version = "cmux 0.64.17\n") {
  return createFakeRunner()
    .on(["cmux", "--version"], { stdout: version })
    .on(["cmux", "new-split", "--help"], { stdout: help });
}

const spawnReq = (extra: Record<string, unknown> = {}) => ({
  sessionId: validateSessionId("ses_abc"),
  title: "fix it",
  argv: ["opencode", "attach", "http://127.0.0.1:4096", "--session", "ses_abc", "--dir", "/src"],
  cwd: "/src",
  env: {},
  owner: "cli",
  ...extra,
});

// --------------------------------------------------------------------------- parsers (pure)

Deno.test("parseCmuxVersion() reads cmux version lines", () => {
  const table: Array<[string, string | null]> = [
    ["cmux 0.64.17", "0.64.17"],
    ["cmux 0.64.22 (102) [ddd4a01bc]\n", "0.64.22"],
    ["cmux 0.64", null],
    ["zellij 0.44.1", null],
    ["", null],
  ];
  for (const [text, want] of table) assert.equal(parseCmuxVersion(text), want, text);
});

Deno.test("parseSplitHelp() finds the optional new-split flags", () => {
  assert.deepEqual(parseSplitHelp(HELP_ALL), { command: true, cwd: true, title: true });
  assert.deepEqual(parseSplitHelp(HELP_OLD), { command: false, cwd: false, title: false });
  assert.deepEqual(parseSplitHelp("  --commander x\n  --cwd=DIR"), {
    command: false,
    cwd: true,
    title: false,
  });
});

Deno.test("parseSplit() reads the new surface at the top level, under result or result.pane", () => {
  for (
    const out of [
      { surface_id: N, pane_id: P, type: "terminal" },
      // The flat answer cmux prints for --json --id-format uuids (v2SurfaceSplit).
      { pane_id: P, surface_id: N, type: "terminal", window_id: W, workspace_id: W },
      { result: { surface_id: N, pane_id: P } },
      { ok: true, result: { pane: { surface_id: N, pane_id: P } } },
    ]
  ) {
    assert.deepEqual(parseSplit(JSON.stringify(out)), { surfaceId: N, paneId: P });
  }
  for (const bad of ["OK surface:9 workspace:2", '{"surface_id":"surface:9"}', "{}"]) {
    assert.throws(() => parseSplit(bad), (e: unknown) => isMuxError(e, "unparseable_output"));
  }
});

Deno.test("parseSplit() accepts the nulls cmux prints: pane_id, type and window_id, and a null surface_id", () => {
  // cmux builds pane_id, type and window_id with v2OrNull (Sources/TerminalController.swift).
  const nullIds = { pane_id: null, surface_id: N, type: null, window_id: null, workspace_id: W };
  assert.deepEqual(parseSplit(JSON.stringify(nullIds)), { surfaceId: N });
  // A remote tmux workspace answers surface_id null (issue #16): no surface to use.
  const nullSurface = { pane_id: P, surface_id: null, type: "terminal", workspace_id: W };
  assert.deepEqual(parseSplit(JSON.stringify(nullSurface)), { surfaceId: null, paneId: P });
});

Deno.test("parseTree(), parseReceipt() and parseErrorLine() read cmux's shapes", () => {
  const ws = parseTree(tree([{ id: C, title: "opencode" }, { id: N }]));
  assert.equal(ws.length, 1);
  assert.deepEqual(ws[0].surfaces.map((s) => [s.id, s.title]), [[C, "opencode"], [N, "t"]]);
  assert.throws(
    () => parseTree('{"windows":7}'),
    (e: unknown) => isMuxError(e, "unparseable_output"),
  );
  assert.deepEqual(parseReceipt(`OK ${N} ${W}\n`), { uuids: [N, W], refs: [] });
  assert.deepEqual(parseReceipt(`OK surface:9 (${N}) workspace:2 (${W})`), {
    uuids: [N, W],
    refs: ["surface:9", "workspace:2"],
  });
  assert.deepEqual(parseReceipt("garbage"), { uuids: [], refs: [] });
  assert.deepEqual(parseErrorLine("Error: not_found: Surface not found\n"), {
    code: "not_found",
    message: "Surface not found",
  });
  assert.deepEqual(parseErrorLine("Error: Failed to connect to socket at /x\n"), {
    code: null,
    message: "Failed to connect to socket at /x",
  });
});

Deno.test("cmuxError() maps cmux's error codes through one table", () => {
  const run = (stderr: string) => ({ code: 1, stdout: "", stderr, argv: ["cmux"] });
  const table: Array<[string, string]> = [
    ["Error: not_found: Surface not found", "pane_not_found"],
    ["Error: pane_too_small: Pane too small", "no_space"],
    ["Error: unavailable: busy", "backend_unreachable"],
    ["Error: invalid_state: Cannot close the last surface", "command_failed"],
    // A surface that went between the check and the send (0.64.3; newer: process_exited).
    ["Error: invalid_params: Surface is not a terminal", "pane_not_found"],
    ["Error: process_exited: The terminal session has ended", "pane_not_found"],
    ["Error: surface_unavailable: The terminal surface is no longer available", "pane_not_found"],
    ["Error: invalid_params: Unknown key", "command_failed"],
    ["Error: brand_new_code: ?", "command_failed"],
    ["Error: Failed to connect to socket at /x (No such file or directory)", "backend_unreachable"],
    ["Segmentation fault", "command_failed"],
  ];
  for (const [stderr, code] of table) assert.equal(cmuxError("x", run(stderr)).code, code, stderr);
  assert.equal(CMUX_ERROR_CODES.not_found, "pane_not_found");
});

Deno.test("typedCommand() survives a real sh with hostile values, and refuses backslashes and newlines", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const cwd = `${dir}/d 'q' "d" $(x) \`y\` ; & | * ~ -n`;
    await Deno.mkdir(cwd);
    const prog = await writeStandIn(dir);
    const argv = [prog, "it's", "$HOME", "a b", "-x", "*", "`id`", ""];
    const child = new Deno.Command("/bin/sh", {
      args: ["-c", typedCommand(cwd, argv)],
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).spawn();
    let launches: Awaited<ReturnType<typeof recordedLaunches>> = [];
    await waitFor(clock, async () => (launches = await recordedLaunches(dir)).length > 0, {
      deadline: clock.now() + 5000,
    });
    child.kill("SIGINT");
    await child.status;
    assert.equal(launches.length, 1);
    assert.deepEqual(launches[0].argv, argv.slice(1));
    assert.equal(launches[0].cwd, cwd);
    for (const bad of [["a\\b"], ["a\nb"], ["x\u202ey"]]) {
      assert.throws(
        () => typedCommand("/src", bad),
        (e: unknown) => isMuxError(e, "invalid_argument"),
      );
    }
    assert.throws(
      () => typedCommand("/s\\rc", ["x"]),
      (e: unknown) => isMuxError(e, "invalid_argument"),
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

// ------------------------------------------------------------------- argv on a fake runner

Deno.test("cmux spawn() splits right of the caller with --socket, --workspace, UUIDs and --focus false", async () => {
  const req = spawnReq();
  const text = typedCommand("/src", req.argv);
  const split = rc(
    true,
    "new-split",
    "right",
    "--workspace",
    W,
    "--surface",
    C,
    "--focus",
    "false",
    "--cwd",
    "/src",
    "--title",
    "fix it",
    "--command",
    text,
  );
  const fake = fakeCli()
    .on(rc(true, "tree", "--all"), { stdout: tree([{ id: C }]) })
    .on(split, { stdout: JSON.stringify({ surface_id: N, pane_id: P, workspace_id: W }) });
  const backend = createCmuxBackend(makeDeps(fake.run));
  assert.deepEqual(await backend.spawn(req), { paneId: N });
  assert.deepEqual(fake.calls.map((c) => c.argv), [
    ["cmux", "--version"],
    ["cmux", "new-split", "--help"],
    rc(true, "tree", "--all"),
    split,
  ]);
});

Deno.test("cmux spawn() on a build without --command starts the program with respawn-pane and titles with rename-tab", async () => {
  const req = spawnReq();
  const text = typedCommand("/src", req.argv);
  const fake = fakeCli(HELP_OLD)
    .on(rc(true, "tree", "--all"), { stdout: tree([{ id: C }]) }, {
      stdout: tree([{ id: C }, { id: N }]),
    })
    .on(rc(true, "new-split", "right", "--workspace", W, "--surface", C, "--focus", "false"), {
      stdout: JSON.stringify({ surface_id: N }),
    })
    .on(rc(false, "respawn-pane", "--workspace", W, "--surface", N, "--command", text), {
      stdout: `OK ${N} ${W}`,
    })
    .on(rc(false, "rename-tab", "--workspace", W, "--surface", N, "--title", "fix it"), {
      stdout: `OK ${N} ${W}`,
    });
  assert.deepEqual(await createCmuxBackend(makeDeps(fake.run)).spawn(req), { paneId: N });
  assert.ok(fake.calls.some((c) => c.argv.includes("respawn-pane")));
  const argvs = fake.calls.map((c) => c.argv);
  const respawn = argvs.findIndex((a) => a.includes("respawn-pane"));
  const rename = argvs.findIndex((a) => a.includes("rename-tab"));
  assert.ok(respawn > 0 && rename > respawn, JSON.stringify(argvs));
});

Deno.test("cmux refuses refs and its own surface before running anything", async () => {
  const fake = createFakeRunner();
  const backend = createCmuxBackend(makeDeps(fake.run));
  for (const bad of ["surface:3", "workspace:1", "-x", ""]) {
    await assertMuxError(backend.kill(forgedPaneId(bad)), "invalid_argument");
  }
  await assertMuxError(backend.kill(C), "not_owned");
  await assertMuxError(backend.kill(validatePaneId(C.toLowerCase())), "not_owned");
  await assertMuxError(backend.interrupt(C), "not_owned");
  assert.equal(fake.calls.length, 0);
});

Deno.test("cmux probe() gates on 0.64.14 and needs the whole cmux identity", async () => {
  await assertMuxError(
    createCmuxBackend(makeDeps(fakeCli(HELP_ALL, "cmux 0.64.13\n").run)).probe(),
    "unsupported_version",
  );
  await assertMuxError(
    createCmuxBackend(makeDeps(fakeCli(HELP_ALL, "cmux nightly\n").run)).probe(),
    "unparseable_output",
  );
  const partial = createCmuxBackend(makeDeps(fakeCli().run, {}, { CMUX_SURFACE_ID: C }));
  await assert.rejects(partial.probe(), (e: unknown) => {
    assert.ok(isMuxError(e, "no_backend"));
    assert.match(e.hint ?? "", /CMUX_SOCKET_PATH, CMUX_WORKSPACE_ID and CMUX_SURFACE_ID/);
    return true;
  });
  const other = createCmuxBackend(makeDeps(fakeCli().run, { cmux: { socket_path: "/tmp/o" } }));
  await assertMuxError(other.probe(), "no_backend");
  const refs = createCmuxBackend(
    makeDeps(fakeCli().run, {}, { ...ENV, CMUX_SURFACE_ID: "surface:1" }),
  );
  await assertMuxError(refs.probe(), "no_backend");
});

Deno.test("cmux applyLayout() is an honest no-op", async () => {
  const result = await createCmuxBackend(makeDeps(createFakeRunner().run)).applyLayout({
    layout: "tiled",
    mainPaneSize: 60,
    panes: [N],
  });
  assert.equal(result.applied, false);
  assert.match(result.detail, /no named layouts/);
});

// ------------------------------------------------------------------------- the fake cmux CLI

async function withFake(
  options: Parameters<typeof startFakeCmux>[0],
  fn: (fake: FakeCmux) => Promise<void>,
) {
  const fake = await startFakeCmux(options);
  try {
    await fn(fake);
  } finally {
    await fake.close();
  }
}

/** Spawns a stand-in through the backend and waits until it runs. */
async function spawnStandIn(fake: FakeCmux, backend: ReturnType<typeof createCmuxBackend>) {
  const prog = await Deno.makeTempDir({ dir: fake.dir });
  const standIn = await writeStandIn(prog);
  const { paneId } = await backend.spawn({
    sessionId: validateSessionId("ses_fake"),
    title: "fake",
    argv: [standIn, "attach", "u"],
    cwd: prog,
    env: {},
    owner: "cli",
  });
  await waitFor(clock, async () => (await recordedLaunches(prog)).length > 0, {
    deadline: clock.now() + 10_000,
  });
  const [launch] = await recordedLaunches(prog);
  assert.ok(launch, "the program did not start");
  return { paneId, launch };
}

const surfaceCommands = ["new-split", "send-key", "close-surface", "rename-tab", "respawn-pane"];

Deno.test("cmux against the fake: every call pins --socket and names the workspace", async () => {
  await withFake({}, async (fake) => {
    const backend = createCmuxBackend(fake.deps());
    const { paneId } = await spawnStandIn(fake, backend);
    await backend.setTitle(paneId, "renamed");
    await closePane(backend, paneId, { graceMs: 2000, clock, processes: createProcesses() });
    const calls = fake.calls();
    for (const argv of calls) {
      if (argv.includes("--version") || argv.includes("--help")) continue;
      assert.deepEqual(argv.slice(0, 2), ["--socket", fake.socket], JSON.stringify(argv));
      assert.ok(argv.includes("uuids"), JSON.stringify(argv));
      if (surfaceCommands.some((c) => argv.includes(c))) {
        assert.equal(argv[argv.indexOf("--workspace") + 1], fake.workspaceId);
      }
    }
    assert.ok(calls.some((a) => a.includes("close-surface") || a.includes("send-key")));
    const left = fake.read().windows[0].workspaces[0].panes.flatMap((p) =>
      p.surfaces.map((s) => s.id)
    );
    assert.deepEqual(left, [fake.callerSurface, fake.userSurface]);
  });
});

Deno.test("cmux against the fake: credentials reach the program from a private 0600 file that is gone once it started; only the file's path is typed", async () => {
  await withFake({}, async (fake) => {
    const password = "p@ss 'x' $(no) --help";
    const seen: Array<{ text: string; file: string; mode: number; dirMode: number }> = [];
    // Sees the typed line and the file the moment the split is asked for (before the fake's
    // shell can read it).
    const run: Runner = async (argv, opts) => {
      const at = argv.indexOf("--command");
      if (argv.includes("new-split") && at > 0) {
        const text = argv[at + 1];
        const file = /'(\/[^']*\/credentials\/[0-9a-f]{24}\.env)'/.exec(text)?.[1] ?? "";
        const st = await Deno.lstat(file);
        const dir = await Deno.stat(file.slice(0, file.lastIndexOf("/")));
        seen.push({ text, file, mode: st.mode! & 0o777, dirMode: dir.mode! & 0o777 });
      }
      return await fake.runner(argv, opts);
    };
    const backend = createCmuxBackend(fake.deps({}, silentLogger, run));
    assert.equal(backend.capabilities.env, true);
    const prog = await Deno.makeTempDir({ dir: fake.dir });
    const standIn = await writeStandIn(prog);
    const { paneId } = await backend.spawn({
      sessionId: validateSessionId("ses_cmuxEnv"),
      title: "env",
      argv: [standIn, "attach", "u"],
      cwd: prog,
      env: { OPENCODE_SERVER_PASSWORD: password },
      owner: "cli",
    });
    await waitFor(clock, async () => (await recordedLaunches(prog)).length > 0, {
      deadline: clock.now() + 10_000,
    });
    const [launch] = await recordedLaunches(prog);
    assert.equal(launch.password, password);
    assert.deepEqual(launch.argv, ["attach", "u"]);
    assert.equal(seen.length, 1);
    assert.equal(seen[0].mode, 0o600);
    assert.equal(seen[0].dirMode, 0o700);
    assert.ok(!seen[0].text.includes("p@ss"), "the password is not typed");
    assert.ok(!fake.calls().some((a) => a.some((v) => v.includes("p@ss"))), "nor on any argv");
    await assert.rejects(() => Deno.lstat(seen[0].file), Deno.errors.NotFound);
    await closePane(backend, paneId, { graceMs: 2000, clock, processes: createProcesses() });
  });
});

Deno.test("cmux kill() never asks cmux to close a surface that is not listed right now", async () => {
  await withFake({ faults: { "close-surface": "bad-close" } }, async (fake) => {
    const backend = createCmuxBackend(fake.deps());
    await assertMuxError(backend.kill(validatePaneId(crypto.randomUUID())), "pane_not_found");
    await assertMuxError(backend.interrupt(validatePaneId(crypto.randomUUID())), "pane_not_found");
    await assertMuxError(
      backend.setTitle(validatePaneId(crypto.randomUUID()), "x"),
      "pane_not_found",
    );
    assert.ok(!fake.calls().some((a) => a.includes("close-surface") || a.includes("send-key")));
    const ids = fake.read().windows[0].workspaces[0].panes.flatMap((p) =>
      p.surfaces.map((s) => s.id)
    );
    assert.deepEqual(ids, [fake.callerSurface, fake.userSurface], "nothing was closed");
  });
});

/** A runner that ends the target's program just before close-surface runs (a race). */
function racingRunner(fake: FakeCmux): Runner {
  return async (argv, opts) => {
    const at = argv.indexOf("close-surface");
    if (at >= 0) {
      const target = argv[argv.indexOf("--surface") + 1];
      const surface = fake.read().windows[0].workspaces[0].panes.flatMap((p) => p.surfaces)
        .find((s) => s.id === target);
      if (surface?.pid) {
        Deno.kill(-surface.pid, "SIGKILL");
        await waitFor(clock, () => !createProcesses().alive(surface.pid!), {
          deadline: clock.now() + 3000,
        });
      }
    }
    return await fake.runner(argv, opts);
  };
}

Deno.test("cmux kill() reports loudly when cmux closes another surface instead (issue #9410)", async () => {
  await withFake({ faults: { "close-surface": "bad-close" } }, async (fake) => {
    const lines: string[] = [];
    const log = createLogger("debug", (l) => lines.push(l));
    const backend = createCmuxBackend(fake.deps({}, log, racingRunner(fake)));
    const { paneId } = await spawnStandIn(fake, backend);
    await assert.rejects(backend.kill(paneId), (e: unknown) => {
      assert.ok(isMuxError(e, "close_unverified"), String(e));
      assert.match(e.message, new RegExp(`reported closing ${fake.userSurface}`));
      assert.match(e.message, new RegExp(`${fake.userSurface} \\("vim"\\) vanished`));
      return true;
    });
    assert.ok(
      lines.some((l) => l.includes(" error: ") && l.includes(fake.userSurface)),
      lines.join(""),
    );
    // muxbridge itself only ever named its own surface.
    const closes = fake.calls().filter((a) => a.includes("close-surface"));
    assert.deepEqual(closes.map((a) => a[a.indexOf("--surface") + 1]), [paneId]);
  });
});

Deno.test("cmux kill() reads a fixed cmux's not_found for a surface that just went as pane_not_found", async () => {
  await withFake({}, async (fake) => {
    const backend = createCmuxBackend(fake.deps({}, silentLogger, racingRunner(fake)));
    const { paneId } = await spawnStandIn(fake, backend);
    await assertMuxError(backend.kill(paneId), "pane_not_found");
    const ids = fake.read().windows[0].workspaces[0].panes.flatMap((p) =>
      p.surfaces.map((s) => s.id)
    );
    assert.deepEqual(ids, [fake.callerSurface, fake.userSurface]);
  });
});

Deno.test("cmux on an old build (no new-split --command) starts the program through respawn-pane", async () => {
  await withFake({ features: [] }, async (fake) => {
    const backend = createCmuxBackend(fake.deps());
    const checks = await backend.doctor();
    assert.equal(checks.find((c) => c.name === "cmux new-split")?.status, "warn");
    const { paneId, launch } = await spawnStandIn(fake, backend);
    assert.deepEqual(launch.argv, ["attach", "u"]);
    assert.equal((await backend.inspect(paneId))?.title, "fake");
    assert.ok(fake.calls().some((a) => a.includes("respawn-pane")));
  });
});

/** The surfaces of the fake's one workspace. */
const surfaceIds = (fake: FakeCmux) =>
  fake.read().windows[0].workspaces[0].panes.flatMap((p) => p.surfaces.map((s) => s.id));

Deno.test("cmux: a split answering pane_id, type and window_id null opens a working pane", async () => {
  await withFake({ faults: { "new-split": "null-ids" } }, async (fake) => {
    const backend = createCmuxBackend(fake.deps());
    const { paneId, launch } = await spawnStandIn(fake, backend);
    assert.deepEqual(launch.argv, ["attach", "u"]);
    assert.ok(await backend.inspect(paneId));
    await closePane(backend, paneId, { graceMs: 2000, clock, processes: createProcesses() });
    assert.deepEqual(surfaceIds(fake), [fake.callerSurface, fake.userSurface]);
  });
});

for (
  const [fault, code] of [["null-surface", "unsupported"], ["late-garbage", "unparseable_output"]]
) {
  Deno.test(`cmux: a split answering ${fault} leaves no surface open and fails with ${code}`, async () => {
    await withFake({ faults: { "new-split": fault } }, async (fake) => {
      const lines: string[] = [];
      const backend = createCmuxBackend(fake.deps({}, createLogger("debug", (l) => lines.push(l))));
      // A program that keeps running: the surface stays until muxbridge closes it.
      const standIn = await writeStandIn(fake.dir);
      await assertMuxError(
        backend.spawn(spawnReq({ cwd: fake.dir, argv: [standIn, "attach", "u"] })),
        code,
      );
      assert.deepEqual(surfaceIds(fake), [fake.callerSurface, fake.userSurface]);
      assert.ok(
        lines.some((l) =>
          /closing surface .*, made by a split whose answer (was unreadable|named no surface)$/m
            .test(l)
        ),
        lines.join(""),
      );
      // Only the surface the split made was named in a close.
      const closes = fake.calls().filter((a) => a.includes("close-surface"));
      assert.equal(closes.length, 1);
      assert.ok(![fake.callerSurface, fake.userSurface].includes(closes[0].at(-1)!));
    });
  });
}

Deno.test("cmux: a split whose answer is unreadable closes nothing when a second new surface appeared meanwhile (it cannot tell which is its own)", async () => {
  await withFake({ faults: { "new-split": "late-garbage" } }, async (fake) => {
    const lines: string[] = [];
    // The user splits at the same moment: one more surface, in a pane of its own, that
    // muxbridge did not make.
    const userSplit = crypto.randomUUID().toUpperCase();
    const run: Runner = async (argv, opts) => {
      const result = await fake.runner(argv, opts);
      if (argv.includes("new-split") && !argv.includes("--help")) {
        fake.update((s) =>
          s.windows[0].workspaces[0].panes.push({
            id: crypto.randomUUID().toUpperCase(),
            ref: "pane:99",
            selected: userSplit,
            surfaces: [{
              id: userSplit,
              ref: "surface:99",
              title: "user's",
              type: "terminal",
              cwd: fake.dir,
            }],
          })
        );
      }
      return result;
    };
    const backend = createCmuxBackend(
      fake.deps({}, createLogger("debug", (l) => lines.push(l)), run),
    );
    const standIn = await writeStandIn(fake.dir);
    await assertMuxError(
      backend.spawn(spawnReq({ cwd: fake.dir, argv: [standIn, "attach", "u"] })),
      "unparseable_output",
    );
    assert.deepEqual(fake.calls().filter((a) => a.includes("close-surface")), [], lines.join(""));
    const left = surfaceIds(fake);
    assert.equal(left.length, 4, `both new surfaces are left: ${left}`);
    assert.ok(left.includes(userSplit), "the user's surface is there");
    assert.ok(
      lines.some((l) =>
        / error: cmux: a split whose answer was unreadable left one of .*; not closing any /.test(l)
      ),
      lines.join(""),
    );
  });
});

Deno.test("cmux: through the session loop, a split answering surface_id null is pane.failed and leaves no surface or record", async () => {
  await withFake({ faults: { "new-split": "null-surface" } }, async (fake) => {
    const out: OutMessage[] = [];
    const store = createMemoryStore();
    const deps = fake.deps({ opencode_bin: await writeStandIn(fake.dir) });
    const loop = new SessionLoop({
      clock,
      log: silentLogger,
      emit: (m) => out.push(m),
      config: deps.config,
      store,
      processes: createProcesses(),
      owner: "4242:1",
    }, {
      backend: createCmuxBackend(deps),
      serverUrl: "http://127.0.0.1:4096",
      directory: fake.dir,
    });
    loop.handle({
      kind: "created",
      info: {
        id: validateSessionId("ses_remote"),
        title: "t",
        parentId: validateSessionId("ses_p"),
      },
    });
    assert.ok(
      await waitFor(clock, () => out.some((m) => m.type === "pane.failed"), {
        deadline: clock.now() + 20_000,
      }),
    );
    const failed = out.find((m) => m.type === "pane.failed");
    assert.ok(failed?.type === "pane.failed" && failed.code === "unsupported", JSON.stringify(out));
    assert.ok(!out.some((m) => m.type === "pane.opened"));
    await loop.shutdown(true);
    assert.deepEqual(surfaceIds(fake), [fake.callerSurface, fake.userSurface]);
    assert.equal(store.records.size, 0);
  });
});

Deno.test("cmux: a surface that ended between the check and the send-key is the pane-gone path", async () => {
  for (
    const answer of [
      "error:invalid_params:Surface is not a terminal",
      "error:process_exited:The terminal session has ended",
    ]
  ) {
    await withFake({}, async (fake) => {
      const backend = createCmuxBackend(fake.deps());
      const { paneId } = await spawnStandIn(fake, backend);
      fake.update((s) => (s.faults["send-key"] = answer));
      await assertMuxError(backend.interrupt(paneId), "pane_not_found");
      // The close still verifies: the surface is listed, so it is closed and checked gone.
      const result = await closePane(backend, paneId, {
        graceMs: 2000,
        clock,
        processes: createProcesses(),
      });
      assert.equal(result.killed, true, answer);
      assert.deepEqual(surfaceIds(fake), [fake.callerSurface, fake.userSurface]);
    });
  }
});

Deno.test("cmux: rename-tab answers as real cmux does, and a title still lands", async () => {
  await withFake({}, async (fake) => {
    const backend = createCmuxBackend(fake.deps());
    const { paneId } = await spawnStandIn(fake, backend);
    const run = await fake.runner(
      [
        FAKE_CMUX,
        "--socket",
        fake.socket,
        "--id-format",
        "uuids",
        "rename-tab",
        "--workspace",
        fake.workspaceId,
        "--surface",
        paneId,
        "--title",
        "x",
      ],
      { timeoutMs: 10_000 },
    );
    assert.equal(run.stdout.trim(), `OK action=rename tab=${paneId} workspace=${fake.workspaceId}`);
    await backend.setTitle(paneId, "renamed");
    assert.equal((await backend.inspect(paneId))?.title, "renamed");
  });
});

Deno.test("cmux against a fake that hangs, crashes, prints garbage, errors or is missing", async () => {
  const cases: Array<[Record<string, string>, string]> = [
    [{ tree: "hang" }, "timed_out"],
    [{ tree: "crash" }, "command_failed"],
    [{ tree: "garbage" }, "unparseable_output"],
    [{ tree: "error:unavailable:main thread busy" }, "backend_unreachable"],
    [{ "new-split": "garbage" }, "unparseable_output"],
    [{ "new-split": "error:pane_too_small:Pane too small" }, "no_space"],
  ];
  for (const [faults, code] of cases) {
    await withFake({ faults }, async (fake) => {
      // Only the hung command is cut short (a slow `--version` under load is no fault).
      const hung = Object.entries(faults).find(([, f]) => f === "hang")?.[0];
      const run = cutHungCall(fake.runner, () => hung && `hang:${hung}`);
      const backend = createCmuxBackend(
        fake.deps({ command_timeout_ms: PATIENT_TIMEOUT_MS }, silentLogger, run),
      );
      await assertMuxError(backend.spawn(spawnReq({ cwd: fake.dir })), code);
    });
  }
  await withFake({}, async (fake) => {
    const missing = createCmuxBackend(fake.deps({ cmux: { bin: `${fake.dir}/no-such-cmux` } }));
    await assert.rejects(missing.probe(), (e: unknown) => {
      assert.ok(isMuxError(e, "binary_not_found"));
      assert.match(e.hint ?? "", /cmux\.bin/);
      return true;
    });
    fake.update((s) => (s.socket = `${fake.dir}/elsewhere.sock`));
    await assertMuxError(createCmuxBackend(fake.deps()).probe(), "backend_unreachable");
  });
});

Deno.test("cmux doctor() passes against a healthy fake and explains an unreachable socket", async () => {
  await withFake({}, async (fake) => {
    const checks = await createCmuxBackend(fake.deps()).doctor();
    assert.deepEqual(checks.filter((c) => c.status !== "pass"), []);
    assert.deepEqual(checks.map((c) => c.name), [
      "cmux binary",
      "cmux version",
      "cmux new-split",
      "cmux identity",
      "cmux socket",
      "cmux surface",
    ]);
    fake.update((s) => (s.socket = `${fake.dir}/elsewhere.sock`));
    const broken = await createCmuxBackend(fake.deps()).doctor();
    const socket = broken.find((c) => c.name === "cmux socket");
    assert.equal(socket?.status, "fail");
    assert.match(socket?.hint ?? "", /CMUX_SOCKET_PATH/);
  });
});
