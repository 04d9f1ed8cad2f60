/**
 * The tmux backend against a fake runner (argv, version gating, rejects) and against a real,
 * private tmux server per test (everything else).
 */

import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { createTmuxBackend } from "../../backends/tmux/backend.ts";
import { escapeArgument, joinCommands } from "../../backends/tmux/_command.ts";
import { mainPaneValue, planLayout } from "../../backends/tmux/_layout.ts";
import { parseWindowLayout } from "../../backends/tmux/_window_layout.ts";
import {
  escapeFormat,
  PANE_FORMAT,
  type PaneRow,
  parsePaneRows,
  parseTmuxVersion,
  tmuxPaneId,
} from "../../backends/tmux/_parse.ts";
import type { Backend, BackendDeps } from "../../lib/backend/backend.ts";
import { createRealClock } from "../../lib/sys/clock.ts";
import { closePane } from "../../lib/session/close_pane.ts";
import type { ConfigLayer } from "../../lib/config/config.ts";
import { detectAll, type FullConfig, resolveConfig } from "../helpers/config.ts";
import { isMuxError, MuxError } from "../../lib/sys/errors.ts";
import type { Runner } from "../../lib/sys/exec.ts";
import { silentLogger } from "../../lib/sys/log.ts";
import { createProcesses } from "../../lib/sys/processes.ts";
import { quote } from "../../lib/sys/shell_quote.ts";
import {
  cleanTitle,
  type PaneId,
  validatePaneId,
  validateSessionId,
} from "../../lib/sys/validate.ts";
import { createFakeRunner } from "../fakes/fake_runner.ts";
import { fakeEnv } from "../fakes/fake_env.ts";
import { assertMuxError } from "../helpers/assert_mux_error.ts";
import {
  startTmuxServer,
  type TmuxServer,
  type TmuxServerOptions,
} from "../helpers/tmux_server.ts";
import { until } from "../helpers/until.ts";
import { forgedPaneId } from "../helpers/ids.ts";

const clock = createRealClock();

function makeDeps(run: Runner, flags: ConfigLayer = {}, env: Record<string, string> = {}) {
  const lookup = fakeEnv(env);
  const deps: BackendDeps<FullConfig> = {
    run,
    env: lookup,
    clock,
    config: resolveConfig({ env: lookup, flags: { backend: "tmux", ...flags } }),
    identity: detectAll(lookup),
    log: silentLogger,
  };
  return deps;
}

/** A backend on the test's private server, anchored at its first pane. */
function liveBackend(server: TmuxServer, flags: ConfigLayer = {}): Backend {
  return createTmuxBackend(makeDeps(server.runner, {
    command_timeout_ms: 3000,
    ...flags,
    tmux: { socket_name: server.socketName, target: server.anchorPane, ...(flags.tmux ?? {}) },
  }));
}

async function withServer(
  options: TmuxServerOptions,
  fn: (server: TmuxServer) => Promise<void>,
): Promise<void> {
  const server = await startTmuxServer(options);
  try {
    await fn(server);
  } finally {
    await server.close();
  }
}

async function rows(server: TmuxServer, ...scope: string[]): Promise<PaneRow[]> {
  return parsePaneRows(await server.tmux(["list-panes", ...scope, "-F", PANE_FORMAT]));
}

async function rowOf(server: TmuxServer, paneId: string): Promise<PaneRow | undefined> {
  return (await rows(server, "-a")).find((r) => r.paneId === paneId);
}

const spawnReq = (sessionId: string, argv: readonly string[], cwd: string) => ({
  sessionId: validateSessionId(sessionId),
  title: `title ${sessionId}`,
  argv,
  cwd,
  env: {},
  owner: "4242:777",
});

const SLEEP = ["sleep", "100000"];

// ------------------------------------------------------------------ parsing and planning (pure)

