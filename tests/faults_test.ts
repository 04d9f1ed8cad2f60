/**
 * Fault injection: the real bridge process on a private tmux server, driven through faults —
 * a tmux CLI that hangs, crashes, prints garbage or disappears (`tests/fakes/bin/tmux-faulty`,
 * configured as `tmux.bin`, delegating to the real tmux otherwise), the tmux server killed under
 * the bridge, the OpenCode server going away and coming back (the loopback fake), SIGTERM during
 * a spawn, and stdin closed mid-line.
 *
 * Each test ends with every owned pane closed or recorded for cleanup (the state directory's
 * pane records), and the user's own pane untouched.
 */

import assert from "node:assert/strict";
import { createRealClock, waitFor } from "../lib/sys/clock.ts";
import { createPaneStore } from "../lib/session/pane_store.ts";
import { type BridgeProcess, events, startBridge } from "./helpers/bridge_process.ts";
import { runCli } from "./helpers/cli_process.ts";
import { type FakeOpencodeServer, serveFakeOpencode } from "./helpers/fake_opencode_server.ts";
import { realLife } from "./helpers/real_life.ts";
import { writeStandIn } from "./helpers/stand_in.ts";
import type { TmuxServer } from "./helpers/tmux_server.ts";

const clock = createRealClock();
const P = "ses_faultParent";
const FAULTY = new URL("./fakes/bin/tmux-faulty", import.meta.url).pathname;

interface Rig {
  server: TmuxServer;
  oc: FakeOpencodeServer;
  dir: string;
  /** The rules file tmux-faulty reads on every call. */
  faults: string;
  /** The tmux binary the bridge runs (a copy of tmux-faulty, so a test can delete it). */
  bin: string;
  env: Record<string, string>;
  state: string;
  userPane: string;
  bridge: BridgeProcess;
  /** Sets the fault rules ("hang split-window", …); empty: behave. */
  fault(...rules: string[]): Promise<void>;
  /** Sends one child's created + busy events. */
  child(id: string): Promise<void>;
  /** Waits for a line of this type for this session. */
  line(type: string, sessionID?: string, ms?: number): Promise<Record<string, unknown>>;
  /** Marked panes in tmux, by session. */
  marked(): Promise<Map<string, string>>;
  close(): Promise<void>;
}

async function realTmux(): Promise<string> {
  const out = await new Deno.Command("sh", { args: ["-c", "command -v tmux"], stdout: "piped" })
    .output();
  return new TextDecoder().decode(out.stdout).trim();
}

async function rig(config: Record<string, unknown> = {}): Promise<Rig> {
  let faults = "", bin = "";
  const life = await realLife(async (dir) => {
    faults = `${dir}/faults`;
    await Deno.writeTextFile(faults, "");
    bin = `${dir}/tmux`;
    await Deno.copyFile(FAULTY, bin);
    await Deno.chmod(bin, 0o755);
    return {
      tmux: { bin },
      opencode_bin: await writeStandIn(dir),
      command_timeout_ms: 1000,
      close_grace_ms: 200,
      idle_close_delay_ms: 200,
      min_pane_lifetime_ms: 200,
      poll_interval_ms: 200,
      readiness_timeout_ms: 1000,
      ...config,
    };
  });
  const { server, dir } = life;
  const oc = serveFakeOpencode();
  oc.fake.knowAll = true;
  const state = life.env.MUXBRIDGE_STATE_DIR;
  const env = {
    ...life.env,
    MUXBRIDGE_REAL_TMUX: await realTmux(),
    MUXBRIDGE_FAULTS: faults,
    MUXBRIDGE_FAULT_LOG: `${dir}/fault.log`,
  };
  const userPane = await server.userPane("-h");
  await server.tmux(["select-pane", "-t", userPane, "-T", "the user's pane"]);
  const bridge = startBridge(["--url", oc.url, "--dir", dir], env);
  await bridge.waitFor((l) => l.type === "ready", 120_000);
  await bridge.send(events.created(P, "parent", null, dir));
  const r: Rig = {
    server,
    oc,
    dir,
    faults,
    bin,
    env,
    state,
    userPane,
    bridge,
    fault: (...rules) => Deno.writeTextFile(faults, rules.map((x) => `${x}\n`).join("")),
    async child(id) {
      oc.fake.busy(id);
      await bridge.send(events.created(id, `child ${id}`, P, dir));
      await bridge.send(events.status(id, "busy"));
    },
    line: (type, sessionID, ms = 60_000) =>
      bridge.waitFor(
        (l) => l.type === type && (sessionID === undefined || l.sessionID === sessionID),
        ms,
      ),
    async marked() {
      const out = await server.run(["list-panes", "-a", "-F", "#{pane_id} #{@muxbridge-session}"]);
      const map = new Map<string, string>();
      for (const row of out.stdout.trim().split("\n")) {
        const [pane, session] = row.split(" ");
        if (session) map.set(session, pane);
      }
      return map;
    },
    async close() {
      bridge.kill("SIGKILL");
      await bridge.status.catch(() => {});
      await oc.close();
      await server.close();
    },
  };
  return r;
}

