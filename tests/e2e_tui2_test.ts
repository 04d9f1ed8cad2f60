/**
 * The main job on OpenCode 2.x, end to end with the REAL OpenCode 2.1.2 (npm `@opencode/cli`,
 * tools/opencode2), its per-user service on a port of this test's own, real tmux and the real
 * muxbridge (`deno run main.ts`, or the binary with `MUXBRIDGE_TEST_BIN`), recorded by
 * `muxbridge install`:
 *
 * 1. plain `opencode` in a private tmux; the mock model's parent turn calls `subagent`: exactly
 *    one pane opens in that tmux, running 2.x's TUI on the child, and shows the child's text
 *    live; one bridge runs for the TUI; when the child's run ends the pane closes;
 * 2. a second TUI of the same user, in a second tmux server and another project: its child's pane
 *    opens there, none in the first;
 * 3. after the TUIs and the service stop, no bridge runs; `muxbridge uninstall` leaves no
 *    muxbridge file in OpenCode's config, and a child started after it gets no pane.
 *
 * It prints the timings it saw (prompt → pane, → child visible, child's end → pane gone) with
 * the load average; nothing asserts on them (the machine may be busy).
 */

import assert from "node:assert/strict";
import { createRealClock, waitFor } from "../lib/sys/clock.ts";
import { createProcesses } from "../lib/sys/processes.ts";
import { runCli } from "./helpers/cli_process.ts";
import { TASK_TRIGGER } from "./helpers/mock_model.ts";
import { opencode2Bin } from "./helpers/opencode2_home.ts";
import { stopProcess } from "./helpers/opencode_home.ts";
import { CHILD2_MARKER, openTui2Box, type Tui2Box } from "./helpers/opencode2_tui.ts";
import { waitUntil } from "./helpers/opencode_tui.ts";
import { childrenOf, cmdline } from "./helpers/opencode_server.ts";
import { requirement, requires, tool } from "./helpers/requires.ts";
import { runTag } from "./helpers/run_tag.ts";
import { startTmuxServer, type TmuxServer } from "./helpers/tmux_server.ts";

