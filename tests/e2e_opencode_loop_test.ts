/**
 * End to end against a REAL OpenCode server (`opencode serve`, loopback, isolated HOME, a mock
 * model) and a real private tmux server: the test forwards the server's `/event` stream to the
 * bridge exactly as the plugin hook would, and the bridge talks to the server itself (readiness,
 * status polls, rechecks). The pane program is the recording stand-in, so the assertions are on
 * the exact attach argv; a real `opencode attach` in the pane is the plugin end-to-end test's job.
 *
 * The server comes from the shared real-server harness (`tests/helpers/opencode_server.ts`); it
 * needs the `opencode` binary (`OPENCODE_TEST_BIN`, or `opencode-ai` in node_modules), and
 * without it the test is skipped and listed (a failure in CI: tests/helpers/requires.ts).
 */

import assert from "node:assert/strict";
import { createRealClock, waitFor } from "../lib/sys/clock.ts";
import { startBridge } from "./helpers/bridge_process.ts";
import { opencodeBin, startOpencodeServer } from "./helpers/opencode_server.ts";
import { isType as is, realLife } from "./helpers/real_life.ts";
import { recordedArgv, writeStandIn } from "./helpers/stand_in.ts";
import { requirement, requires } from "./helpers/requires.ts";

const clock = createRealClock();

Deno.test({
  name:
    "bridge against a real OpenCode server: readiness, close on idle, reopen on busy, close on delete, orphan reclaimed after SIGKILL",
  ...requires("the real OpenCode loop test", [
    requirement(
      "the opencode binary",
      opencodeBin() !== null,
      "npm install (opencode-ai), or set OPENCODE_TEST_BIN",
    ),
  ]),
  async fn() {
    // 150 ms a word: a turn stays busy ~0.75 s, as long as the bridge needs to see it.
    const oc = await startOpencodeServer({ chunkDelayMs: 150 });
    const life = await realLife(async (dir) => ({
      opencode_bin: await writeStandIn(dir),
      idle_close_delay_ms: 500,
      min_pane_lifetime_ms: 500,
      poll_interval_ms: 300,
      close_grace_ms: 300,
    }));
    const { server: tmux, dir, env } = life;
    const bridges: Array<ReturnType<typeof startBridge>> = [];
    try {
      const seen: Array<{ at: number; event: Record<string, unknown> }> = [];
      let target: ReturnType<typeof startBridge> | null = null;
      await oc.onEvent((event) => {
        seen.push({ at: performance.now(), event });
        void target?.send(event).catch(() => {});
      });
      const eventAt = (type: string, id: string) =>
        seen.find((s) =>
          s.event.type === type &&
          (s.event.properties as { sessionID?: string }).sessionID === id
        )?.at;

      const first = startBridge(
        ["--url", oc.url, "--dir", oc.project, "--log-level", "debug"],
        env,
      );
      bridges.push(first);
      target = first;
      await first.waitFor(is("ready"), 120_000);
      await first.send({ type: "bridge.hello", serverUrl: `${oc.url}/`, directory: oc.project });

      const parent = (await oc.createSession({ title: "e2e parent" })).id;
      const child = (await oc.createSession({ title: "e2e child", parentID: parent })).id;
      const opened = await first.waitFor(is("pane.opened", child), 120_000);
      const openedAt = performance.now();
      const paneA = String(opened.paneId);
      await waitFor(clock, async () => (await recordedArgv(dir)).length >= 1, {
        deadline: clock.now() + 10_000,
      });
      assert.deepEqual((await recordedArgv(dir))[0], [
        "attach",
        oc.url,
        "--session",
        child,
        "--dir",
        oc.project,
      ]);

      // A turn: busy (3x), then idle; the pane closes on the confirmed idle.
      await oc.prompt(child, "hello");
      await first.waitFor(is("pane.closed", child, "idle"), 60_000);
      const closedAt = performance.now();
      const live = (await tmux.tmux(["list-panes", "-a", "-F", "#{pane_id}"])).split("\n");
      assert.ok(!live.includes(paneA), "the idle pane is really gone");

      // The next turn reopens it.
      await oc.prompt(child, "again");
      const reopened = await first.waitFor(
        (l) => is("pane.opened", child)(l) && l.paneId !== paneA,
        60_000,
      );
      await first.waitFor(
        (l) => is("pane.closed", child, "idle")(l) && l.paneId === reopened.paneId,
        60_000,
      );

      // Delete: no pane comes back, however many late events follow.
      await oc.deleteSession(child);
      await waitFor(clock, () => eventAt("session.deleted", child) !== undefined, {
        deadline: clock.now() + 10_000,
      });

      // Crash: a pane left by a SIGKILLed bridge is reclaimed by the next one (the child is idle).
      const orphanChild = (await oc.createSession({ title: "orphan child", parentID: parent })).id;
      const orphan = await first.waitFor(is("pane.opened", orphanChild), 120_000);
      first.kill("SIGKILL");
      await first.status.catch(() => {});
      target = null;
      const second = startBridge(["--url", oc.url, "--dir", oc.project], env);
      bridges.push(second);
      const reclaimed = await second.waitFor(is("pane.closed", orphanChild, "orphan"), 120_000);
      assert.equal(reclaimed.paneId, orphan.paneId);
      await second.endInput();
      await second.waitFor(is("bye"), 120_000);
      assert.equal((await second.status).code, 0);

      const reopenedCount = first.lines.filter((l) => is("pane.opened", child)(l)).length;
      assert.equal(reopenedCount, 2, "opened once, reopened once, never after the delete");
      assert.notEqual(reopened.paneId, paneA);

      const createdAt = eventAt("session.created", child)!;
      const idleAt = seen.filter((s) =>
        s.event.type === "session.idle" &&
        (s.event.properties as { sessionID?: string }).sessionID === child
      )[0].at;
      if (Deno.env.get("E2E_TRACE")) {
        console.log(first.stderr().split("\n").filter((l) => l.includes(child)).join("\n"));
      }
      const ready = /ses_\w+: server knows the session after (\d+) ms/.exec(first.stderr());
      const version = (await (await oc.request("GET", "/global/health")).json()).version;
      console.log(
        `OpenCode ${version} (server ready in ${oc.startMs} ms): session.created -> pane.opened ${
          Math.round(openedAt - createdAt)
        } ms (readiness wait ${ready?.[1] ?? "?"} ms); session.idle -> pane.closed ${
          Math.round(closedAt - idleAt)
        } ms (idle_close_delay_ms 500, poll_interval_ms 300)`,
      );
    } finally {
      for (const b of bridges) {
        b.kill("SIGKILL");
        await b.status.catch(() => {});
      }
      await tmux.close();
      await oc.close();
    }
  },
});