/**
 * The end state every fault test requires: the bridge said bye and exited 0, each pane still
 * marked in tmux has a pane record (cleanup will find it), and the user's pane is untouched.
 */
async function assertClean(r: Rig, opts: { serverGone?: boolean } = {}) {
  const bye = await r.line("bye", undefined, 60_000);
  assert.equal((await r.bridge.status).code, 0, r.bridge.stderr());
  assert.equal(r.bridge.lines.at(-1)?.type, "bye");
  assert.deepEqual(r.bridge.junk, [], "stdout carries nothing but protocol lines");
  const records = createPaneStore(r.state).list().records;
  if (!opts.serverGone) {
    const marked = await r.marked();
    for (const [session, pane] of marked) {
      assert.ok(
        records.some((rec) => rec.paneId === pane && rec.sessionId === session),
        `marked pane ${pane} (${session}) left without a record`,
      );
    }
    const user = await r.server.tmux([
      "display-message",
      "-p",
      "-t",
      r.userPane,
      "#{pane_id} #{pane_title}",
    ]);
    assert.equal(user.trim(), `${r.userPane} the user's pane`, "the user's pane is untouched");
  }
  return { bye, records };
}

Deno.test("fault: a tmux call that hangs times out, the open fails, and the bridge goes on", async () => {
  const r = await rig();
  try {
    await r.child("ses_a");
    await r.line("pane.opened", "ses_a");
    await r.fault("hang split-window");
    await r.child("ses_b");
    // The hung split never answers: timed_out (not a wait) is the proof the timeout fired.
    const failed = await r.line("pane.failed", "ses_b");
    assert.equal(failed.code, "timed_out");
    await r.fault();
    await r.bridge.send({ type: "bridge.ping", id: "after" });
    await r.line("pong");
    await r.child("ses_c");
    await r.line("pane.opened", "ses_c");
    await r.bridge.endInput();
    const { bye, records } = await assertClean(r);
    assert.equal(bye.closed, 2);
    assert.deepEqual(records, []);
    assert.deepEqual([...(await r.marked()).keys()], []);
  } finally {
    await r.close();
  }
});

Deno.test("fault: a tmux that crashes or prints garbage fails that open only; later opens work", async () => {
  const r = await rig();
  try {
    await r.fault("crash split-window");
    await r.child("ses_crash");
    const crashed = await r.line("pane.failed", "ses_crash");
    assert.equal(crashed.code, "command_failed");
    await r.fault("garbage list-panes");
    await r.child("ses_junk");
    const junk = await r.line("pane.failed", "ses_junk");
    assert.equal(junk.code, "unparseable_output");
    await r.fault();
    await r.child("ses_fine");
    await r.line("pane.opened", "ses_fine");
    // A busy signal retries the children whose open failed.
    await r.bridge.send(events.status("ses_crash", "idle"));
    await r.bridge.send(events.status("ses_crash", "busy"));
    await r.line("pane.opened", "ses_crash");
    await r.bridge.endInput();
    const { records } = await assertClean(r);
    assert.deepEqual(records, []);
    assert.deepEqual([...(await r.marked()).keys()], []);
  } finally {
    await r.close();
  }
});

