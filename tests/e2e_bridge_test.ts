/**
 * End to end: the real entry point in bridge mode, fed NDJSON on stdin, against a real private
 * tmux server and a fake OpenCode server on loopback (readiness, status polls and rechecks need
 * one; the real `opencode serve` end-to-end test lives with the plugin's harness); assertions on
 * stdout and on tmux's real state.
 */

import assert from "node:assert/strict";
import { waitFor } from "../lib/sys/clock.ts";
import { events, startBridge } from "./helpers/bridge_process.ts";
import { type FakeOpencodeServer, serveFakeOpencode } from "./helpers/fake_opencode_server.ts";
import { clock, isType, realLife, runCli } from "./helpers/real_life.ts";
import { recordedArgv, writeStandIn } from "./helpers/stand_in.ts";
import type { TmuxServer } from "./helpers/tmux_server.ts";

const P = "ses_e2eParent";

interface Setup {
  server: TmuxServer;
  /** The fake OpenCode server (every `ses_` id known, everything idle unless marked busy). */
  oc: FakeOpencodeServer;
  dir: string;
  env: Record<string, string>;
}

/** The real-life set-up (stand-in as `opencode_bin`, 300 ms timings) plus the fake OpenCode. */
async function setup(): Promise<Setup> {
  const life = await realLife(async (dir) => ({
    opencode_bin: await writeStandIn(dir),
    idle_close_delay_ms: 300,
    min_pane_lifetime_ms: 300,
    close_grace_ms: 300,
    poll_interval_ms: 300,
    // Titles as sent (the live-state marker has tests/e2e_status_test.ts).
    status_in_title: false,
  }));
  const oc = serveFakeOpencode();
  oc.fake.knowAll = true;
  return { server: life.server, oc, dir: life.dir, env: life.env };
}

async function teardown(s: Setup): Promise<void> {
  await s.server.close();
  await s.oc.close();
}

async function panes(
  server: TmuxServer,
): Promise<Map<string, { title: string; width: number; height: number; session: string }>> {
  const out = await server.tmux([
    "list-panes",
    "-a",
    "-F",
    "#{pane_id}\t#{pane_title}\t#{pane_width}\t#{pane_height}\t#{@muxbridge-session}",
  ]);
  const map = new Map();
  for (const line of out.trim().split("\n").filter(Boolean)) {
    const [id, title, w, h, session] = line.split("\t");
    map.set(id, { title, width: Number(w), height: Number(h), session });
  }
  return map;
}

Deno.test("bridge on real tmux opens, retitles, closes on idle, reopens, closes on delete, and never touches the user's pane", async () => {
  const s = await setup();
  try {
    const userPane = await s.server.userPane("-h");
    const userBefore = (await panes(s.server)).get(userPane)!;
    const project = `${s.dir}/project with 'quotes' and "double" $(x) spaces`;
    await Deno.mkdir(project);
    const bridge = startBridge(["--url", `${s.oc.url}/`, "--dir", s.dir], s.env);
    try {
      const ready = await bridge.waitFor(isType("ready"));
      assert.equal(ready.backend, "tmux");
      assert.equal(ready.protocol, 1);
      const A = "ses_e2eChildA", B = "ses_e2eChildB";
      const hostile = "fix $(touch pwned) `touch pwned2`; 'q' \"d\"\n\u001b]0;evil\u0007 -rf";
      await bridge.send(events.created(P, "parent", null, s.dir));
      await bridge.send(events.created(A, hostile, P, project));
      await bridge.send(events.status(A, "busy"));
      await bridge.send(events.created(B, "child B", P, s.dir));
      const openedA = await bridge.waitFor(isType("pane.opened", A));
      const openedB = await bridge.waitFor(isType("pane.opened", B));
      const paneA = String(openedA.paneId), paneB = String(openedB.paneId);
      let live = await panes(s.server);
      assert.equal(live.get(paneA)?.session, A, "ownership mark");
      assert.equal(
        live.get(paneA)?.title,
        "fix $(touch pwned) `touch pwned2`; 'q' \"d\"]0;evil -rf",
      );
      // The stand-in received exactly the contract's argv, hostile directory included.
      await waitFor(clock, async () => (await recordedArgv(s.dir)).length >= 2, {
        deadline: clock.now() + 5000,
      });
      const argvs = await recordedArgv(s.dir);
      assert.deepEqual(argvs.find((a) => a[3] === A), [
        "attach",
        s.oc.url,
        "--session",
        A,
        "--dir",
        project,
      ]);
      assert.equal(
        (await Array.fromAsync(Deno.readDir(project))).length,
        0,
        "nothing was executed from the title",
      );

      await bridge.send(events.updated(A, "renamed A", P, project));
      assert.ok(
        await waitFor(
          clock,
          async () => (await panes(s.server)).get(paneA)?.title === "renamed A",
          { deadline: clock.now() + 5000 },
        ),
      );

      await bridge.send(events.status(A, "idle"));
      await bridge.send(events.idle(A));
      await bridge.waitFor(isType("pane.closed", A, "idle"));
      assert.ok(!(await panes(s.server)).has(paneA), "the idle pane is really gone");

      await bridge.send(events.status(A, "busy"));
      const reopened = await bridge.waitFor((l) =>
        isType("pane.opened", A)(l) && l.paneId !== paneA
      );
      await bridge.send(events.deleted(B, P, s.dir));
      await bridge.waitFor(isType("pane.closed", B, "deleted"));
      live = await panes(s.server);
      assert.ok(!live.has(paneB));
      assert.ok(live.has(String(reopened.paneId)));
      const userAfter = live.get(userPane)!;
      assert.deepEqual(userAfter, userBefore, "the user's pane keeps its size and title");

      bridge.kill("SIGTERM");
      const bye = await bridge.waitFor(isType("bye"));
      assert.equal(bye.closed, 1);
      assert.equal((await bridge.status).code, 0);
      live = await panes(s.server);
      assert.deepEqual([...live.keys()].sort(), [s.server.anchorPane, userPane].sort());
      assert.deepEqual(bridge.junk, [], "stdout carries nothing but protocol lines");
      assert.equal(bridge.lines[0].type, "ready");
      assert.equal(bridge.lines.at(-1)?.type, "bye");
    } finally {
      bridge.kill("SIGKILL");
      await bridge.status.catch(() => {});
    }
  } finally {
    await teardown(s);
  }
});

