/**
 * End to end, on a private real tmux server: no pane program outlives its pane, however the pane
 * ends (idle, delete, shutdown, `muxbridge close`, `cleanup`, killed by hand, exited by itself).
 * The stand-in ignores SIGHUP/SIGINT/SIGTERM and starts a child that ignores them too, or is a
 * wrapper that dies of SIGHUP and leaves its child behind; `/proc` is the judge.
 *
 * Also the hand-closed pane protocol: `pane.closed` reason `gone`, the record is dropped (`list`
 * no longer shows it, `bye.closed` does not count it), and the pane reopens only on a change to
 * busy, not on a repeated busy.
 */

import assert from "node:assert/strict";
import { events, startBridge } from "./helpers/bridge_process.ts";
import { serveFakeOpencode } from "./helpers/fake_opencode_server.ts";
import { clock, isType, livePanes, realLife, runCli } from "./helpers/real_life.ts";
import { until } from "./helpers/until.ts";
import {
  killStandIns,
  stubbornLaunches,
  survivors,
  writeStubbornStandIn,
} from "./helpers/stubborn_stand_in.ts";

const P = "ses_orphanParent";

/**
 * The set-up of these tests: {@linkcode realLife} with the stubborn stand-in as `opencode_bin`,
 * in a directory of its own (`standIns`: its path marks every process the stand-in starts), and
 * the fake OpenCode server `oc`, which knows every session id (the tests invent them). `close()`
 * stops the fake, kills any stand-in left (even when an assertion failed) and stops tmux.
 */
async function stubbornRig() {
  let standIns = "";
  const life = await realLife(async (dir) => {
    standIns = `${dir}/stand-ins-${crypto.randomUUID()}`;
    await Deno.mkdir(standIns);
    return { opencode_bin: await writeStubbornStandIn(standIns) };
  });
  const oc = serveFakeOpencode();
  oc.fake.knowAll = true;
  return {
    life,
    oc,
    standIns,
    async close() {
      await oc.close();
      killStandIns(standIns);
      await life.close();
    },
  };
}

async function launched(dir: string, sessionIds: string[]) {
  await until(`launches of ${sessionIds.join(" ")}`, () => {
    const seen = new Set(stubbornLaunches(dir).map((l) => l.sessionId));
    return sessionIds.every((id) => seen.has(id));
  });
}

Deno.test("bridge leaves no pane program alive after idle, delete, hand-kill, self-exit and shutdown; a gone pane is dropped and reopens only on a change to busy", async () => {
  const rig = await stubbornRig();
  const { life: s, oc: server, standIns } = rig;
  const bridge = startBridge(["--url", server.url, "--dir", s.dir], s.env);
  try {
    await bridge.waitFor(isType("ready"));
    const I = "ses_idleStub", D = "ses_delWrap", H = "ses_handStub", HW = "ses_handWrap";
    const E = "ses_selfExit", S = "ses_shutStub", SW = "ses_shutWrap", X = "ses_barrierStub";
    const first = [I, D, H, HW, E, S, SW];
    await bridge.send(events.created(P, "parent", null, s.dir));
    for (const id of first) {
      await bridge.send(events.created(id, id, P, s.dir));
      await bridge.send(events.status(id, "busy"));
    }
    const pane = new Map<string, string>();
    for (const id of first) {
      pane.set(id, String((await bridge.waitFor(isType("pane.opened", id))).paneId));
    }
    await launched(standIns, first);

    // Idle: the close ends the whole group before pane.closed is written.
    await bridge.send(events.status(I, "idle"));
    await bridge.send(events.idle(I));
    await bridge.waitFor(isType("pane.closed", I, "idle"));
    assert.deepEqual(survivors(standIns, [I]), [], "idle");

    // Delete: a wrapper that dies of SIGHUP leaves its child; the close ends it too.
    await bridge.send(events.deleted(D, P, s.dir));
    await bridge.waitFor(isType("pane.closed", D, "deleted"));
    assert.deepEqual(survivors(standIns, [D]), [], "delete");

    // Killed by hand behind muxbridge's back: noticed as gone, survivors terminated.
    const killedAt = clock.now();
    await s.server.tmux(["kill-pane", "-t", pane.get(H)!]);
    await s.server.tmux(["kill-pane", "-t", pane.get(HW)!]);
    await bridge.waitFor(isType("pane.closed", H, "gone"));
    await bridge.waitFor(isType("pane.closed", HW, "gone"));
    const goneMs = clock.now() - killedAt;
    const reapMs = await until(
      "hand-killed survivors to end",
      () => survivors(standIns, [H, HW]).length === 0,
    );
    console.log(
      `gone noticed ${goneMs} ms after kill-pane (poll 250 ms); survivors ended ${reapMs} ms later`,
    );

    // The attach exits by itself: gone as well.
    await Deno.writeTextFile(`${standIns}/exit.${E}`, "");
    await bridge.waitFor(isType("pane.closed", E, "gone"));

    // Gone panes are no longer owned: `list` shows only the panes still open.
    const list = await runCli(["list", "--json"], s.env);
    assert.equal(list.code, 0, list.stderr);
    const listed = (JSON.parse(list.stdout) as Array<{ sessionId: string }>)
      .map((r) => r.sessionId).sort();
    assert.deepEqual(listed, [S, SW].sort());

    // A repeated busy of the same turn does not reopen the hand-closed pane. Spawns run one at a
    // time in order, so X's pane opening proves an earlier spawn of H would have happened.
    await bridge.send(events.status(H, "busy"));
    await bridge.send(events.created(X, X, P, s.dir));
    await bridge.send(events.status(X, "busy"));
    await bridge.waitFor(isType("pane.opened", X));
    assert.equal(bridge.lines.filter(isType("pane.opened", H)).length, 1, "no reopen yet");
    // The next busy signal (a change to busy) does.
    await bridge.send(events.status(H, "idle"));
    await bridge.send(events.status(H, "busy"));
    await bridge.waitFor((l) => isType("pane.opened", H)(l) && l.paneId !== pane.get(H));
    await launched(standIns, [X]);
    await until(
      "H relaunched",
      () => stubbornLaunches(standIns).filter((l) => l.sessionId === H).length === 2,
    );

    // Shutdown closes the four open panes; the gone ones are not counted.
    bridge.kill("SIGTERM");
    const bye = await bridge.waitFor(isType("bye"));
    assert.equal(bye.closed, 4);
    assert.equal((await bridge.status).code, 0);
    assert.deepEqual(survivors(standIns), [], "no stand-in process survives");
    const left = [...(await livePanes(s.server)).values()].filter((p) => p.session !== "");
    assert.deepEqual(left, [], "no muxbridge pane is left");
    assert.deepEqual(bridge.lines.filter(isType("pane.failed")), []);
    assert.deepEqual(bridge.junk, []);
  } finally {
    bridge.kill("SIGKILL");
    await bridge.status.catch(() => {});
    await rig.close();
  }
});