Deno.test("fault: a tmux binary that disappears mid-run: opens are skipped, open panes are recorded for cleanup, cleanup closes them later", async () => {
  const r = await rig();
  try {
    await r.child("ses_kept");
    const opened = await r.line("pane.opened", "ses_kept");
    await Deno.remove(r.bin);
    await r.child("ses_late");
    const skipped = await r.line("pane.skipped", "ses_late");
    assert.equal(skipped.reason, "no_backend");
    await r.bridge.endInput();
    const { records } = await assertClean(r);
    // The pane could not be closed without tmux: it stays, recorded for cleanup.
    assert.deepEqual(records.map((x) => [x.sessionId, x.paneId]), [["ses_kept", opened.paneId]]);
    assert.equal((await r.marked()).get("ses_kept"), opened.paneId);
    // tmux is back: `muxbridge cleanup` closes the pane of the bridge that is gone.
    await Deno.copyFile(FAULTY, r.bin);
    await Deno.chmod(r.bin, 0o755);
    r.oc.fake.removed.add("ses_kept");
    const cleanup = await runCli(["cleanup", "--json"], { env: r.env });
    const report = JSON.parse(cleanup.stdout);
    assert.equal(cleanup.code, 0, cleanup.stderr);
    assert.deepEqual(report.closed.map((c: { paneId: string }) => c.paneId), [opened.paneId]);
    assert.deepEqual([...(await r.marked()).keys()], []);
    assert.deepEqual(createPaneStore(r.state).list().records, []);
  } finally {
    await r.close();
  }
});

Deno.test("fault: the tmux server killed under a running bridge: it keeps serving, skips new children, and says bye", async () => {
  const r = await rig();
  try {
    await r.child("ses_one");
    await r.line("pane.opened", "ses_one");
    await r.server.run(["kill-server"]);
    await r.child("ses_two");
    const two = await r.bridge.waitFor((l) =>
      (l.type === "pane.failed" || l.type === "pane.skipped") && l.sessionID === "ses_two"
    );
    assert.equal(two.type === "pane.failed" ? two.code : two.reason, "backend_unreachable");
    await r.bridge.send({ type: "bridge.ping", id: 2 });
    await r.line("pong");
    await r.bridge.endInput();
    const { records } = await assertClean(r, { serverGone: true });
    // muxbridge cannot tell a dead server's panes are gone: the close is reported failed and the
    // pane stays recorded (stuck) for `muxbridge cleanup`, never forgotten.
    const failed = await r.line("pane.failed", "ses_one");
    assert.equal(failed.op, "close");
    assert.deepEqual(records.map((x) => [x.sessionId, x.stuck]), [["ses_one", true]]);
  } finally {
    await r.close();
  }
});

Deno.test("fault: the OpenCode server goes away and comes back: no new panes meanwhile, closes still work, opens resume", async () => {
  const r = await rig();
  try {
    await r.child("ses_up");
    await r.line("pane.opened", "ses_up");
    await r.oc.down();
    await r.child("ses_down");
    const skipped = await r.line("pane.skipped", "ses_down");
    assert.equal(skipped.reason, "server_unreachable");
    // An idle signal still closes the open pane while the server is down.
    await r.bridge.send(events.status("ses_up", "idle"));
    await r.bridge.send(events.idle("ses_up"));
    const closed = await r.line("pane.closed", "ses_up");
    assert.equal(closed.reason, "idle");
    r.oc.up();
    await r.bridge.send(events.status("ses_down", "idle"));
    await r.bridge.send(events.status("ses_down", "busy"));
    await r.line("pane.opened", "ses_down");
    // A server that accepts connections but never answers: the readiness wait is bounded.
    r.oc.fake.mode = "hang";
    await r.child("ses_hung");
    const hung = await r.line("pane.skipped", "ses_hung");
    assert.equal(hung.reason, "server_unreachable");
    r.oc.fake.mode = "up";
    await r.bridge.endInput();
    const { records } = await assertClean(r);
    assert.deepEqual(records, []);
    assert.deepEqual([...(await r.marked()).keys()], []);
  } finally {
    await r.close();
  }
});

Deno.test("fault: SIGTERM while a pane is being opened: the pane that finishes opening is closed before bye", async () => {
  const r = await rig();
  try {
    await r.fault("slow split-window 1.5");
    await r.child("ses_slow");
    assert.ok(
      await waitFor(
        clock,
        async () => (await Deno.readTextFile(`${r.dir}/fault.log`).catch(() => "")) !== "",
        {
          deadline: clock.now() + 10_000,
        },
      ),
      "the split started",
    );
    r.bridge.kill("SIGTERM");
    const { records } = await assertClean(r);
    assert.deepEqual(records, []);
    assert.deepEqual(
      [...(await r.marked()).keys()],
      [],
      "the pane opened during shutdown was closed",
    );
  } finally {
    await r.close();
  }
});

Deno.test("fault: stdin closed mid-line: the partial line gets one error, then bye after closing panes", async () => {
  const r = await rig();
  try {
    await r.child("ses_open");
    await r.line("pane.opened", "ses_open");
    await r.bridge.sendRaw('{"type":"bridge.ping","id":');
    await r.bridge.endInput();
    const error = await r.line("error");
    assert.equal(error.code, "invalid_json");
    assert.equal(error.line, 4, "the partial line is numbered like any other");
    const { bye, records } = await assertClean(r);
    assert.equal(bye.closed, 1);
    assert.deepEqual(records, []);
  } finally {
    await r.close();
  }
});