const clock = createRealClock();
const processes = createProcesses();
const NEEDS = [
  requirement(
    "OpenCode 2.x (@opencode/cli)",
    opencode2Bin() !== null,
    "run scripts/setup.sh (tools/opencode2)",
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

function read(path: string): string {
  try {
    return Deno.readTextFileSync(path);
  } catch {
    return "";
  }
}

/** The panes muxbridge opened on a tmux server: their start command runs 2.x's `--server`. */
async function childPanes(tmux: TmuxServer): Promise<Array<{ id: string; command: string }>> {
  const out = await tmux.tmux([
    "list-panes",
    "-a",
    "-F",
    "#{pane_id}\t#{pane_start_command}",
  ]).catch(() => "");
  return out.trim().split("\n").filter((l) => l.includes("--server")).map((l) => {
    const [id, ...rest] = l.split("\t");
    return { id, command: rest.join("\t") };
  });
}

/** The bridges a TUI process runs (its children running `… bridge …`). */
function bridgesOf(tuiPid: number): number[] {
  return childrenOf(tuiPid).filter((pid) => (cmdline(pid) ?? []).includes("bridge"));
}

Deno.test({
  name:
    "real OpenCode 2.x: install, plain opencode in tmux, one pane per subagent child showing it live, closed at its end; a second TUI in another tmux gets its own; nothing runs after; uninstall",
  ...requires("the OpenCode 2.x TUI end-to-end test", NEEDS),
  async fn() {
    let box: Tui2Box | undefined;
    let second: TmuxServer | undefined;
    const tuis: number[] = [];
    const bridges = new Set<number>();
    const timings: Record<string, number | string> = {};
    try {
      box = await openTui2Box({ chunkDelayMs: 100 });
      const b = box;
      const env: Record<string, string> = {
        ...b.home.env,
        DENO_DIR: Deno.env.get("DENO_DIR") ??
          `${Deno.env.get("XDG_CACHE_HOME") ?? `${Deno.env.get("HOME")}/.cache`}/deno`,
        ...runTag(),
      };
      const pluginLog = `${env.XDG_STATE_HOME}/muxbridge/bridge.log`;
      const installed = await runCli(["install", "--json"], { env, timeoutMs: 120_000 });
      assert.equal(installed.code, 0, installed.stderr);
      assert.ok(JSON.parse(installed.stdout).opencode.lines.includes("2.x"), installed.stdout);
      await waitUntil(
        "the service to load muxbridge",
        async () =>
          (await b.service.plugins()).some((p) => p.id === "muxbridge" && p.status === "active"),
        90_000,
      );

      // ---------------------------------------------------------------- 1. one TUI, one child
      b.mock.hold(); // the child streams the marker until released
      const tui = await b.start();
      tuis.push(tui.pid);
      timings.tuiFirstDrawMs = tui.firstDrawMs;
      const t0 = clock.now();
      await tui.promptTask();
      await waitUntil(
        "the child's pane",
        async () => (await childPanes(b.tmux)).length > 0,
        180_000,
        () => read(pluginLog),
      );
      timings.promptToPaneMs = clock.now() - t0;
      const [pane] = await childPanes(b.tmux);
      assert.match(pane.command, /--session ses_\w+/, pane.command);
      await waitUntil(
        "the child's text in its pane",
        async () => (await b.capture(pane.id).catch(() => "")).includes(CHILD2_MARKER),
        180_000,
        () => b.capture(pane.id).catch(() => ""),
      );
      timings.promptToChildVisibleMs = clock.now() - t0;
      assert.equal((await childPanes(b.tmux)).length, 1, "exactly one pane for the one child");
      const own = bridgesOf(tui.pid);
      assert.equal(own.length, 1, `one bridge for the TUI: ${JSON.stringify(own)}`);
      own.forEach((p) => bridges.add(p));
      // The pane's own TUI is passive: it started no bridge of its own.
      const panePid = Number(await b.tmux.tmux(["display", "-p", "-t", pane.id, "#{pane_pid}"]));
      const paneTree = [panePid, ...childrenOf(panePid)];
      assert.ok(
        paneTree.every((p) => bridgesOf(p).length === 0),
        "no bridge started from inside a muxbridge pane",
      );

      b.mock.release(); // the child's run ends
      const tEnd = clock.now();
      await waitUntil(
        "the pane to close after the child's end",
        async () => (await childPanes(b.tmux)).length === 0,
        120_000,
        () => read(pluginLog),
      );
      timings.childEndToPaneGoneMs = clock.now() - tEnd;
      // The bridge's report reaches the plugin's log a moment after the pane is gone.
      await waitUntil(
        "pane.closed idle in the plugin's log",
        () => /"type":"pane\.closed".*"reason":"idle"/.test(read(pluginLog)),
        30_000,
        () => read(pluginLog),
      );

      // -------------------------------------- 2. a second TUI, second tmux server, another project
      const project2 = `${b.base}/project2`;
      await Deno.mkdir(project2);
      await new Deno.Command("git", { args: ["init", "-q", project2], stdout: "null" }).output();
      second = await startTmuxServer({ width: 200, height: 50 });
      for (const [k, v] of Object.entries(b.home.env)) {
        await second.tmux(["set-environment", "-g", k, v]);
      }
      const started = await second.runner([
        "tmux",
        "-L",
        second.socketName,
        "new-window",
        "-d",
        "-P",
        "-F",
        "#{pane_id}\t#{pane_pid}",
        "-c",
        project2,
        "--",
        "opencode",
      ], { timeoutMs: 5000, env: { PATH: b.home.env.PATH } });
      assert.equal(started.code, 0, started.stderr);
      const [pane2, pid2Text] = started.stdout.trim().split("\t");
      tuis.push(Number(pid2Text));
      const s2 = second;
      const screen2 = () => s2.tmux(["capture-pane", "-p", "-t", pane2]).catch(() => "");
      await waitUntil(
        "the second TUI's prompt box",
        async () => /Ask anything/.test(await screen2()),
        120_000,
        screen2,
      );
      b.mock.hold();
      await s2.tmux(["send-keys", "-t", pane2, "-l", `${TASK_TRIGGER} go`]);
      await waitUntil(
        "the typed prompt",
        async () => (await screen2()).includes(TASK_TRIGGER),
        15_000,
        screen2,
      );
      await s2.tmux(["send-keys", "-t", pane2, "Enter"]);
      await waitUntil(
        "the second TUI's child pane, in its own tmux",
        async () => (await childPanes(s2)).length === 1,
        180_000,
        () => read(pluginLog),
      );
      assert.deepEqual(await childPanes(b.tmux), [], "none in the first TUI's tmux");
      bridgesOf(Number(pid2Text)).forEach((p) => bridges.add(p));
      assert.equal(bridges.size, 2, "one bridge per TUI");
      assert.match(read(pluginLog), /"reason":"not_driven"/, "the first TUI's bridge skipped it");
      b.mock.release();
      await waitUntil(
        "its pane to close",
        async () => (await childPanes(s2)).length === 0,
        120_000,
        () => read(pluginLog),
      );

      // ------------------------------------------ 3. everything stops; nothing of muxbridge runs
      for (const pid of tuis) await stopProcess(pid, 10_000);
      const ended = await waitFor(clock, () => [...bridges].every((p) => !processes.alive(p)), {
        deadline: clock.now() + 30_000,
        maxIntervalMs: 100,
      });
      assert.ok(
        ended,
        `bridges still running after their TUIs: ${[...bridges].filter((p) => processes.alive(p))}`,
      );

      const removed = await runCli(["uninstall", "--json"], { env });
      assert.equal(removed.code, 0, removed.stderr);
      const left: string[] = [];
      for await (const e of Deno.readDir(b.home.configDir)) {
        if (/muxbridge/.test(e.name)) left.push(e.name);
        if (e.isDirectory && (e.name === "plugins" || e.name === "plugin")) {
          for await (const f of Deno.readDir(`${b.home.configDir}/${e.name}`)) {
            if (/muxbridge/.test(f.name)) left.push(`${e.name}/${f.name}`);
          }
        }
      }
      assert.deepEqual(left, [], "no muxbridge file left in OpenCode's config");
      await waitUntil(
        "the service to unload muxbridge",
        async () => !(await b.service.plugins()).some((p) => p.id === "muxbridge"),
        90_000,
      );
      // A child started now gets no pane.
      const again = await b.start();
      tuis.push(again.pid);
      const before = b.mock.ended.length;
      await again.promptTask();
      await waitUntil(
        "the child's run after uninstall",
        () => b.mock.ended.slice(before).some((e) => e.kind === "child"),
        180_000,
      );
      await new Promise((r) => setTimeout(r, 3000));
      assert.deepEqual(await childPanes(b.tmux), [], "no pane after uninstall");
      assert.equal(bridgesOf(again.pid).length, 0, "no bridge after uninstall");
      console.log(`e2e_tui2 timings (ms): ${JSON.stringify(timings)}; load ${loadAverage()}`);
    } finally {
      for (const pid of tuis) await stopProcess(pid, 10_000).catch(() => {});
      await second?.close();
      await box?.close();
    }
  },
});
