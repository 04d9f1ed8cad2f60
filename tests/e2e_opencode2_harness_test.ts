/**
 * The OpenCode 2.x harness itself, end to end with the REAL OpenCode 2.1.2 (npm `@opencode/cli`,
 * tools/opencode2): the per-user service on a port of the test's own, a TUI in a private tmux
 * server (`helpers/opencode2_tui.ts`), and the mock model calling the `subagent` tool. Typing
 * the trigger into the TUI makes a child session whose `parentID` is the TUI's session, seen
 * through `GET /api/session?parentID=` with the password from the service's state file; the
 * child's run ends; closing the box stops the TUI and the service, and no process of the box is
 * left (the run tag check of `scripts/run_tests.ts` covers the rest).
 *
 * It prints the numbers the harness sees (TUI first draw, prompt → child created, prompt →
 * child done) with the load average; nothing asserts on them.
 */

import assert from "node:assert/strict";
import { createProcesses } from "../lib/sys/processes.ts";
import { requirement, requires, tool } from "./helpers/requires.ts";
import { OPENCODE2_VERSION, opencode2Bin, readServiceState } from "./helpers/opencode2_home.ts";
import { type Event2, servicePidsOf, type Session2 } from "./helpers/opencode2_service.ts";
import { openTui2Box, type Tui2Box } from "./helpers/opencode2_tui.ts";
import { waitUntil } from "./helpers/opencode_tui.ts";

const processes = createProcesses();
const NEEDS = [
  requirement(
    "OpenCode 2.x (@opencode/cli)",
    opencode2Bin() !== null,
    "run scripts/setup.sh (tools/opencode2), or set OPENCODE2_TEST_BIN",
  ),
  tool("tmux"),
  tool("git"),
];

function loadAverage(): string {
  try {
    return Deno.readTextFileSync("/proc/loadavg").split(" ").slice(0, 3).join(" ");
  } catch {
    return "?";
  }
}

Deno.test({
  name:
    "real OpenCode 2.x: a TUI in private tmux gets a subagent child through the mock model, and closing the box leaves no process",
  ...requires("OpenCode 2.x harness", NEEDS),
  async fn() {
    let box: Tui2Box | undefined;
    let tuiPid = 0;
    let servicePids: number[] = [];
    let boxHome: Tui2Box["home"] | undefined;
    try {
      box = await openTui2Box({ chunkDelayMs: 50 });
      const service = box.service;
      const home = boxHome = box.home;
      const state = readServiceState(home.stateFile);
      assert.ok(state, "the service registered itself in the state service.json");
      assert.equal(state.url, `http://127.0.0.1:${home.port}`, "on the home's own port");
      assert.equal(state.password, home.password, "with the home's password");
      const info = await service.json("GET", "/api/info") as { version: string };
      assert.equal(info.version, OPENCODE2_VERSION);
      const unauthenticated = await fetch(`${service.url}/api/session`);
      await unauthenticated.body?.cancel();
      assert.equal(unauthenticated.status, 401, "/api/* needs the password");

      const created: Event2[] = [];
      await service.onEvent((e) => {
        if (e.type === "session.created") created.push(e);
      });
      const tui = await box.start();
      tuiPid = tui.pid;
      const t0 = performance.now();
      await tui.promptTask();

      // The TUI's session: the project's root session the prompt created.
      let parent: Session2 | undefined;
      await waitUntil(
        "the TUI's root session",
        async () => {
          const all = await service.json("GET", "/api/session") as { data: Session2[] };
          parent = all.data.find((s) =>
            s.parentID === undefined && s.location.directory === home.project
          );
          return parent !== undefined;
        },
        60_000,
        tui.screen,
      );
      let child: Session2 | undefined;
      await waitUntil(
        "a child of the TUI's session",
        async () => {
          child = (await service.children(parent!.id))[0];
          return child !== undefined;
        },
        60_000,
        tui.screen,
      );
      const childMs = Math.round(performance.now() - t0);
      assert.ok(child && parent);
      assert.equal(child.parentID, parent.id);
      assert.equal(child.title, "muxbridge probe", "titled by the subagent call's description");
      assert.equal(child.location.directory, home.project);
      // The stream may deliver the event after the API already lists the child.
      let event: Event2 | undefined;
      await waitUntil(
        "the child's session.created event",
        () => (event = created.find((e) => e.data.sessionID === child!.id)) !== undefined,
        30_000,
      );
      assert.equal(event?.data.parentID, parent.id, "session.created carries the parentID");

      await waitUntil(
        "the child's run to succeed",
        async () => (await service.session(child!.id))?.outcome === "succeeded",
        60_000,
        tui.screen,
      );
      console.log(
        `OpenCode 2.x harness: TUI first draw ${tui.firstDrawMs} ms; prompt → child listed ` +
          `${childMs} ms, → child's run done ${Math.round(performance.now() - t0)} ms ` +
          `(polled); load ${loadAverage()}`,
      );
      servicePids = service.pids();
    } finally {
      await box?.close();
    }
    for (const pid of [tuiPid, ...servicePids]) {
      assert.ok(!processes.alive(pid), `process ${pid} of the box still runs`);
    }
    if (boxHome) assert.deepEqual(servicePidsOf(boxHome), [], "no service of the home runs");
  },
});