Deno.test("fault: a final line without newline at end of input is still handled", async () => {
  const r = await rig();
  try {
    await r.bridge.sendRaw('{"type":"bridge.ping","id":"last"}');
    await r.bridge.endInput();
    const pong = await r.line("pong");
    assert.equal(pong.id, "last");
    await assertClean(r);
  } finally {
    await r.close();
  }
});

Deno.test("fault: a tmux server that hangs during a split opens the pane after the timeout; the bridge finds it by its spawn token and closes it", async () => {
  const r = await rig();
  try {
    await r.child("ses_before");
    await r.line("pane.opened", "ses_before");
    // The server stops (hangs) just as the split is sent.
    await r.fault(`stop split-window ${r.server.serverPid}`);
    await r.child("ses_stopped");
    const failed = await r.line("pane.failed", "ses_stopped");
    assert.equal(failed.code, "timed_out");
    assert.equal(
      createPaneStore(r.state).list().records.filter((x) => x.state === "pending").length,
      1,
      "the spawn stays recorded while its pane may still come",
    );
    await r.fault();
    Deno.kill(r.server.serverPid, "SIGCONT");
    // tmux carries the split out now: a pane nobody was told about, carrying the spawn token.
    const late = async () =>
      (await r.server.tmux(["list-panes", "-a", "-F", "#{pane_start_command}"]))
        .split("\n").filter((c) => c.includes("muxbridge-spawn=")).length;
    assert.ok(
      await waitFor(clock, async () => (await late()) === 2, { deadline: clock.now() + 20_000 }),
      "the stopped split ran once the server went on",
    );
    await r.bridge.send({ type: "bridge.ping", id: 1 });
    await r.line("pong");
    await r.bridge.endInput();
    const { records } = await assertClean(r);
    assert.deepEqual(records, [], "no pending record is left");
    const panes = await r.server.tmux(["list-panes", "-a", "-F", "#{pane_id}"]);
    assert.deepEqual(
      panes.trim().split("\n").sort(),
      [r.server.anchorPane, r.userPane].sort(),
      "only the user's panes are left",
    );
  } finally {
    Deno.kill(r.server.serverPid, "SIGCONT");
    await r.close();
  }
});

Deno.test("fault: a bridge SIGKILLed mid-spawn leaves its pending record; cleanup closes the pane the split made", async () => {
  const r = await rig();
  try {
    await r.fault("slow split-window 1.5");
    await r.child("ses_killed");
    assert.ok(
      await waitFor(
        clock,
        async () => (await Deno.readTextFile(`${r.dir}/fault.log`).catch(() => "")) !== "",
        { deadline: clock.now() + 10_000 },
      ),
      "the split started",
    );
    r.bridge.kill("SIGKILL");
    await r.bridge.status.catch(() => {});
    // The split goes on without its bridge: a pane no record names, carrying the spawn token.
    const tokened = async () =>
      (await r.server.tmux(["list-panes", "-a", "-F", "#{pane_id} #{pane_start_command}"]))
        .split("\n").filter((l) => l.includes("muxbridge-spawn=")).map((l) => l.split(" ")[0]);
    assert.ok(
      await waitFor(clock, async () => (await tokened()).length === 1, {
        deadline: clock.now() + 20_000,
      }),
      "the split finished after the bridge died",
    );
    const [late] = await tokened();
    const pending = createPaneStore(r.state).list().records.filter((x) => x.state === "pending");
    assert.equal(pending.length, 1, "the spawn was recorded before it ran");
    await r.fault();
    const cleanup = await runCli(["cleanup", "--json"], { env: r.env });
    assert.equal(cleanup.code, 0, cleanup.stderr);
    const report = JSON.parse(cleanup.stdout);
    assert.deepEqual(
      report.closed.map((c: { paneId: string; reason: string }) => [c.paneId, c.reason]),
      [[late, "left by a spawn whose answer was lost"]],
    );
    assert.deepEqual(await tokened(), [], "the pane is closed");
    assert.deepEqual(createPaneStore(r.state).list().records, [], "and its record removed");
    const user = await r.server.tmux(["display-message", "-p", "-t", r.userPane, "#{pane_id}"]);
    assert.equal(user.trim(), r.userPane, "the user's pane is untouched");
  } finally {
    await r.close();
  }
});