Deno.test("muxbridge close and cleanup leave no pane program alive after a bridge died, also for a pane killed by hand meanwhile", async () => {
  // It knows every session while the panes open; they are deleted before cleanup runs.
  const rig = await stubbornRig();
  const { life: s, oc: server, standIns } = rig;
  const URL = server.url;
  try {
    // A bridge that dies without closing anything leaves three panes behind.
    const C = "ses_cliWrap", L = "ses_leftStub", LW = "ses_leftWrap";
    const bridge = startBridge(["--url", URL, "--dir", s.dir], s.env);
    const pane = new Map<string, string>();
    try {
      await bridge.waitFor(isType("ready"));
      for (const id of [C, L, LW]) {
        await bridge.send(events.created(id, id, P, s.dir));
        pane.set(id, String((await bridge.waitFor(isType("pane.opened", id))).paneId));
      }
      await launched(standIns, [C, L, LW]);
    } finally {
      bridge.kill("SIGKILL");
      await bridge.status.catch(() => {});
    }

    // `muxbridge close` on one of them.
    const closed = await runCli(["close", pane.get(C)!, "--json"], s.env);
    assert.equal(closed.code, 0, closed.stderr);
    assert.deepEqual(JSON.parse(closed.stdout), {
      paneId: pane.get(C),
      closed: true,
      alreadyGone: false,
    });
    assert.deepEqual(survivors(standIns, [C]), [], "muxbridge close");

    // One of them the user closes by hand: with nobody watching, its program lives on.
    await s.server.tmux(["kill-pane", "-t", pane.get(LW)!]);
    assert.notDeepEqual(survivors(standIns, [LW]), [], "kill-pane alone orphans it");

    for (const id of [C, L, LW]) server.fake.remove(id);
    const cleanup = await runCli(["cleanup", "--json"], s.env);
    assert.equal(cleanup.code, 0, cleanup.stderr);
    const report = JSON.parse(cleanup.stdout) as {
      closed: Array<{ sessionId: string; reason: string }>;
      kept: unknown[];
    };
    assert.deepEqual(
      report.closed.map((c) => `${c.sessionId} ${c.reason}`).sort(),
      [`${L} session deleted`, `${LW} already gone`].sort(),
    );
    assert.deepEqual(survivors(standIns), [], "no stand-in process survives cleanup");
    assert.ok(!(await livePanes(s.server)).has(pane.get(L)!));
  } finally {
    await rig.close();
  }
});
