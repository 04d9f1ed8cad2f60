/**
 * The first run as a user has it, end to end with the REAL OpenCode 1.18.33 TUI (not `serve`)
 * in a private tmux server (see `helpers/opencode_tui.ts`): `muxbridge install`, then
 *
 * 1. plain `opencode`: the model's `task` call starts a child; exactly one pane runs
 *    `opencode attach <the plugin's endpoint> --session <child> --dir <project>` with the
 *    endpoint's secret only in its environment, shows the child's text, and closes after the
 *    child's turn; exactly one bridge; nothing left after OpenCode exits;
 * 2. `opencode --port 0` (OpenCode loads the plugin twice): one bridge, the pane attaches to
 *    OpenCode's own port; OpenCode exiting while the pane streams ends the pane's attach, and no
 *    process is left;
 * 3. `muxbridge uninstall`: nothing of muxbridge is left in OpenCode's config, and a child gets
 *    no pane.
 *
 * It prints the first-run numbers docs/performance.md quotes (prompt → pane, prompt → the child's
 * text in the pane, the child's last token → pane gone); nothing asserts on them. One run of each
 * OpenCode, every wait bounded and on a condition, every process stopped.
 */

import assert from "node:assert/strict";
import { createProcesses } from "../lib/sys/processes.ts";
import { runCli } from "./helpers/cli_process.ts";
import { requirement, requires, tool } from "./helpers/requires.ts";
import { cmdline, opencodeBin } from "./helpers/opencode_server.ts";
import {
  CHILD_MARKER,
  openTuiBox,
  type PaneInfo,
  type Tui,
  type TuiBox,
  waitUntil,
} from "./helpers/opencode_tui.ts";

const processes = createProcesses();
const NEEDS = [
  requirement(
    "the opencode binary",
    opencodeBin() !== null,
    "npm install (opencode-ai), or set OPENCODE_TEST_BIN",
  ),
  tool("tmux"),
];

function read(path: string): string {
  try {
    return Deno.readTextFileSync(path);
  } catch {
    return "";
  }
}

/** The protocol lines the plugin logged from its bridge, in order. */
function bridgeSaid(log: string): Array<Record<string, unknown>> {
  return read(log).split("\n").flatMap((l) => {
    const i = l.indexOf("] bridge: {");
    return i < 0 ? [] : [JSON.parse(l.slice(i + "] bridge: ".length))];
  });
}

/** A process's environment, from `/proc/<pid>/environ` (empty when it cannot be read). */
function environ(pid: number): Record<string, string> {
  return Object.fromEntries(
    read(`/proc/${pid}/environ`).split("\0").filter((e) => e.includes("=")).map((e) => {
      const at = e.indexOf("=");
      return [e.slice(0, at), e.slice(at + 1)];
    }),
  );
}

/** Every file and folder under `dir`, relative, sorted. */
function tree(dir: string): string[] {
  try {
    return [...Deno.readDirSync(dir)].flatMap((e) =>
      e.isDirectory ? [`${e.name}/`, ...tree(`${dir}/${e.name}`).map((p) => `${e.name}/${p}`)] : [
        e.name,
      ]
    ).sort();
  } catch {
    return [];
  }
}

const attachPanes = async (box: TuiBox): Promise<PaneInfo[]> =>
  (await box.panes()).filter((p) => / attach /.test(` ${p.startCommand} `));