Deno.test("parseTmuxVersion() turns tmux version text into semver", () => {
  const table: Array<[string, string | null]> = [
    ["tmux 3.3a", "3.3.0"],
    ["tmux next-3.8", "3.8.0"],
    ["tmux 3.2", "3.2.0"],
    ["tmux 3.4-rc", "3.4.0"],
    ["3.3a", "3.3.0"],
    ["tmux 2.9\n", "2.9.0"],
    ["tmux master", null],
    ["hello", null],
    ["", null],
  ];
  for (const [text, want] of table) assert.equal(parseTmuxVersion(text), want, text);
});

Deno.test("escapeArgument() keeps tmux from reading a trailing ';' as a command separator", () => {
  assert.equal(escapeArgument("a;"), "a\\;");
  assert.equal(escapeArgument(";"), "\\;");
  assert.equal(escapeArgument("a\\;"), "a\\\\;");
  assert.equal(escapeArgument("a;b"), "a;b");
  assert.deepEqual(joinCommands([["kill-pane", "-t", "%1"], ["x", "y;"]]), [
    "kill-pane",
    "-t",
    "%1",
    ";",
    "x",
    "y\\;",
  ]);
  assert.equal(escapeFormat("a#{b}#"), "a##{b}##");
});

Deno.test("parsePaneRows() reads rows and rejects a malformed one", () => {
  assert.deepEqual(parsePaneRows(""), []);
  assert.throws(
    () => parsePaneRows("garbage\n"),
    (e: unknown) => isMuxError(e, "unparseable_output"),
  );
  assert.throws(
    () => parsePaneRows("\x1e%1\x1f0\n"),
    (e: unknown) => isMuxError(e, "unparseable_output"),
  );
});

Deno.test("parseWindowLayout() reads tmux's layout string", () => {
  const tree = parseWindowLayout(
    "5f21,200x50,0,0{119x50,0,0,0,80x50,120,0[80x24,120,0,2,80x25,120,25,3]}",
  );
  assert.deepEqual(tree, {
    kind: "lr",
    width: 200,
    height: 50,
    children: [
      { kind: "pane", paneId: "%0", width: 119, height: 50 },
      {
        kind: "tb",
        width: 80,
        height: 50,
        children: [
          { kind: "pane", paneId: "%2", width: 80, height: 24 },
          { kind: "pane", paneId: "%3", width: 80, height: 25 },
        ],
      },
    ],
  });
  assert.equal(parseWindowLayout("5f21,200x50,0,0{119x50"), null);
  assert.equal(parseWindowLayout("nonsense"), null);
});

Deno.test("mainPaneValue() uses a percentage from tmux 3.2 and cells before", () => {
  assert.equal(mainPaneValue("3.3a", 200, 60), "60%");
  assert.equal(mainPaneValue("3.2", 200, 60), "60%");
  assert.equal(mainPaneValue("3.1c", 200, 60), "120");
  assert.equal(mainPaneValue("3.0", 81, 50), "41");
});

function row(paneId: string, extra: Partial<PaneRow> = {}): PaneRow {
  return {
    paneId: tmuxPaneId(paneId),
    dead: false,
    active: false,
    index: Number(paneId.slice(1)),
    width: 10,
    height: 10,
    windowId: "@0",
    windowIndex: 0,
    windowActive: true,
    windowZoomed: false,
    windowWidth: 200,
    windowHeight: 50,
    sessionId: "$0",
    version: "3.3a",
    windowLayout: "",
    overflow: false,
    owner: "",
    session: "",
    title: "",
    ...extra,
  };
}

