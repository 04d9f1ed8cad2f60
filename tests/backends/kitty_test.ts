/**
 * The kitty backend against a fake runner (argv of both `kitten @` and `kitty @`, version gating,
 * error mapping, layout rules) and against the real kitty 0.26.5 under Xvfb (quirks: send-text on
 * an unknown window, deferred close, what kitty would rewrite in launch values). The live part
 * shares one kitty and is skipped, with the reason printed, where kitty or xvfb-run is absent.
 */

import assert from "node:assert/strict";
import { createKittyBackend } from "../../backends/kitty/backend.ts";
import type { UnixRequester } from "../../lib/sys/unix_request.ts";
import { KITTY_LAYOUTS } from "../../backends/kitty/_layout.ts";
import { classifyKittyFailure } from "../../backends/kitty/_command.ts";
import { launchArgs } from "../../backends/kitty/_launch.ts";
import { parseKittyVersion, parseLaunchOutput, parseLs } from "../../backends/kitty/_parse.ts";
import type { Backend, BackendDeps } from "../../lib/backend/backend.ts";
import { createRealClock } from "../../lib/sys/clock.ts";
import type { ConfigLayer } from "../../lib/config/config.ts";
import { detectAll, type FullConfig, resolveConfig } from "../helpers/config.ts";
import { isMuxError, MuxError } from "../../lib/sys/errors.ts";
import type { Runner } from "../../lib/sys/exec.ts";
import { silentLogger } from "../../lib/sys/log.ts";
import { createProcesses } from "../../lib/sys/processes.ts";
import { createFakeRunner, type FakeRunner } from "../fakes/fake_runner.ts";
import { fakeEnv } from "../fakes/fake_env.ts";
import { assertMuxError } from "../helpers/assert_mux_error.ts";
import { KITTY_TOOLS, type KittyServer, sharedKittyServer } from "../helpers/kitty_server.ts";
import { requires } from "../helpers/requires.ts";
import { type Launch, recordedLaunches, writeStandIn } from "../helpers/stand_in.ts";
import { until } from "../helpers/until.ts";
import { validatePaneId, validateSessionId } from "../../lib/sys/validate.ts";
import { forgedPaneId } from "../helpers/ids.ts";

const clock = createRealClock();
/** kitty under Xvfb on a loaded machine is slow to start programs and close windows. */
const KITTY_WAIT = { ms: 15_000, maxIntervalMs: 50 };
const ADDR = "unix:/tmp/kitty-test.sock";
const LS_0265 = Deno.readTextFileSync(
  new URL("../testdata/kitty/ls_0.26.5.json", import.meta.url),
);
const V0265 = "kitty 0.26.5 created by Kovid Goyal\n";
const V040 = "kitten 0.40.1 created by Kovid Goyal\n";

function makeDeps(
  run: Runner,
  flags: ConfigLayer = {},
  env: Record<string, string> = { KITTY_WINDOW_ID: "1", KITTY_LISTEN_ON: ADDR },
): BackendDeps<FullConfig> {
  const lookup = fakeEnv(env);
  return {
    run,
    env: lookup,
    clock,
    config: resolveConfig({ env: lookup, flags: { backend: "kitty", ...flags } }),
    identity: detectAll(lookup),
    log: silentLogger,
  };
}

/** No kitty listens: a fake runner's calls never reach a socket, even one a real kitty has at ADDR. */
const NO_SOCKET: UnixRequester = () =>
  Promise.resolve({ ok: false, reason: "unreachable", sent: false, detail: "ENOENT (test)" });

/** The backend over a fake runner: every call goes to `kitty @`. */
function cliOnly(deps: BackendDeps<FullConfig>) {
  return createKittyBackend(deps, { unixRequest: NO_SOCKET });
}

const notFound = (bin: string) =>
  new MuxError("binary_not_found", `Cannot run "${bin}": program not found`);

/** A fake kitty: `kitty @` 0.26.5 (no kitten) or `kitten @` 0.40.1. */
function fakeKitty(kind: "kitty-0.26" | "kitten-0.40", ls = LS_0265): FakeRunner {
  const fake = createFakeRunner();
  if (kind === "kitty-0.26") {
    fake.on(["kitten", "--version"], notFound("kitten"));
    fake.on(["kitty", "--version"], { stdout: V0265 });
  } else fake.on(["kitten", "--version"], { stdout: V040 });
  const bin = kind === "kitty-0.26" ? "kitty" : "kitten";
  fake.on([bin, "@", "--to", ADDR, "ls"], { stdout: ls });
  return fake;
}

const rcArgv = (bin: string, ...args: string[]) => [bin, "@", "--to", ADDR, ...args];

