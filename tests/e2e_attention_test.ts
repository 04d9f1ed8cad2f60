/**
 * A child that waits for the user, end to end through the real bridge process on a real,
 * private tmux server: the bridge is fed OpenCode 1.18.33's `permission.*` and `question.*`
 * events (shaped as its `permission/index.ts` and `question/index.ts` publish them) on stdin,
 * the pane runs a stand-in program inside muxbridge's real start command.
 *
 * The pane's title gets `[needs you]` and `@muxbridge-status` `waiting`, the bell reaches tmux
 * (the window's bell flag, written to the pane's own terminal), `attention_command` runs once
 * with the session id and title, `list` shows the state; the answer brings `busy` back; malformed
 * and unknown request events change nothing and the bridge goes on; a missed ask and a missed
 * reply are corrected by the server's pending lists. The pane shows the line naming its child
 * from the split on. Latencies are printed, never asserted.
 */

import assert from "node:assert/strict";
import { createRealClock, waitFor } from "../lib/sys/clock.ts";
import { events, startBridge } from "./helpers/bridge_process.ts";
import { serveFakeOpencode } from "./helpers/fake_opencode_server.ts";
import { isType as is, realLife, runCli } from "./helpers/real_life.ts";
import { requires, tool } from "./helpers/requires.ts";
import { writeStandIn } from "./helpers/stand_in.ts";

const clock = createRealClock();
/** Ends a hung test only: the machine may be loaded. */
const CEILING_MS = 30_000;

const P = "ses_attnParent", C = "ses_attnChild";

/** OpenCode 1.18.33's events for a permission request and a question of session `sid`. */
const opencode = {
  permissionAsked: (sid: string, id: string) => ({
    type: "permission.asked",
    properties: {
      id,
      sessionID: sid,
      permission: "bash",
      patterns: ["echo hi"],
      metadata: { command: "echo hi" },
      always: ["echo *"],
      tool: { messageID: "msg_attn1", callID: "call_attn1" },
    },
  }),
  permissionReplied: (sid: string, id: string, reply = "once") => ({
    type: "permission.replied",
    properties: { sessionID: sid, requestID: id, reply },
  }),
  questionAsked: (sid: string, id: string) => ({
    type: "question.asked",
    properties: {
      id,
      sessionID: sid,
      questions: [{
        question: "Which color?",
        header: "Color",
        options: [{ label: "red", description: "Red" }],
      }],
      tool: { messageID: "msg_attn2", callID: "call_attn2" },
    },
  }),
  questionRejected: (sid: string, id: string) => ({
    type: "question.rejected",
    properties: { sessionID: sid, requestID: id },
  }),
};