Deno.test("planLayout() selects the layout only when the window holds anchor and owned panes", () => {
  const owned = new Set(["%1", "%2"]);
  const plan = planLayout({
    rows: [row("%0"), row("%1"), row("%2")],
    anchor: "%0",
    owned,
    layout: "main-vertical",
    mainPaneSize: 60,
  });
  assert.deepEqual(plan.commands, [
    ["set-window-option", "-t", "@0", "main-pane-width", "60%"],
    ["select-layout", "-t", "@0", "main-vertical"],
  ]);
  const layout =
    "abcd,200x50,0,0[200x25,0,0{100x25,0,0,0,99x25,101,0[99x12,101,0,1,99x12,101,13,2]}," +
    "200x24,0,26,3]";
  const withUser = planLayout({
    rows: [row("%0", { windowLayout: layout }), row("%1"), row("%2"), row("%3")],
    anchor: "%0",
    owned,
    layout: "main-vertical",
    mainPaneSize: 60,
  });
  assert.ok(withUser.commands.every((c) => c[0] === "resize-pane"), JSON.stringify(withUser));
  assert.match(withUser.detail.join(), /user panes present/);
  const zoomed = planLayout({
    rows: [row("%0", { windowZoomed: true }), row("%1"), row("%2")],
    anchor: "%0",
    owned,
    layout: "tiled",
    mainPaneSize: 60,
  });
  assert.deepEqual(zoomed.commands, []);
});

Deno.test("planLayout() evens out only containers made of owned panes", () => {
  // Anchor %0 left, user %3 below everything, owned %1 %2 %4 stacked on the right.
  const layout = "abcd,200x50,0,0[200x25,0,0{100x25,0,0,0,99x25,101,0[99x13,101,0,1,99x5,101,14," +
    "2,99x5,101,20,4]},200x24,0,26,3]";
  const plan = planLayout({
    rows: [row("%0", { windowLayout: layout }), row("%1"), row("%2"), row("%3"), row("%4")],
    anchor: "%0",
    owned: new Set(["%1", "%2", "%4"]),
    layout: "main-vertical",
    mainPaneSize: 60,
  });
  const once = [["resize-pane", "-t", "%1", "-y", "8"], ["resize-pane", "-t", "%2", "-y", "8"]];
  assert.deepEqual(plan.commands, [...once, ...once]);
});

// ------------------------------------------------------------------ probe with a fake runner

function probeFake(version: string | Error) {
  const fake = createFakeRunner();
  fake.on(["tmux", "-u", "-V"], version instanceof Error ? version : { stdout: `${version}\n` });
  fake.on(["tmux", "-u", "-L", "s", "display-message", "-p", "#{version}"], { stdout: "3.3a\n" });
  const backend = createTmuxBackend(makeDeps(fake.run, { tmux: { socket_name: "s" } }));
  return { fake, backend };
}

Deno.test("tmux probe() parses 3.3a and next-3.8 and passes the timeout on every call", async () => {
  const a = probeFake("tmux 3.3a");
  assert.deepEqual(await a.backend.probe(), { binary: "tmux", version: "3.3.0" });
  assert.ok(a.fake.calls.every((c) => c.opts.timeoutMs === 5000));
  assert.deepEqual((await probeFake("tmux next-3.8").backend.probe()).version, "3.8.0");
});

Deno.test("tmux probe() refuses tmux 2.9 with unsupported_version and a hint", async () => {
  const { backend } = probeFake("tmux 2.9");
  await assert.rejects(backend.probe(), (err: unknown) => {
    assert.ok(isMuxError(err, "unsupported_version"));
    assert.equal(err.message, "tmux 2.9 is too old, need >= 3.0");
    assert.ok(err.hint);
    return true;
  });
});

Deno.test("tmux probe() reports garbage version text as unparseable_output", async () => {
  await assertMuxError(probeFake("hello world").backend.probe(), "unparseable_output");
});

Deno.test("tmux probe() keeps binary_not_found and adds a tmux hint", async () => {
  const { backend } = probeFake(new MuxError("binary_not_found", 'Cannot run "tmux"'));
  await assert.rejects(backend.probe(), (err: unknown) => {
    assert.ok(isMuxError(err, "binary_not_found"));
    assert.match(err.hint ?? "", /tmux >= 3.0/);
    return true;
  });
});

Deno.test("tmux probe() reports a missing server as backend_unreachable", async () => {
  const fake = createFakeRunner();
  fake.on(["tmux", "-u", "-V"], { stdout: "tmux 3.3a\n" });
  fake.on(["tmux", "-u", "-L", "s", "display-message", "-p", "#{version}"], {
    code: 1,
    stderr: "no server running on /tmp/tmux-0/s\n",
  });
  const backend = createTmuxBackend(makeDeps(fake.run, { tmux: { socket_name: "s" } }));
  await assertMuxError(backend.probe(), "backend_unreachable");
});