interface FakeWindow {
  id: number;
  title?: string;
  pid?: number;
  user_vars?: Record<string, string>;
}

/** `ls` JSON in the shape of kitty >= 0.30 (keys per docs/backends/kitty.md §3; synthesized). */
function lsJson(tabs: Array<{ id?: number; layout?: string; windows: FakeWindow[] }>): string {
  return JSON.stringify([{
    id: 1,
    is_focused: true,
    tabs: tabs.map((t, i) => ({
      id: t.id ?? i + 1,
      layout: t.layout ?? "tall",
      enabled_layouts: ["fat", "grid", "horizontal", "splits", "stack", "tall", "vertical"],
      windows: t.windows.map((w) => ({
        id: w.id,
        pid: w.pid ?? 1000 + w.id,
        title: w.title ?? `w${w.id}`,
        env: { KITTY_WINDOW_ID: String(w.id), OPENCODE_SERVER_PASSWORD: "hunter2" },
        user_vars: w.user_vars ?? {},
        cmdline: ["x"],
      })),
    })),
  }]);
}

const spawnReq = (extra: Record<string, unknown> = {}) => ({
  sessionId: validateSessionId("ses_abc"),
  title: "fix it",
  argv: ["opencode", "attach", "http://127.0.0.1:4096", "--session", "ses_abc", "--dir", "/src"],
  cwd: "/src",
  env: {},
  owner: "4242:777",
  ...extra,
});

// ---------------------------------------------------------------------------- parsing (pure)

Deno.test("parseKittyVersion() reads kitty and kitten version lines", () => {
  const table: Array<[string, string | null]> = [
    ["kitty 0.26.5 created by Kovid Goyal", "0.26.5"],
    ["kitten 0.32.2 created by Kovid Goyal\n", "0.32.2"],
    ["kitty 0.40.1", "0.40.1"],
    ["kitty 0.26", "0.26.0"],
    ["kitty master", null],
    ["Usage: kitty", null],
    ["", null],
  ];
  for (const [text, want] of table) assert.equal(parseKittyVersion(text), want, text);
});

Deno.test("parseLaunchOutput() reads the new window id and rejects anything else", () => {
  assert.equal(parseLaunchOutput("7\n"), "7");
  assert.throws(
    () => parseLaunchOutput("OK\n"),
    (e: unknown) => isMuxError(e, "unparseable_output"),
  );
  assert.throws(() => parseLaunchOutput(""), (e: unknown) => isMuxError(e, "unparseable_output"));
});

Deno.test("parseLs() reads the live 0.26.5 listing and drops every window's environment", () => {
  const tabs = parseLs(LS_0265);
  assert.equal(tabs.length, 1);
  assert.equal(tabs[0].layout, "splits");
  assert.deepEqual(tabs[0].windows.map((w) => w.id), ["1", "2"]);
  assert.equal(tabs[0].windows[1].title, "worker-1");
  assert.ok(tabs[0].windows[1].pid);
  assert.ok(!JSON.stringify(tabs).includes("hunter2"), "the launch environment leaked");
});

Deno.test("parseLs() reports a bad listing without quoting it (it holds environments)", () => {
  for (
    const bad of [
      "not json hunter2",
      '[{"id":1,"tabs":[{"id":1,"layout":"x","windows":[{"id":"x","title":"t","env":{"P":"hunter2"}}]}]}]',
    ]
  ) {
    assert.throws(() => parseLs(bad), (e: unknown) => {
      assert.ok(isMuxError(e, "unparseable_output"));
      assert.ok(!e.message.includes("hunter2"), e.message);
      return true;
    });
  }
});

Deno.test("classifyKittyFailure() reads kitty's and kitten's error texts", () => {
  const table: Array<[string, string]> = [
    ["No matching windows for expression: id:999\n", "not_found"],
    ["Traceback …\nNo location specified before window_id:999\n", "not_found"],
    ["No listen on socket found at: unix:/tmp/x.sock\n", "unreachable"],
    ["Traceback …\nConnectionRefusedError: [Errno 111] Connection refused\n", "unreachable"],
    ["Error: dial unix /tmp/k: connect: no such file or directory\n", "unreachable"],
    ["Invalid listen on address: bogus\n", "bad_address"],
    ["The layout bogus is unknown or disabled\n", "other"],
  ];
  for (const [stderr, want] of table) assert.equal(classifyKittyFailure(stderr), want, stderr);
});

// ------------------------------------------------------------------------ launch values (pure)