/** The whole first run, in one OpenCode after another. */
Deno.test({
  name:
    "real OpenCode TUI: muxbridge install, then plain opencode gets one pane per child with the child's text, one bridge, --port 0 too, and uninstall leaves nothing",
  ...requires("the real OpenCode TUI test", NEEDS),
  async fn() {
    const box = await openTuiBox();
    const cli = (args: string[]) =>
      runCli(args, {
        env: {
          HOME: box.env.HOME,
          XDG_CONFIG_HOME: box.env.XDG_CONFIG_HOME,
          XDG_STATE_HOME: box.env.XDG_STATE_HOME,
          PATH: box.env.PATH,
          DENO_DIR: box.env.DENO_DIR,
        },
      });
    let tui: Tui | undefined;
    const context = async () => {
      const attach = await attachPanes(box).catch(() => []);
      const screens = await Promise.all(attach.map((p) => box.capture(p.id).catch(() => "")));
      return `plugin log:\n${read(box.log).slice(-4000)}\nTUI:\n${(await tui?.screen()) ?? ""}\n` +
        `panes: ${JSON.stringify(await box.panes().catch(() => []))}\n` +
        attach.map((p, i) => `pane ${p.id}:\n${screens[i]}`).join("\n");
    };
    /** The most bridges OpenCode ran at once, sampled on every wait. */
    let maxBridges = 0;
    const sample = () => (maxBridges = Math.max(maxBridges, tui?.bridges().length ?? 0));
    // A ceiling for a hung test: a real OpenCode TUI on a machine at load 19 had not made the
    // child's session after 60 s.
    const until = (what: string, cond: () => boolean | Promise<boolean>, ms = 180_000) =>
      waitUntil(what, async () => (sample(), await cond()), ms, context);
    try {
      const configBefore = tree(box.configDir);
      const installed = await cli(["install", "--json"]);
      assert.equal(installed.code, 0, installed.stderr);
      assert.ok(tree(box.configDir).includes("plugin/muxbridge.js"));

      // ------------------------------------------------------------ 1. plain `opencode`
      tui = await box.start();
      const t = tui;
      await until(
        "the bridge's ready on tmux",
        () => bridgeSaid(box.log).some((m) => m.type === "ready" && m.backend === "tmux"),
      );
      assert.match(
        read(box.log),
        /OpenCode listens on no port: forwarding http:\/\/127\.0\.0\.1:\d+\//,
      );
      assert.match(read(box.log), /\(from muxbridge\.json\)/, "the recorded command, not PATH");
      box.mock.hold(); // the child stays busy until its text is seen in its pane
      await t.promptTask();
      const t0 = performance.now();
      let pane: PaneInfo | undefined;
      /** When OpenCode's TUI first showed the task (the child's start, as the user sees it). */
      let taskShown: number | undefined;
      await until("the child's pane", async () => {
        if (taskShown === undefined && (await t.screen()).includes("muxbridge probe")) {
          taskShown = performance.now();
        }
        return (pane = (await attachPanes(box))[0]) !== undefined;
      });
      const promptToPane = performance.now() - t0;
      const taskToPane = taskShown === undefined ? NaN : performance.now() - taskShown;
      await until("the pane's attach process", () => (cmdline(pane!.pid) ?? []).includes("attach"));
      const argv = cmdline(pane!.pid) ?? [];
      const [url, sessionFlag, session, dirFlag, dir] = argv.slice(argv.indexOf("attach") + 1);
      assert.match(url, /^http:\/\/127\.0\.0\.1:\d+$/, "the plugin's endpoint");
      assert.deepEqual([sessionFlag, dirFlag, dir], ["--session", "--dir", box.project]);
      assert.match(session, /^ses_/);
      // The endpoint's per-run secret reaches the pane only through its environment: never in
      // the URL, on the pane's or the bridge's argv, or in the plugin's log.
      const secret = environ(pane!.pid).OPENCODE_SERVER_PASSWORD ?? "";
      assert.ok(secret.length >= 32, "the pane has the endpoint's secret in its environment");
      for (
        const [what, text] of [
          ["the pane's argv", argv.join(" ")],
          ["the bridge's argv", t.bridges().map((b) => (cmdline(b) ?? []).join(" ")).join("\n")],
          ["the plugin's log", read(box.log)],
        ]
      ) {
        assert.ok(!text.includes(secret), `the secret is not in ${what}`);
      }
      await until(
        "the child's text in its pane",
        async () => (await box.capture(pane!.id).catch(() => "")).includes(CHILD_MARKER),
      );
      const promptToText = performance.now() - t0;
      box.mock.release();
      await until("the child's turn to end", () => box.mock.ended.some((e) => e.kind === "child"));
      const childDone = box.mock.ended.find((e) => e.kind === "child")!.at;
      assert.equal((await attachPanes(box)).length, 1, "exactly one pane");
      await until(
        "the pane to close after the child's turn",
        async () => (await attachPanes(box)).length === 0,
      );
      const lastTokenToGone = performance.now() - childDone;
      await until("the attach process to end", () => !processes.alive(pane!.pid));
      // The plugin logs the bridge's lines when OpenCode's event loop gets to them.
      const closedLines = () => bridgeSaid(box.log).filter((m) => m.type === "pane.closed");
      await until("pane.closed in the plugin's log", () => closedLines().length > 0);
      const closed = closedLines();
      assert.deepEqual(closed.map((m) => [m.sessionID, m.reason]), [[session, "idle"]]);
      assert.equal(t.bridges().length, 1);
      const bridge = t.bridges()[0];
      await t.stop();
      await until("the bridge to end with OpenCode", () => !processes.alive(bridge));
      assert.equal(maxBridges, 1, "never more than one bridge");
      console.log(
        `e2e_tui first run (plain opencode, default timings): prompt → pane ${
          Math.round(promptToPane)
        } ms (the task shown in OpenCode → pane ${Math.round(taskToPane)} ms), ` +
          `prompt → child's text in the pane ${Math.round(promptToText)} ms, ` +
          `child's last token → pane gone ${Math.round(lastTokenToGone)} ms; ` +
          // These times depend on the machine's load: say which load they were measured at.
          `load average ${
            Deno.loadavg().map((n) => n.toFixed(2)).join(" ")
          } on ${navigator.hardwareConcurrency} CPUs`,
      );

      // ------------------------------------------------------------ 2. `opencode --port 0`
      maxBridges = 0;
      const readyBefore = bridgeSaid(box.log).filter((m) => m.type === "ready").length;
      tui = await box.start(["--port", "0"]);
      const t2 = tui;
      await until(
        "the second run's ready",
        () => bridgeSaid(box.log).filter((m) => m.type === "ready").length === readyBefore + 1,
      );
      box.mock.hold(); // the child stays busy: its pane streams when OpenCode goes away
      await t2.promptTask();
      let pane2: PaneInfo | undefined;
      await until(
        "the child's pane running attach",
        async () =>
          (pane2 = (await attachPanes(box))[0]) !== undefined &&
          (cmdline(pane2.pid) ?? []).includes("attach"),
      );
      const url2 = (cmdline(pane2!.pid) ?? []).find((a) => a.startsWith("http://")) ?? "";
      assert.doesNotMatch(read(box.log).split("] starting ").at(-1)!, /forwarding endpoint/);
      assert.notEqual(url2, url, "OpenCode's own port, not an endpoint of the plugin");
      const health = await fetch(`${url2}/global/health`);
      assert.equal((await health.json()).healthy, true, `${url2} is OpenCode's own server`);
      await until(
        "the child's text in its pane",
        async () => (await box.capture(pane2!.id).catch(() => "")).includes(CHILD_MARKER),
      );
      assert.ok(box.mock.held > 0, "the child is still streaming");
      assert.equal(t2.bridges().length, 1, "one bridge though OpenCode loaded the plugin twice");
      const bridge2 = t2.bridges()[0];
      await t2.stop();
      await until(
        "the pane to close with OpenCode",
        async () => (await attachPanes(box)).length === 0,
      );
      await until("the attach process to end", () => !processes.alive(pane2!.pid));
      await until("the bridge to end", () => !processes.alive(bridge2));
      box.mock.release();
      assert.equal(maxBridges, 1, "never more than one bridge");

      // ------------------------------------------------------------ 3. uninstall
      const beforeUninstall = tree(box.configDir);
      const removed = await cli(["uninstall", "--json"]);
      assert.equal(removed.code, 0, removed.stderr);
      // Exactly install's files go (OpenCode meanwhile added its own .gitignore).
      assert.deepEqual(
        tree(box.configDir),
        beforeUninstall.filter((p) => !p.startsWith("plugin/")),
        "nothing of muxbridge is left",
      );
      assert.deepEqual(tree(box.configDir).filter((p) => /muxbridge|^plugin/.test(p)), []);
      assert.deepEqual(
        configBefore.filter((p) => !tree(box.configDir).includes(p)),
        [],
        "nothing of the user's was taken",
      );
      const childTurns = () => box.mock.ended.filter((e) => e.kind === "child").length;
      const turnsBefore = childTurns();
      const logBefore = read(box.log);
      tui = await box.start();
      const t3 = tui;
      await t3.promptTask();
      await until("the child's turn without muxbridge", () => childTurns() === turnsBefore + 1);
      assert.deepEqual(await attachPanes(box), [], "no pane");
      assert.deepEqual(t3.bridges(), [], "no bridge");
      assert.equal(read(box.log), logBefore, "the plugin did not load");
      await t3.stop();
    } finally {
      box.mock.release();
      await tui?.stop();
      await box.close();
    }
  },
});