Deno.test("tmux backend rejects unsafe ids, directories and variables before running tmux", async () => {
  const fake = createFakeRunner();
  const backend = createTmuxBackend(makeDeps(fake.run, { tmux: { target: "%0" } }));
  const ok = spawnReq("ses_ok", SLEEP, "/tmp");
  await assertMuxError(backend.spawn({ ...ok, cwd: "relative/dir" }), "invalid_argument");
  await assertMuxError(backend.spawn({ ...ok, owner: "-x" }), "invalid_argument");
  await assertMuxError(backend.spawn({ ...ok, env: { "BAD-NAME": "x" } }), "invalid_argument");
  await assertMuxError(backend.spawn({ ...ok, argv: [] }), "invalid_argument");
  await assertMuxError(backend.inspect(forgedPaneId("-t")), "invalid_argument");
  await assertMuxError(backend.kill(validatePaneId("t")), "invalid_argument");
  await assertMuxError(backend.interrupt(forgedPaneId("%1;kill-server")), "invalid_argument");
  await assertMuxError(backend.setTitle(forgedPaneId("-a"), "x"), "invalid_argument");
  assert.deepEqual(fake.calls, []);
});

Deno.test("tmux spawn() without tmux.target outside tmux is no_backend", async () => {
  const backend = createTmuxBackend(
    makeDeps(createFakeRunner().run, { tmux: { socket_name: "s" } }),
  );
  await assert.rejects(backend.spawn(spawnReq("ses_a", SLEEP, "/tmp")), (err: unknown) => {
    assert.ok(isMuxError(err, "no_backend"));
    assert.match(err.hint ?? "", /set tmux.target/);
    return true;
  });
});

// ------------------------------------------------------------------ live, on a private server

Deno.test("tmux spawn() runs the exact argv, cwd, title, env and marks without moving focus", async () => {
  await withServer({}, async (server) => {
    const backend = liveBackend(server);
    const cwd = `${server.dir}/dir with spaces 'single' "double" #{pane_id} $(touch pwned);`;
    await Deno.mkdir(cwd);
    const out = `${server.dir}/argv.bin`;
    const envOut = `${server.dir}/env.bin`;
    const script =
      `printf '%s\\0' "$@" > ${quote(out)}.tmp && mv ${quote(out)}.tmp ${quote(out)};` +
      ` printf '%s' "$MUXBRIDGE_SECRET" > ${quote(envOut)}; exec sleep 100000`;
    const hostile = [
      "$(touch pwned)",
      "`touch pwned`",
      "'single' \"double\"",
      "new\nline",
      ";",
      "ends;",
      "ends\\;",
      "#{pane_id} #(touch pwned)",
      "-dash",
      "",
      "spa ce\ttab",
      "ünï ☃",
    ];
    const title = "fix \"it\" 'now' #{pane_id} $(touch pwned)\nsecond line;";
    const secret = "s3cr$t `x` 'q' #{pane_id};";
    const spawned = await backend.spawn({
      sessionId: validateSessionId("ses_Hostile1"),
      title,
      argv: ["/bin/sh", "-c", script, "sh", ...hostile],
      cwd,
      env: { MUXBRIDGE_SECRET: secret },
      owner: "4242:777",
    });
    assert.match(spawned.paneId, /^%\d+$/);
    await until("the argv file", () => existsSync(out));
    const want = new TextEncoder().encode(hostile.map((a) => `${a}\0`).join(""));
    assert.deepEqual(await Deno.readFile(out), want);
    await until("the env file", () => existsSync(envOut));
    assert.equal(await Deno.readTextFile(envOut), secret);
    assert.equal(existsSync(`${cwd}/pwned`) || existsSync(`${server.dir}/pwned`), false);

    const pane = await rowOf(server, spawned.paneId);
    const anchor = await rowOf(server, server.anchorPane);
    assert.ok(pane && anchor);
    assert.equal(pane.windowId, anchor.windowId, "the pane opens in the anchor's window");
    assert.equal(pane.title, cleanTitle(title));
    assert.equal(pane.session, "ses_Hostile1");
    assert.equal(pane.owner, "4242:777");
    assert.equal(pane.pid, spawned.pid);
    assert.equal(anchor.active, true, "the anchor keeps the focus");
    await until("the pane's cwd", async () => {
      const path = await server.tmux([
        "display-message",
        "-p",
        "-t",
        spawned.paneId,
        "#{pane_current_path}",
      ]);
      return path.replace(/\n$/, "") === cwd;
    });
  });
});