Deno.test("launchArgs() passes argv after -- with --cwd, title and anchor as single arguments", () => {
  const plan = launchArgs({
    title: "-t fix",
    cwd: "/src dir",
    argv: ["opencode", "attach", "u", "--title", "x"],
    anchor: "1",
    nextTo: false,
  });
  assert.deepEqual(plan, {
    args: [
      "launch",
      "--type=window",
      "--keep-focus",
      "--match=window_id:1",
      "--location=vsplit",
      "--title=-t fix",
      "--cwd=/src dir",
      "--",
      "opencode",
      "attach",
      "u",
      "--title",
      "x",
    ],
  });
});

Deno.test("launchArgs() runs an explicit /bin/sh when --cwd or an @argument would be rewritten", () => {
  for (
    const [cwd, argv] of [
      ["/src/$HOME", ["prog", "a"]],
      ["/src", ["prog", "@active-kitty-window-id"]],
    ] as const
  ) {
    const plan = launchArgs({ title: "t", cwd, argv, nextTo: false });
    const tail = plan.args.slice(plan.args.indexOf("--"));
    assert.deepEqual(tail.slice(0, 3), ["--", "/bin/sh", "-c"]);
    assert.ok(!plan.args.some((a) => a.startsWith("--cwd")));
    assert.equal(tail[3], `cd '${cwd}' && exec ${argv.map((a) => `'${a}'`).join(" ")}`);
  }
});

Deno.test("launchArgs() marks windows with user variables, uses --next-to, and defers the title 'current'", () => {
  const plan = launchArgs({
    title: "current",
    cwd: "/src",
    argv: ["prog"],
    anchor: "3",
    nextTo: true,
    marks: { sessionId: "ses_1", owner: "cli" },
  });
  assert.equal(plan.titleAfter, "current");
  assert.ok(!plan.args.some((a) => a.startsWith("--title")));
  assert.ok(plan.args.includes("--next-to=id:3"));
  assert.ok(plan.args.includes("--var=muxbridge_session=ses_1"));
  assert.ok(plan.args.includes("--var=muxbridge_owner=cli"));
});

// ------------------------------------------------------------------- backend on a fake runner

Deno.test("kitty probe() uses kitten @ when kitten is installed (0.27+)", async () => {
  const fake = fakeKitty("kitten-0.40", lsJson([{ windows: [{ id: 1 }] }]));
  const backend = cliOnly(makeDeps(fake.run));
  assert.equal(backend.capabilities.marks, false, "no marks before the version is known");
  assert.deepEqual(await backend.probe(), { binary: "kitten", version: "0.40.1" });
  assert.deepEqual(fake.calls.map((c) => c.argv), [
    ["kitten", "--version"],
    rcArgv("kitten", "ls"),
  ]);
  assert.equal(backend.capabilities.marks, true);
});

Deno.test("kitty probe() falls back to kitty @ when there is no kitten (Debian's 0.26.5)", async () => {
  const fake = fakeKitty("kitty-0.26");
  const backend = cliOnly(makeDeps(fake.run));
  assert.deepEqual(await backend.probe(), { binary: "kitty", version: "0.26.5" });
  assert.deepEqual(fake.calls.map((c) => c.argv), [
    ["kitten", "--version"],
    ["kitty", "--version"],
    rcArgv("kitty", "ls"),
  ]);
  assert.equal(backend.capabilities.marks, false);
  assert.equal(backend.capabilities.env, true);
});

Deno.test("kitty probe() tries only kitty.bin when it is set", async () => {
  const fake = createFakeRunner().on(["/opt/kitty/bin/kitten", "--version"], notFound("x"));
  const backend = cliOnly(
    makeDeps(fake.run, { kitty: { bin: "/opt/kitty/bin/kitten" } }),
  );
  await assert.rejects(backend.probe(), (e: unknown) => {
    assert.ok(isMuxError(e, "binary_not_found"));
    assert.match(e.message, /kitty\.bin/);
    assert.ok(e.hint);
    return true;
  });
  assert.equal(fake.calls.length, 1);
});

Deno.test("kitty probe() refuses kitty older than 0.26 and unreadable versions", async () => {
  const old = createFakeRunner()
    .on(["kitten", "--version"], notFound("kitten"))
    .on(["kitty", "--version"], { stdout: "kitty 0.25.2 created by Kovid Goyal\n" });
  await assert.rejects(cliOnly(makeDeps(old.run)).probe(), (e: unknown) => {
    assert.ok(isMuxError(e, "unsupported_version"));
    assert.match(e.message, /need >= 0\.26/);
    return true;
  });
  const odd = createFakeRunner()
    .on(["kitten", "--version"], notFound("kitten"))
    .on(["kitty", "--version"], { stdout: "something else\n" });
  await assertMuxError(cliOnly(makeDeps(odd.run)).probe(), "unparseable_output");
});