Deno.test({
  name:
    "a bridge fed 1.18.33 permission and question events shows and clears the wait on real tmux, rings the pane's bell, runs attention_command once, and shrugs off bad events",
  ...requires("the attention end-to-end test", [tool("tmux"), tool("sh")]),
  async fn() {
    const life = await realLife(async (dir) => ({
      opencode_bin: await writeStandIn(dir),
      idle_close_delay_ms: 600_000,
      poll_interval_ms: 300,
      attention_command: [
        "/bin/sh",
        "-c",
        'for a in "$@"; do printf "%s\\n" "$a"; done >> "$0"',
        `${dir}/attention.txt`,
      ],
    }));
    const tmux = life.server;
    const oc = serveFakeOpencode();
    oc.fake.knowAll = true;
    const bridge = startBridge(["--url", `${oc.url}/`, "--dir", life.dir], life.env);
    const display = async (pane: string, format: string) =>
      (await tmux.run(["display-message", "-p", "-t", pane, format])).stdout.trim();
    const until = async (what: string, cond: () => Promise<boolean>) => {
      const t0 = performance.now();
      const ok = await waitFor(clock, cond, { deadline: clock.now() + CEILING_MS });
      assert.ok(ok, `timed out waiting for ${what}`);
      return performance.now() - t0;
    };
    try {
      await bridge.waitFor(is("ready"), CEILING_MS);
      await bridge.send(events.created(P, "parent", null, life.dir));
      await bridge.send(events.created(C, "fix the parser", P, life.dir));
      oc.fake.busy(C);
      await bridge.send(events.status(C, "busy"));
      const pane = String((await bridge.waitFor(is("pane.opened", C), CEILING_MS)).paneId);
      // The line naming the child is on screen from the split on (the stand-in draws nothing).
      await until(
        "the line naming the child",
        async () =>
          (await tmux.run(["capture-pane", "-p", "-J", "-t", pane])).stdout.includes(
            `[muxbridge] attaching to "fix the parser" (${C}) on ${oc.url} …`,
          ),
      );
      await until("busy", async () => (await display(pane, "#{@muxbridge-status}")) === "busy");
      assert.equal(await display(pane, "#{window_bell_flag}"), "0", "no bell before the wait");

      // ---- a permission request: shown at once, rung, the command run once
      await bridge.send(opencode.permissionAsked(C, "per_attn1"));
      const shownMs = await until(
        "the waiting marker",
        async () => (await display(pane, "#{pane_title}")) === "[needs you] fix the parser",
      );
      assert.equal(await display(pane, "#{@muxbridge-status}"), "waiting");
      await until("the bell", async () => (await display(pane, "#{window_bell_flag}")) === "1");
      const listed = await runCli(["list", "--json"], life.env);
      assert.equal(listed.code, 0, listed.stderr);
      const [row] = JSON.parse(listed.stdout) as Array<Record<string, unknown>>;
      assert.deepEqual([row.sessionId, row.state, row.waitingFor], [C, "waiting", "permission"]);
      const text = await runCli(["list"], life.env);
      assert.match(text.stdout, / waiting \(permission\) +\d+s /);

      // ---- bad and unknown request events: errors for the bad ones, nothing changes
      const before = bridge.lines.filter((l) => l.type === "error").length;
      await bridge.send({ type: "permission.asked", properties: { id: "per_x" } });
      await bridge.send({ type: "permission.replied", properties: { sessionID: C } });
      await bridge.send({
        type: "permission.replied",
        properties: { sessionID: C, requestID: "$(touch pwned)" },
      });
      await bridge.send({ type: "question.asked", properties: "not an object" });
      await bridge.send({ type: "permission.updated", properties: { sessionID: C, id: "per_y" } });
      await bridge.send(opencode.permissionReplied("ses_unknownSession", "per_attn1"));
      await bridge.send({ type: "bridge.ping", id: "after-bad-events" });
      await bridge.waitFor((l) => l.type === "pong" && l.id === "after-bad-events", CEILING_MS);
      const errors = bridge.lines.filter((l) => l.type === "error").slice(before);
      assert.deepEqual(errors.map((e) => e.code), Array(4).fill("invalid_message"));
      assert.equal(await display(pane, "#{@muxbridge-status}"), "waiting", "nothing changed");

      // ---- the answer brings busy back
      await bridge.send(opencode.permissionReplied(C, "per_attn1"));
      const clearedMs = await until(
        "busy again",
        async () => (await display(pane, "#{pane_title}")) === "[busy] fix the parser",
      );
      assert.equal(await display(pane, "#{@muxbridge-status}"), "busy");

      // ---- a question, rejected
      await bridge.send(opencode.questionAsked(C, "que_attn1"));
      await until(
        "waiting for the answer",
        async () => (await display(pane, "#{@muxbridge-status}")) === "waiting",
      );
      await bridge.send(opencode.questionRejected(C, "que_attn1"));
      await until(
        "busy after the rejection",
        async () => (await display(pane, "#{@muxbridge-status}")) === "busy",
      );

      // ---- the server's lists correct a missed ask and a missed reply
      oc.fake.pending = {
        permission: [{ id: "per_missed", sessionID: C, permission: "edit" }],
        question: [],
      };
      await until(
        "a missed ask, from the list",
        async () => (await display(pane, "#{@muxbridge-status}")) === "waiting",
      );
      oc.fake.pending = { permission: [], question: [] };
      await until(
        "a missed reply, from the list",
        async () => (await display(pane, "#{@muxbridge-status}")) === "busy",
      );

      // attention_command ran once per wait: the first permission, the question, the missed ask
      // (each more than a second apart), as argv with the session id and the title.
      const ran = (await Deno.readTextFile(`${life.dir}/attention.txt`)).trimEnd().split("\n");
      assert.deepEqual(ran, Array(3).fill([C, "fix the parser"]).flat());
      assert.ok(!(await Deno.stat(`${life.dir}/pwned`).catch(() => null)), "nothing was run");
      console.log(
        `      [needs you] shown ${shownMs.toFixed(0)} ms after the event was written, busy ${
          clearedMs.toFixed(0)
        } ms after the reply (status interval 1 s; load ${
          Deno.readTextFileSync("/proc/loadavg").split(" ")[0]
        })`,
      );
      await bridge.endInput();
      await bridge.waitFor(is("bye"), CEILING_MS);
      assert.equal((await bridge.status).code, 0);
    } finally {
      try {
        bridge.kill("SIGKILL");
      } catch { /* ended */ }
      await bridge.status.catch(() => {});
      await oc.close();
      await life.close();
    }
  },
});