Deno.test("bridge process answers malformed lines with errors, keeps serving, and says bye at end of input", async () => {
  const s = await setup();
  try {
    const bridge = startBridge(["--url", s.oc.url], s.env);
    await bridge.waitFor(isType("ready"));
    await bridge.sendRaw('not json\n{"type":"bridge.ping","id":1}\n{"type":"session.created"}\n');
    await bridge.send({ type: "bridge.ping", id: "two" });
    await bridge.endInput();
    await bridge.waitFor(isType("bye"));
    assert.equal((await bridge.status).code, 0);
    assert.deepEqual(
      bridge.lines.map((l) => l.type === "error" ? `error ${l.code} ${l.line}` : l.type),
      [
        "ready",
        "error invalid_json 1",
        "pong",
        "error invalid_message 3",
        "pong",
        "bye",
      ],
    );
    assert.deepEqual(bridge.junk, []);
  } finally {
    await teardown(s);
  }
});

Deno.test("bridge survives its tmux server being killed: failures are reported, the process keeps serving", async () => {
  const s = await setup();
  try {
    const bridge = startBridge(["--url", s.oc.url], s.env);
    try {
      await bridge.waitFor(isType("ready"));
      const C = "ses_e2eDoomed";
      await bridge.send(events.created(C, "doomed", P, s.dir));
      await bridge.waitFor(isType("pane.opened", C));
      await s.server.run(["kill-server"]);
      await bridge.send(events.deleted(C, P, s.dir));
      const failed = await bridge.waitFor(isType("pane.failed", C), 120_000);
      assert.equal(failed.op, "close");
      assert.equal(failed.code, "backend_unreachable");
      await bridge.send({ type: "bridge.ping", id: 5 });
      await bridge.waitFor((l) => l.type === "pong" && l.id === 5);
      await bridge.endInput();
      await bridge.waitFor(isType("bye"));
      assert.equal((await bridge.status).code, 0);
    } finally {
      bridge.kill("SIGKILL");
      await bridge.status.catch(() => {});
    }
  } finally {
    await teardown(s);
  }
});

Deno.test("a new bridge reclaims the idle pane of a SIGKILLed bridge as orphan and adopts the busy one, which closes on idle", async () => {
  const s = await setup();
  try {
    const first = startBridge(["--url", s.oc.url, "--dir", s.dir], s.env);
    let idlePane = "", busyPane = "";
    try {
      await first.waitFor(isType("ready"));
      const IDLE = "ses_e2eOrphanIdle", BUSY = "ses_e2eOrphanBusy";
      s.oc.fake.busy(BUSY);
      await first.send(events.created(IDLE, "idle child", P, s.dir));
      await first.send(events.created(BUSY, "busy child", P, s.dir));
      await first.send(events.status(BUSY, "busy"));
      idlePane = String((await first.waitFor(isType("pane.opened", IDLE))).paneId);
      busyPane = String((await first.waitFor(isType("pane.opened", BUSY))).paneId);
    } finally {
      first.kill("SIGKILL");
      await first.status.catch(() => {});
    }
    assert.ok((await panes(s.server)).has(idlePane), "a SIGKILLed bridge leaves its panes");

    const second = startBridge(["--url", s.oc.url, "--dir", s.dir], s.env);
    try {
      await second.waitFor(isType("ready"));
      const reclaimed = await second.waitFor(isType("pane.closed", undefined, "orphan"));
      assert.equal(reclaimed.paneId, idlePane);
      assert.equal(reclaimed.sessionID, "ses_e2eOrphanIdle");
      // The busy child's pane is kept and taken over: reported as opened by this bridge.
      const adopted = await second.waitFor(isType("pane.opened", "ses_e2eOrphanBusy"));
      assert.equal(adopted.paneId, busyPane);
      const live = await panes(s.server);
      assert.ok(!live.has(idlePane));
      assert.ok(live.has(busyPane), "the busy child's pane is kept");

      const list = await runCli(["list", "--json"], s.env);
      assert.equal(list.code, 0, list.stderr);
      const rows = JSON.parse(list.stdout);
      assert.deepEqual(rows.map((r: { paneId: string }) => r.paneId), [busyPane]);
      assert.equal(rows[0].sessionId, "ses_e2eOrphanBusy");
      assert.match(rows[0].owner, new RegExp(`^${second.pid}:`), "the record names the new owner");

      // When the adopted child goes idle, the new bridge closes its pane: nothing is left behind.
      s.oc.fake.idle("ses_e2eOrphanBusy");
      await second.send(events.status("ses_e2eOrphanBusy", "idle"));
      await second.send(events.idle("ses_e2eOrphanBusy"));
      await second.waitFor(isType("pane.closed", "ses_e2eOrphanBusy", "idle"));
      assert.ok(!(await panes(s.server)).has(busyPane));
      await second.endInput();
      assert.deepEqual(await second.waitFor(isType("bye")), { type: "bye", closed: 0 });
    } finally {
      second.kill("SIGKILL");
      await second.status.catch(() => {});
    }
  } finally {
    await teardown(s);
  }
});
