/**
 * End to end on real tmux: a stale record after a restart of the server never closes the user's
 * pane that got the recorded id. A bridge opens `%1` and is killed (its record stays); the tmux
 * server is killed and a new one starts on the same socket; the user's pane running
 * `sleep 424242` gets `%1`. The next bridge's start-up cleanup, `muxbridge cleanup` and
 * `muxbridge close %1` each leave it alone, retire the record and say why.
 */

import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { waitFor } from "../lib/sys/clock.ts";
import { createProcesses } from "../lib/sys/processes.ts";
import { events, startBridge } from "./helpers/bridge_process.ts";
import { serveFakeOpencode } from "./helpers/fake_opencode_server.ts";
import { clock, isType, realLife, runCli } from "./helpers/real_life.ts";
import { writeStandIn } from "./helpers/stand_in.ts";

Deno.test("after a tmux restart the user's `sleep 424242` in the reused %1 survives start-up cleanup, `cleanup` and `close %1`; the record is retired and the log says why", async () => {
  const life = await realLife(async (dir) => ({
    opencode_bin: await writeStandIn(dir),
    close_grace_ms: 300,
    poll_interval_ms: 300,
  }));
  const oc = serveFakeOpencode();
  oc.fake.knowAll = true;
  const { server, dir, env } = life;
  try {
    // A bridge opens %1 next to the anchor %0, and is killed: its record stays.
    const child = "ses_e2eReusedId";
    oc.fake.busy(child);
    const first = startBridge(["--url", oc.url, "--dir", dir], env);
    let paneId = "";
    try {
      await first.waitFor(isType("ready"));
      await first.send(events.created("ses_e2eReusedParent", "parent", null, dir));
      await first.send(events.created(child, "reused id", "ses_e2eReusedParent", dir));
      await first.send(events.status(child, "busy"));
      paneId = String((await first.waitFor(isType("pane.opened", child))).paneId);
    } finally {
      first.kill("SIGKILL");
      await first.status.catch(() => {});
    }
    assert.equal(paneId, "%1");
    // Its session went idle meanwhile: a pane that were still muxbridge's would be closed.
    oc.fake.idle(child);
    const recordFile = `${dir}/state/panes/tmux.${Buffer.from(paneId).toString("base64url")}.json`;
    const record = await Deno.readTextFile(recordFile);
    assert.ok(JSON.parse(record).instance, "the record names the server it opened on");
    const restore = () => Deno.writeTextFile(recordFile, record, { mode: 0o600 });

    // The server is restarted; the user's new pane gets %1.
    await server.restart();
    const [userPane, userPid] = (await server.tmux([
      "split-window",
      "-d",
      "-P",
      "-F",
      "#{pane_id} #{pane_pid}",
      "-t",
      server.anchorPane,
      "--",
      "sleep",
      "424242",
    ])).trim().split(" ");
    assert.equal(userPane, "%1", "the user's pane got the recorded id");
    const untouched = async (what: string) => {
      assert.ok(createProcesses().alive(Number(userPid)), `${what}: the user's sleep runs on`);
      assert.equal((await server.run(["list-panes", "-t", userPane])).code, 0, `${what}: %1 stays`);
    };
    const why = /its server is another process \(pid \d+ when the pane opened, now \d+\)/;

    // 1. The next bridge's start-up cleanup.
    const second = startBridge(["--url", oc.url, "--dir", dir], env);
    try {
      await second.waitFor(isType("ready"));
      const retired = await waitFor(clock, async () => {
        try {
          await Deno.stat(recordFile);
          return false;
        } catch {
          return true;
        }
      }, { deadline: clock.now() + 20_000 });
      assert.ok(retired, "the start-up cleanup retires the record");
      await second.endInput();
      await second.waitFor(isType("bye"));
    } finally {
      second.kill("SIGKILL");
      await second.status.catch(() => {});
    }
    await untouched("start-up cleanup");
    assert.match(second.stderr(), /left tmux pane %1 alone and retired its record/);
    assert.match(second.stderr(), why);
    assert.ok(!second.lines.some((l) => l.type === "pane.closed"), "nothing was reported closed");

    // 2. `muxbridge cleanup`.
    await restore();
    const cleanup = await runCli(["cleanup", "--json"], env);
    assert.equal(cleanup.code, 0, cleanup.stderr);
    const report = JSON.parse(cleanup.stdout);
    assert.deepEqual(report.closed, []);
    assert.deepEqual(report.retired.map((r: { paneId: string }) => r.paneId), ["%1"]);
    assert.match(report.retired[0].reason, why);
    assert.match(cleanup.stderr, /left tmux pane %1 alone and retired its record/);
    await untouched("muxbridge cleanup");
    await assert.rejects(Deno.stat(recordFile), "the record is retired");

    // 3. `muxbridge close %1` (without --force).
    await restore();
    const close = await runCli(["close", "%1"], env);
    assert.equal(close.code, 1, close.stderr);
    assert.equal(close.stdout, "");
    assert.match(
      close.stderr,
      /Cannot close pane "%1": it is not provably the pane muxbridge opened/,
    );
    assert.match(close.stderr, why);
    await untouched("muxbridge close");
    await assert.rejects(Deno.stat(recordFile), "the record is retired");
  } finally {
    await oc.close();
    await life.close();
  }
});