Deno.test("kitty probe() without a remote-control address fails with the kitty.conf hint", async () => {
  const fake = createFakeRunner().on(["kitten", "--version"], { stdout: V040 });
  const backend = cliOnly(makeDeps(fake.run, {}, { KITTY_WINDOW_ID: "1" }));
  await assert.rejects(backend.probe(), (e: unknown) => {
    assert.ok(isMuxError(e, "backend_unreachable"));
    assert.match(e.hint ?? "", /allow_remote_control yes/);
    assert.match(e.hint ?? "", /listen_on/);
    return true;
  });
  assert.deepEqual(fake.calls.map((c) => c.argv), [["kitten", "--version"]]);
  const bad = cliOnly(makeDeps(fake.run, { kitty: { listen_on: "bogus" } }));
  await assertMuxError(bad.probe(), "invalid_config");
});

Deno.test("kitty spawn() on 0.26.5 opens a window in the anchor's tab with one launch call", async () => {
  const fake = fakeKitty("kitty-0.26");
  const req = spawnReq();
  const launch = rcArgv(
    "kitty",
    "launch",
    "--type=window",
    "--keep-focus",
    "--match=window_id:1",
    "--location=vsplit",
    "--title=fix it",
    "--cwd=/src",
    "--",
    ...req.argv,
  );
  fake.on(launch, { stdout: "2\n" });
  const backend = cliOnly(makeDeps(fake.run));
  assert.deepEqual(await backend.spawn(req), { paneId: "2" });
  assert.deepEqual(fake.calls.map((c) => c.argv), [
    ["kitten", "--version"],
    ["kitty", "--version"],
    launch,
  ]);
});

Deno.test("kitty spawn() passes credentials through a private file a /bin/sh -c sources, never on argv", async () => {
  const fake = fakeKitty("kitty-0.26");
  const req = spawnReq({ env: { OPENCODE_SERVER_PASSWORD: "p$w 'secret'" } });
  let file = "";
  fake.onPrefix(rcArgv("kitty", "launch"), async (argv) => {
    assert.ok(!argv.some((a) => a.includes("secret")), "the password is on no argv");
    assert.ok(!argv.some((a) => a.startsWith("--env")));
    assert.deepEqual(argv.slice(-3, -1), ["/bin/sh", "-c"]);
    file = /^\. '([^']+)'/.exec(argv.at(-1)!)![1];
    assert.equal((await Deno.stat(file)).mode! & 0o777, 0o600);
    const text = await Deno.readTextFile(file);
    assert.equal(
      text,
      `OPENCODE_SERVER_PASSWORD='p$w '\\''secret'\\'''; export OPENCODE_SERVER_PASSWORD\n`,
    );
    return { stdout: "2\n" };
  });
  const state = Deno.makeTempDirSync({ prefix: "muxbridge-kitty-state-" });
  const backend = cliOnly(makeDeps(fake.run, { state_dir: state }));
  assert.deepEqual(await backend.spawn(req), { paneId: "2" });
  assert.ok(file.startsWith(`${Deno.realPathSync(state)}/credentials/`), file);
  // The window's program never ran here: killing the window removes the file.
  fake.on(rcArgv("kitty", "close-window", "--match=id:2"), {});
  await backend.kill(validatePaneId("2"));
  await assert.rejects(() => Deno.stat(file), Deno.errors.NotFound);
  Deno.removeSync(state, { recursive: true });
});

Deno.test("kitty spawn() on kitten 0.40 marks the window and places it with --next-to", async () => {
  const fake = fakeKitty("kitten-0.40", lsJson([{ layout: "tall", windows: [{ id: 1 }] }]));
  const req = spawnReq();
  const launch = rcArgv(
    "kitten",
    "launch",
    "--type=window",
    "--keep-focus",
    "--match=window_id:1",
    "--next-to=id:1",
    "--location=vsplit",
    "--title=fix it",
    "--var=muxbridge_session=ses_abc",
    "--var=muxbridge_owner=4242:777",
    "--cwd=/src",
    "--",
    ...req.argv,
  );
  fake.on(launch, { stdout: "5\n" });
  assert.deepEqual(await cliOnly(makeDeps(fake.run)).spawn(req), { paneId: "5" });
});

Deno.test("kitty spawn() fails pane_not_found with the anchor hint when the anchor window is gone", async () => {
  // kitty 0.26.5 answers launch --match=window_id:<gone> with a traceback (captured live).
  const traceback = 'Traceback (most recent call last):\n  File "…/boss.py", line 567\n' +
    "kitty.search_query_parser.ParseException: No location specified before window_id:1\n\n" +
    "No location specified before window_id:1\n";
  const fake = fakeKitty("kitty-0.26")
    .onPrefix(rcArgv("kitty", "launch"), { code: 1, stderr: traceback });
  await assert.rejects(cliOnly(makeDeps(fake.run)).spawn(spawnReq()), (e: unknown) => {
    assert.ok(isMuxError(e, "pane_not_found"));
    assert.match(e.message, /anchor window 1/);
    assert.match(e.hint ?? "", /kitty\.window_id/);
    return true;
  });
});