Deno.test("tmux spawn() splits the anchor once, then the newest owned pane", async () => {
  await withServer({}, async (server) => {
    const backend = liveBackend(server);
    const a = await backend.spawn(spawnReq("ses_a", SLEEP, server.dir));
    const b = await backend.spawn(spawnReq("ses_b", SLEEP, server.dir));
    const all = await rows(server, "-a");
    const [anchor, pa, pb] = [server.anchorPane, a.paneId, b.paneId].map((id) =>
      all.find((r) => r.paneId === id)!
    );
    assert.equal(anchor.height, 50, "the anchor is split left/right only");
    assert.equal(pa.width, pb.width, "the second pane is below the first");
    assert.ok(pa.height + pb.height + 1 === 50);
    assert.equal(all.length, 3);
  });
});

Deno.test("tmux inspect() reports a live pane, null for an unknown one, and a dead pane", async () => {
  await withServer({}, async (server) => {
    const backend = liveBackend(server);
    const live = await backend.spawn(spawnReq("ses_live", SLEEP, server.dir));
    const info = await backend.inspect(live.paneId);
    assert.deepEqual(info, {
      paneId: live.paneId,
      dead: false,
      pid: live.pid,
      title: "title ses_live",
      sessionId: validateSessionId("ses_live"),
      owner: "4242:777",
      // Spawned without a token: its start command carries none.
      token: null,
    });
    assert.equal(await backend.inspect(validatePaneId("%999")), null);

    await server.tmux(["set-option", "-w", "-t", server.anchorPane, "remain-on-exit", "on"]);
    const dying = await backend.spawn(
      spawnReq("ses_dead", ["/bin/sh", "-c", "read -r line; exit 3"], server.dir),
    );
    await server.tmux(["send-keys", "-t", dying.paneId, "Enter"]);
    await until(
      "the pane to be dead",
      async () => (await backend.inspect(dying.paneId))?.dead === true,
    );
    const closed = await closePane(backend, dying.paneId, { graceMs: 100, clock });
    assert.deepEqual(closed, { alreadyGone: false, killed: true, programTerminated: false });
    assert.equal(await rowOf(server, dying.paneId), undefined);
  });
});

Deno.test("tmux inspect() reads the spawn token in a pane's start command; instance() names the server", async () => {
  await withServer({}, async (server) => {
    const backend = liveBackend(server);
    const token = "0123456789abcdef0123456789abcdef";
    const pane = await backend.spawn({ ...spawnReq("ses_token", SLEEP, server.dir), token });
    assert.equal((await backend.inspect(pane.paneId))?.token, token);
    const instance = await backend.instance();
    assert.equal(instance?.address, server.socketPath);
    assert.equal(instance?.pid, server.serverPid);
    const [from, to] = instance?.startedAt ?? [0, 1];
    assert.ok(from === to && Math.abs(from * 1000 - Date.now()) < 3_600_000, `${from}`);
  });
});

Deno.test("tmux closePane() closes a pane whose program ends on Ctrl+C before the grace period", async () => {
  await withServer({}, async (server) => {
    const backend = liveBackend(server);
    const { paneId, pid } = await backend.spawn(spawnReq("ses_int", SLEEP, server.dir));
    // A grace no loaded machine exhausts: killed false says the pane went before it ended.
    const result = await closePane(backend, paneId, {
      graceMs: 60_000,
      clock,
      pid,
      processes: createProcesses(),
    });
    assert.deepEqual(result, { alreadyGone: false, killed: false, programTerminated: false });
    assert.equal(await rowOf(server, paneId), undefined);
  });
});