Deno.test("kitty spawn() reads a garbage launch reply as unparseable_output", async () => {
  const fake = fakeKitty("kitty-0.26").onPrefix(rcArgv("kitty", "launch"), { stdout: "OK\n" });
  await assertMuxError(
    cliOnly(makeDeps(fake.run)).spawn(spawnReq()),
    "unparseable_output",
  );
});

Deno.test("kitty spawn() titles a window 'current' afterwards (launch --title would copy a title)", async () => {
  const fake = fakeKitty("kitty-0.26")
    .onPrefix(rcArgv("kitty", "launch"), { stdout: "2\n" })
    .on(rcArgv("kitty", "set-window-title", "--match=id:2", "--", "current"), {});
  await cliOnly(makeDeps(fake.run)).spawn(spawnReq({ title: "current" }));
  assert.deepEqual(
    fake.calls.at(-1)?.argv,
    rcArgv("kitty", "set-window-title", "--match=id:2", "--", "current"),
  );
});

Deno.test("kitty ignores KITTY_WINDOW_ID when kitty.listen_on names another kitty", async () => {
  const other = "unix:/tmp/other.sock";
  const fake = createFakeRunner()
    .on(["kitten", "--version"], { stdout: V040 })
    .onPrefix(["kitten", "@", "--to", other, "launch"], { stdout: "3\n" });
  const backend = cliOnly(makeDeps(fake.run, { kitty: { listen_on: other } }));
  await backend.spawn(spawnReq());
  const launch = fake.calls.at(-1)?.argv ?? [];
  assert.ok(!launch.some((a) => a.startsWith("--match")), JSON.stringify(launch));
  assert.deepEqual(
    (await backend.applyLayout({ layout: "tiled", mainPaneSize: 60, panes: [validatePaneId("3")] }))
      .applied,
    false,
  );
});

Deno.test("kitty kill() maps kitty's errors by kind", async () => {
  const table: Array<[string, string]> = [
    ["No matching windows for expression: id:9\n", "pane_not_found"],
    [
      "Traceback (most recent call last):\n  …\nConnectionRefusedError: [Errno 111] Connection refused\n",
      "backend_unreachable",
    ],
    ["Invalid listen on address: bogus\n", "invalid_config"],
    ["something new\n", "command_failed"],
  ];
  for (const [stderr, code] of table) {
    const fake = fakeKitty("kitty-0.26")
      .on(rcArgv("kitty", "close-window", "--match=id:9"), { code: 1, stderr });
    await assertMuxError(cliOnly(makeDeps(fake.run)).kill(validatePaneId("9")), code);
  }
});

Deno.test("kitty kill() returns once ls no longer lists the window (kitty closes it a tick later)", async () => {
  const fake = createFakeRunner()
    .on(["kitten", "--version"], notFound("kitten"))
    .on(["kitty", "--version"], { stdout: V0265 })
    .on(rcArgv("kitty", "close-window", "--match=id:2"), {})
    .on(rcArgv("kitty", "ls"), { stdout: LS_0265 }, { stdout: LS_0265 }, {
      stdout: lsJson([{ windows: [{ id: 1 }] }]),
    });
  const backend = cliOnly(makeDeps(fake.run));
  await backend.kill(validatePaneId("2"));
  assert.equal(fake.calls.filter((c) => c.argv.at(-1) === "ls").length, 3);
  assert.equal(await backend.inspect(validatePaneId("2")), null);
});

Deno.test("kitty interrupt() checks the window exists first, because send-text exits 0 for unknown ids", async () => {
  const fake = fakeKitty("kitty-0.26")
    .on(rcArgv("kitty", "send-text", "--match=id:2", "\\x03"), {});
  const backend = cliOnly(makeDeps(fake.run));
  await assertMuxError(backend.interrupt(validatePaneId("9")), "pane_not_found");
  assert.ok(!fake.calls.some((c) => c.argv.includes("send-text")));
  await backend.interrupt(validatePaneId("2"));
  assert.deepEqual(fake.calls.at(-1)?.argv, rcArgv("kitty", "send-text", "--match=id:2", "\\x03"));
});

Deno.test("kitty refuses pane ids that are not window numbers before running anything", async () => {
  const fake = createFakeRunner();
  const backend = cliOnly(makeDeps(fake.run));
  for (const bad of ["id:1", "1 or id:2", "-1", "", "all"]) {
    await assertMuxError(backend.kill(forgedPaneId(bad)), "invalid_argument");
    await assertMuxError(backend.inspect(forgedPaneId(bad)), "invalid_argument");
  }
  assert.equal(fake.calls.length, 0);
});

Deno.test("kitty listOwned() finds marked windows on 0.30+ and nothing on 0.26", async () => {
  const old = fakeKitty("kitty-0.26");
  assert.deepEqual(await cliOnly(makeDeps(old.run)).listOwned(), []);
  assert.ok(!old.calls.some((c) => c.argv.at(-1) === "ls"));
  const fake = fakeKitty(
    "kitten-0.40",
    lsJson([{
      windows: [
        { id: 1 },
        { id: 4, title: "a", user_vars: { muxbridge_session: "ses_a", muxbridge_owner: "7:9" } },
        { id: 5, user_vars: { muxbridge_session: "junk value" } },
      ],
    }]),
  );
  assert.deepEqual(await cliOnly(makeDeps(fake.run)).listOwned(), [
    // token: null — the listing was read and holds no spawn token for it (docs/ownership.md).
    {
      paneId: "4",
      dead: false,
      title: "a",
      pid: 1004,
      sessionId: "ses_a",
      owner: "7:9",
      token: null,
    },
  ]);
});

Deno.test("kitty applyLayout() reshapes a tab only when it holds the anchor and owned windows alone", async () => {
  const layout = (ls: string, ids: string[], req = "main-vertical" as const) => {
    const fake = fakeKitty("kitten-0.40", ls)
      .on(rcArgv("kitten", "goto-layout", "--match=window_id:1", KITTY_LAYOUTS[req]), {});
    const backend = cliOnly(makeDeps(fake.run));
    const panes = ids.map(validatePaneId);
    return backend.applyLayout({ layout: req, mainPaneSize: 60, panes }).then((r) => ({
      ...r,
      ran: fake.calls.some((c) => c.argv.includes("goto-layout")),
    }));
  };
  const foreign = await layout(
    lsJson([{ layout: "fat", windows: [{ id: 1 }, { id: 2 }, { id: 3 }] }]),
    ["2"],
  );
  assert.equal(foreign.applied, false);
  assert.equal(foreign.ran, false);
  assert.match(foreign.detail, /user windows in tab 1 \(3\)/);
  const mine = await layout(lsJson([{ layout: "fat", windows: [{ id: 1 }, { id: 2 }] }]), ["2"]);
  assert.equal(mine.applied, true);
  assert.equal(mine.ran, true);
  assert.match(mine.detail, /tall on tab 1/);
  const marked = await layout(
    lsJson([{
      layout: "fat",
      windows: [{ id: 1 }, { id: 2, user_vars: { muxbridge_session: "ses_x" } }],
    }]),
    [],
  );
  assert.equal(marked.applied, true, "a marked window counts as owned");
  const second = await layout(lsJson([{ layout: "fat", windows: [{ id: 2 }, { id: 1 }] }]), ["2"]);
  assert.equal(second.applied, false);
  assert.match(second.detail, /not the first window/);
  const same = await layout(lsJson([{ layout: "tall", windows: [{ id: 1 }, { id: 2 }] }]), ["2"]);
  assert.equal(same.applied, false);
  assert.match(same.detail, /already uses tall/);
  const none = await layout(lsJson([{ windows: [{ id: 1 }] }]), []);
  assert.equal(none.applied, false);
  assert.match(none.detail, /no owned windows/);
});

Deno.test("kitty applyLayout() does not ask for a layout the tab has not enabled", async () => {
  const ls = JSON.stringify([{
    id: 1,
    tabs: [{
      id: 1,
      layout: "splits",
      enabled_layouts: ["splits", "stack"],
      windows: [{ id: 1, title: "a", pid: 10 }, { id: 2, title: "b", pid: 11 }],
    }],
  }]);
  const fake = fakeKitty("kitten-0.40", ls);
  const result = await cliOnly(makeDeps(fake.run)).applyLayout({
    layout: "tiled",
    mainPaneSize: 60,
    panes: [validatePaneId("2")],
  });
  assert.equal(result.applied, false);
  assert.match(result.detail, /grid is not in enabled_layouts/);
});