Deno.test("tmux closePane() kills a pane whose program ignores SIGINT after the grace period", async () => {
  await withServer({}, async (server) => {
    const backend = liveBackend(server);
    const { paneId, pid } = await backend.spawn(
      spawnReq("ses_trap", ["/bin/sh", "-c", "trap '' INT; exec sleep 100000"], server.dir),
    );
    // Ctrl+C must arrive after the trap is set, i.e. once sh has exec'd sleep.
    await until("sleep to run", async () => {
      const cmd = await server.tmux([
        "display-message",
        "-p",
        "-t",
        paneId,
        "#{pane_current_command}",
      ]);
      return cmd.trim() === "sleep";
    });
    const result = await closePane(backend, paneId, {
      graceMs: 200,
      clock,
      pid,
      processes: createProcesses(),
    });
    assert.equal(result.killed, true);
    assert.equal(result.alreadyGone, false);
    assert.equal(await rowOf(server, paneId), undefined);
    await until("the program to end", () => !createProcesses().alive(pid!));
  });
});

Deno.test("tmux closePane() reports a pane that is already gone", async () => {
  await withServer({}, async (server) => {
    const backend = liveBackend(server);
    const { paneId } = await backend.spawn(spawnReq("ses_gone", SLEEP, server.dir));
    await server.tmux(["kill-pane", "-t", paneId]);
    const result = await closePane(backend, paneId, { graceMs: 200, clock });
    assert.deepEqual(result, { alreadyGone: true, killed: false, programTerminated: false });
    await assertMuxError(backend.kill(paneId), "pane_not_found");
    await assertMuxError(backend.interrupt(paneId), "pane_not_found");
    await assertMuxError(backend.setTitle(paneId, "x"), "pane_not_found");
  });
});

Deno.test("tmux listOwned() sees marks another backend instance wrote, and no user pane", async () => {
  await withServer({}, async (server) => {
    const first = liveBackend(server);
    const a = await first.spawn(spawnReq("ses_one", SLEEP, server.dir));
    const b = await first.spawn({ ...spawnReq("ses_two", SLEEP, server.dir), owner: "cli" });
    await server.tmux(["split-window", "-d", "-t", server.anchorPane, ...SLEEP]);
    const second = liveBackend(server); // as after a crash: nothing in memory
    const owned = await second.listOwned();
    assert.deepEqual(
      owned.map((p) => [p.paneId, p.sessionId, p.owner]).sort(),
      [[a.paneId, "ses_one", "4242:777"], [b.paneId, "ses_two", "cli"]].sort(),
    );
    await second.setTitle(a.paneId, "renamed #{pane_id};");
    assert.equal((await second.inspect(a.paneId))?.title, "renamed #{pane_id};");
  });
});

Deno.test("tmux applyLayout() applies main-vertical when only anchor and owned panes share the window", async () => {
  await withServer({}, async (server) => {
    const backend = liveBackend(server);
    const panes = [];
    for (const id of ["ses_l1", "ses_l2", "ses_l3"]) {
      panes.push((await backend.spawn(spawnReq(id, SLEEP, server.dir))).paneId);
    }
    const result = await backend.applyLayout({ layout: "main-vertical", mainPaneSize: 60, panes });
    assert.equal(result.applied, true, result.detail);
    const anchor = await rowOf(server, server.anchorPane);
    assert.ok(anchor && Math.abs(anchor.width - 120) <= 2, `main pane is ${anchor?.width} wide`);
    assert.equal(anchor.height, 50);
    assert.equal(anchor.active, true);
    const owned = await Promise.all(panes.map((p) => rowOf(server, p)));
    const heights = owned.map((r) => r!.height);
    assert.ok(Math.max(...heights) - Math.min(...heights) <= 1, `heights ${heights}`);
  });
});