Deno.test("kitty doctor() explains an unreachable kitty and warns about missing marks on 0.26", async () => {
  const fake = createFakeRunner()
    .on(["kitten", "--version"], notFound("kitten"))
    .on(["kitty", "--version"], { stdout: V0265 })
    .on(rcArgv("kitty", "ls"), { code: 1, stderr: `No listen on socket found at: ${ADDR}\n` });
  const checks = await cliOnly(makeDeps(fake.run)).doctor();
  const by = Object.fromEntries(checks.map((c) => [c.name, c]));
  assert.equal(by["kitty binary"].status, "pass");
  assert.equal(by["kitty version"].status, "pass");
  assert.equal(by["kitty ownership marks"].status, "warn");
  assert.equal(by["kitty remote control"].status, "fail");
  assert.match(by["kitty remote control"].hint ?? "", /allow_remote_control yes/);
  assert.equal(by["kitty anchor"].status, "fail");
  const missing = createFakeRunner()
    .on(["kitten", "--version"], notFound("kitten"))
    .on(["kitty", "--version"], notFound("kitty"));
  const none = await cliOnly(makeDeps(missing.run)).doctor();
  assert.equal(none[0].name, "kitty binary");
  assert.equal(none[0].status, "fail");
  assert.match(none[0].hint ?? "", /apt install kitty/);
});

// -------------------------------------------------------------------- live: kitty 0.26.5, Xvfb

const kitty = sharedKittyServer();

function live(name: string, fn: (server: KittyServer, backend: Backend) => Promise<void>) {
  Deno.test({
    name: `kitty live: ${name}`,
    ...requires("kitty live tests", KITTY_TOOLS),
    async fn() {
      const server = await kitty.get();
      const backend = createKittyBackend(makeDeps(server.runner, {
        command_timeout_ms: 15_000,
        kitty: { listen_on: server.address, window_id: Number(server.anchorWindow) },
      }, server.env as Record<string, string>));
      try {
        await fn(server, backend);
      } finally {
        await server.closeOthers();
      }
    },
  });
}

/** Waits for the stand-in's first recorded start. */
async function firstLaunch(dir: string): Promise<Launch> {
  let found: Launch | undefined;
  await until("the program to start", async () => {
    found = (await recordedLaunches(dir))[0];
    return found !== undefined;
  }, KITTY_WAIT);
  return found as unknown as Launch;
}

live(
  "kitty 0.26.5 send-text exits 0 for an unknown window (why interrupt() checks first); a gone anchor is pane_not_found",
  async (server, backend) => {
    const probe = await backend.probe();
    assert.equal(probe.binary, "kitty", "Debian's 0.26.5 has no kitten");
    const r = await server.rc(["send-text", "--match=id:99999", "x"]);
    assert.equal(r.code, 0);
    await assertMuxError(backend.interrupt(validatePaneId("99999")), "pane_not_found");
    const lost = createKittyBackend(makeDeps(server.runner, {
      command_timeout_ms: 15_000,
      kitty: { listen_on: server.address, window_id: 99999 },
    }, server.env as Record<string, string>));
    await assertMuxError(
      lost.spawn({ ...spawnReq(), argv: ["sleep", "600"], cwd: server.dir }),
      "pane_not_found",
    );
  },
);

live(
  "spawn() gets hostile env, cwd, argv and title values through kitty unchanged",
  async (server, backend) => {
    await backend.probe();
    const work = await Deno.makeTempDir({ dir: server.dir, prefix: "hostile-" });
    const prog = await Deno.makeTempDir({ dir: server.dir, prefix: "prog-" });
    const cwd = `${work}/d $HOME \${HOME} ~ 'q'`;
    await Deno.mkdir(cwd);
    const standIn = await writeStandIn(prog);
    const password = "a $HOME ${HOME} $$ $(x) `y` 'q' b";
    const argv = [standIn, "@active-kitty-window-id", "$HOME", "~", "@selection", "-x"];
    const { paneId } = await backend.spawn({
      sessionId: validateSessionId("ses_hostile"),
      title: "current",
      argv,
      cwd,
      env: { OPENCODE_SERVER_PASSWORD: password },
      owner: "cli",
    });
    const launch = await firstLaunch(prog);
    assert.deepEqual(launch.argv, argv.slice(1));
    assert.equal(launch.cwd, cwd);
    assert.equal(launch.password, password);
    await until(
      "the title",
      async () => (await backend.inspect(paneId))?.title === "current",
      KITTY_WAIT,
    );
  },
);