Deno.test("tmux applyLayout() never reshapes a user pane in the anchor's window", async () => {
  await withServer({}, async (server) => {
    const backend = liveBackend(server);
    const user = (await server.tmux([
      "split-window",
      "-d",
      "-v",
      "-P",
      "-F",
      "#{pane_id}",
      "-t",
      server.anchorPane,
      ...SLEEP,
    ])).trim();
    const panes: PaneId[] = [];
    for (const id of ["ses_u1", "ses_u2", "ses_u3"]) {
      panes.push((await backend.spawn(spawnReq(id, SLEEP, server.dir))).paneId);
    }
    const geometry = async (id: string) =>
      (await server.tmux([
        "display-message",
        "-p",
        "-t",
        id,
        "#{pane_left} #{pane_top} #{pane_width} #{pane_height}",
      ])).trim();
    const userBefore = await geometry(user);
    const anchorBefore = await geometry(server.anchorPane);
    const heights = () => Promise.all(panes.map(async (p) => (await rowOf(server, p))!.height));
    const even = (h: number[]) => Math.max(...h) - Math.min(...h) <= 1;
    // Each open evened the column out in its own tmux call.
    assert.ok(even(await heights()), `heights after the opens ${await heights()}`);
    await server.tmux(["resize-pane", "-t", panes[0], "-y", "3"]);
    assert.ok(!even(await heights()));
    const result = await backend.applyLayout({ layout: "main-vertical", mainPaneSize: 60, panes });
    assert.match(result.detail, /user panes present/);
    assert.equal(await geometry(user), userBefore);
    assert.equal(await geometry(server.anchorPane), anchorBefore);
    assert.ok(even(await heights()), `heights ${await heights()}`);
    assert.equal(result.applied, true, "owned panes were evened out");
  });
});

Deno.test("tmux spawn() overflows into a tagged window when the anchor's window is full", async () => {
  await withServer({ width: 80, height: 24 }, async (server) => {
    const backend = liveBackend(server);
    const panes: PaneId[] = [];
    for (let i = 0; i < 15; i++) {
      panes.push((await backend.spawn(spawnReq(`ses_o${i}`, SLEEP, server.dir))).paneId);
    }
    const all = await rows(server, "-a");
    const anchor = all.find((r) => r.paneId === server.anchorPane)!;
    const inAnchorWindow = all.filter((r) => r.windowId === anchor.windowId).length - 1;
    const overflowPanes = all.filter((r) => r.windowId !== anchor.windowId);
    assert.equal(inAnchorWindow + overflowPanes.length, 15);
    assert.ok(overflowPanes.length > 0, "some panes overflowed");
    assert.ok(overflowPanes.every((r) => r.overflow && r.session !== ""));
    assert.ok(anchor.active && anchor.windowActive, "the user's window and pane keep the focus");
    const layout = await backend.applyLayout({ layout: "main-vertical", mainPaneSize: 60, panes });
    assert.match(layout.detail, /tiled on overflow window/);
  });
});

Deno.test("tmux spawn() with placement window always uses the muxbridge window", async () => {
  await withServer({}, async (server) => {
    const backend = liveBackend(server, { placement: "window" });
    const a = await backend.spawn(spawnReq("ses_w1", SLEEP, server.dir));
    const b = await backend.spawn(spawnReq("ses_w2", SLEEP, server.dir));
    const all = await rows(server, "-a");
    const anchor = all.find((r) => r.paneId === server.anchorPane)!;
    const [ra, rb] = [a, b].map((p) => all.find((r) => r.paneId === p.paneId)!);
    assert.equal(all.filter((r) => r.windowId === anchor.windowId).length, 1);
    assert.equal(ra.windowId, rb.windowId);
    assert.equal(ra.overflow, true);
    assert.ok(anchor.windowActive, "the user's window stays current");
  });
});

Deno.test("tmux backend finds the server and anchor from $TMUX and $TMUX_PANE", async () => {
  await withServer({}, async (server) => {
    const backend = createTmuxBackend(makeDeps(server.runner, {}, {
      TMUX: `${server.socketPath},${server.serverPid},0`,
      TMUX_PANE: server.anchorPane,
    }));
    const { paneId } = await backend.spawn(spawnReq("ses_env", SLEEP, server.dir));
    assert.equal((await rowOf(server, paneId))?.session, "ses_env");
    const doctor = await backend.doctor();
    assert.deepEqual(doctor.map((c) => c.status), ["pass", "pass", "pass", "pass"]);
  });
});

Deno.test("tmux backend resolves a session name in tmux.target to its active pane", async () => {
  await withServer({}, async (server) => {
    const backend = liveBackend(server, { tmux: { target: "t" } });
    const { paneId } = await backend.spawn(spawnReq("ses_target", SLEEP, server.dir));
    const all = await rows(server, "-a");
    assert.equal(all.find((r) => r.paneId === paneId)?.windowId, all[0].windowId);
  });
});

Deno.test("tmux probe() and doctor() pass on a real server", async () => {
  await withServer({}, async (server) => {
    const backend = liveBackend(server);
    const probed = await backend.probe();
    assert.match(probed.version, /^\d+\.\d+\.0$/);
    const checks = await backend.doctor();
    assert.deepEqual(checks.map((c) => [c.name, c.status]), [
      ["tmux binary", "pass"],
      ["tmux version", "pass"],
      ["tmux server", "pass"],
      ["tmux anchor", "pass"],
    ]);
    const noAnchor = createTmuxBackend(
      makeDeps(server.runner, { tmux: { socket_name: server.socketName } }),
    );
    const anchorCheck = (await noAnchor.doctor()).find((c) => c.name === "tmux anchor");
    assert.equal(anchorCheck?.status, "fail");
    assert.match(anchorCheck?.hint ?? "", /tmux.target/);
  });
});

Deno.test("tmux backend fails with backend_unreachable, promptly, once the server is killed", async () => {
  await withServer({}, async (server) => {
    const backend = liveBackend(server);
    const { paneId } = await backend.spawn(spawnReq("ses_k", SLEEP, server.dir));
    await server.tmux(["kill-server"]);
    const started = clock.now();
    await assertMuxError(backend.inspect(paneId), "backend_unreachable");
    await assertMuxError(backend.listOwned(), "backend_unreachable");
    await assertMuxError(backend.interrupt(paneId), "backend_unreachable");
    await assertMuxError(backend.kill(paneId), "backend_unreachable");
    await assertMuxError(
      backend.spawn(spawnReq("ses_k2", SLEEP, server.dir)),
      "backend_unreachable",
    );
    await assertMuxError(
      backend.applyLayout({ layout: "tiled", mainPaneSize: 60, panes: [paneId] }),
      "backend_unreachable",
    );
    await assertMuxError(backend.probe(), "backend_unreachable");
    await assertMuxError(
      closePane(backend, paneId, { graceMs: 100, clock }),
      "backend_unreachable",
    );
    assert.ok(clock.now() - started < 3000, "no call waited for its timeout");
    const doctor = await backend.doctor();
    assert.equal(doctor.find((c) => c.name === "tmux server")?.status, "fail");
  });
});

Deno.test("tmux spawn() next to a pane that is gone fails pane_not_found with an anchor hint", async () => {
  await withServer({}, async (server) => {
    const backend = liveBackend(server, { tmux: { target: "%77" } });
    await assert.rejects(backend.spawn(spawnReq("ses_a", SLEEP, server.dir)), (err: unknown) => {
      assert.ok(isMuxError(err, "pane_not_found"));
      assert.match(err.hint ?? "", /tmux.target/);
      return true;
    });
    const named = liveBackend(server, { tmux: { target: "nosuchsession" } });
    await assertMuxError(named.spawn(spawnReq("ses_a", SLEEP, server.dir)), "pane_not_found");
    const check = (await backend.doctor()).find((c) => c.name === "tmux anchor");
    assert.equal(check?.status, "fail");
    assert.match(check?.hint ?? "", /tmux.target/);
  });
});