Deno.test({
  name:
    "kitty live: after the version probe, every call goes over kitty's socket, none through kitty @",
  ...requires("kitty live tests", KITTY_TOOLS),
  async fn() {
    const server = await kitty.get();
    const ran: string[] = [];
    const recording: Runner = (argv, opts) => {
      ran.push(argv.join(" "));
      return server.runner(argv, opts);
    };
    const backend = createKittyBackend(makeDeps(recording, {
      command_timeout_ms: 15_000,
      kitty: { listen_on: server.address, window_id: Number(server.anchorWindow) },
    }, server.env as Record<string, string>));
    try {
      await backend.probe();
      const { paneId } = await backend.spawn({
        ...spawnReq(),
        argv: ["sleep", "600"],
        cwd: server.dir,
      });
      await backend.setTitle(paneId, "renamed");
      await backend.focus?.(paneId);
      await backend.applyLayout({ layout: "tiled", mainPaneSize: 60, panes: [paneId] });
      assert.equal((await backend.inspect(paneId))?.title, "renamed");
      // send-text gets no answer: the Ctrl+C it carried ends sleep, and with it the window.
      await backend.interrupt(paneId);
      await until(
        "the interrupted window to close",
        async () => !(await server.windowIds()).includes(paneId),
        KITTY_WAIT,
      );
      const second = await backend.spawn({
        ...spawnReq(),
        argv: ["sleep", "600"],
        cwd: server.dir,
      });
      await backend.kill(second.paneId);
      assert.ok(!(await server.windowIds()).includes(second.paneId));
      assert.deepEqual(ran.filter((argv) => argv.includes(" @ ")), []);
      assert.ok(ran.includes("kitty --version"), ran.join("; "));
    } finally {
      await server.closeOthers();
    }
  },
});

live("kill() returns only once kitty no longer lists the window", async (server, backend) => {
  await backend.probe();
  const { paneId } = await backend.spawn({
    sessionId: validateSessionId("ses_kill"),
    title: "k",
    argv: ["sleep", "600"],
    cwd: server.dir,
    env: {},
    owner: "cli",
  });
  const pid = (await backend.inspect(paneId))?.pid;
  assert.ok(pid);
  await backend.kill(paneId);
  assert.ok(!(await server.windowIds()).includes(paneId));
  await until("sleep to end", () => !createProcesses().alive(pid), KITTY_WAIT);
  await assertMuxError(backend.kill(paneId), "pane_not_found");
});

live(
  "applyLayout() leaves a tab with a user window alone, then applies tall to owned windows",
  async (server, backend) => {
    await backend.probe();
    const { paneId } = await backend.spawn({
      sessionId: validateSessionId("ses_layout"),
      title: "l",
      argv: ["sleep", "600"],
      cwd: server.dir,
      env: {},
      owner: "cli",
    });
    const user = (await server.rc(["launch", "--keep-focus", "sleep", "600"])).stdout.trim();
    const blocked = await backend.applyLayout({
      layout: "main-vertical",
      mainPaneSize: 60,
      panes: [paneId],
    });
    assert.equal(blocked.applied, false);
    assert.match(blocked.detail, new RegExp(`user windows in tab \\d+ \\(${user}\\)`));
    await server.rc(["close-window", `--match=id:${user}`]);
    await until(
      "the user window to close",
      async () => !(await server.windowIds()).includes(user),
      KITTY_WAIT,
    );
    await server.rc(["goto-layout", "fat"]);
    const applied = await backend.applyLayout({
      layout: "main-vertical",
      mainPaneSize: 60,
      panes: [paneId],
    });
    assert.equal(applied.applied, true, applied.detail);
    const tabs = parseLs((await server.rc(["ls"])).stdout);
    assert.equal(tabs[0].layout, "tall");
  },
);

live(
  "focus() brings a window to the front; a gone window is pane_not_found",
  async (server, backend) => {
    await backend.probe();
    const { paneId } = await backend.spawn({
      sessionId: validateSessionId("ses_focus"),
      title: "f",
      argv: ["sleep", "600"],
      cwd: server.dir,
      env: {},
      owner: "cli",
    });
    await backend.setTitle(paneId, "[needs you] f");
    const focused = async () => {
      const ls = JSON.parse((await server.rc(["ls"])).stdout) as Array<
        { tabs: Array<{ windows: Array<{ id: number; is_focused: boolean; title: string }> }> }
      >;
      return ls.flatMap((o) => o.tabs.flatMap((t) => t.windows));
    };
    await server.rc(["focus-window", `--match=id:${server.anchorWindow}`]);
    await until(
      "the anchor to have the focus",
      async () =>
        (await focused()).some((w) => String(w.id) === server.anchorWindow && w.is_focused),
      KITTY_WAIT,
    );
    await backend.focus!(paneId);
    await until(
      "the child's window to have the focus",
      async () => (await focused()).some((w) => String(w.id) === paneId && w.is_focused),
      KITTY_WAIT,
    );
    assert.equal((await focused()).find((w) => String(w.id) === paneId)?.title, "[needs you] f");
    await backend.kill(paneId);
    await assertMuxError(backend.focus!(paneId), "pane_not_found");
  },
);
