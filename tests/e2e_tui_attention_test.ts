/**
 * A child that needs the user, with the REAL OpenCode 1.18.33 TUI in a private tmux
 * (`helpers/opencode_tui.ts`), plain `opencode` after `muxbridge install`, and a config that asks
 * before `bash` (`"permission": {"bash": "ask"}`):
 *
 * 1. the mock model's child calls `bash`: its pane shows `[needs you]` and `@muxbridge-status`
 *    `waiting` (the time from the request's own timestamp is printed; only a ceiling that ends a
 *    hung test is asserted), the bell reaches tmux (the window's bell flag), and once the
 *    permission is answered (Enter: allow once) the pane says `[busy]` again;
 * 2. a child of an agent allowed the `question` tool (the `general` agent is not offered it on
 *    1.18.33) asks a question: `waiting` again, and the answer brings `busy` back.
 *
 * Where the answer is given: OpenCode 1.18.33 shows a child's permission prompt and question only
 * in the root session's view (the main TUI); the child's own view, which its pane attaches to,
 * shows the pending tool call and no prompt (seen here, also when the request comes after the
 * pane drew). The test answers in the main TUI and checks the child's pane shows no prompt.
 *
 * The request's time comes from its id (`per_…`, `que_…`: OpenCode's ascending ids carry the
 * creation time in milliseconds), read from `GET /permission` and `GET /question` through the
 * pane's own server URL and credentials.
 */

import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { processEnviron } from "../lib/sys/processes.ts";
import { runCli } from "./helpers/cli_process.ts";
import { cmdline, opencodeBin } from "./helpers/opencode_server.ts";
import { openTuiBox, type PaneInfo, type Tui, waitUntil } from "./helpers/opencode_tui.ts";
import { requirement, requires, tool } from "./helpers/requires.ts";

const NEEDS = [
  requirement(
    "the opencode binary",
    opencodeBin() !== null,
    "npm install (opencode-ai), or set OPENCODE_TEST_BIN",
  ),
  tool("tmux"),
];

/** Ends a hung test only: the machine may be loaded. */
const CEILING_MS = 120_000;

/**
 * The time an OpenCode 1.x id was made (`Identifier.ascending`: the low 48 bits of
 * `ms * 4096 + counter`, hex, after the prefix), near `now`.
 */
function idTime(id: string, now = Date.now()): number {
  const hex = /^[a-z]+_([0-9a-f]{12})/.exec(id)?.[1];
  assert.ok(hex, `an OpenCode id: ${id}`);
  const low = BigInt(`0x${hex}`);
  const wrap = 1n << 48n;
  const scaled = BigInt(now) * 4096n;
  let full = scaled - (scaled % wrap) + low;
  if (full > scaled + wrap / 2n) full -= wrap;
  return Number(full / 4096n);
}

Deno.test({
  name:
    "real OpenCode TUI: a child waiting for a permission and a child asking a question show [needs you] and waiting on their panes, ring the bell, and go back to busy once answered",
  ...requires("the real OpenCode TUI attention test", NEEDS),
  async fn() {
    const box = await openTuiBox({
      children: [
        { tool: { name: "bash", arguments: { command: "echo hi", description: "Say hi" } } },
        {
          agent: "asker",
          tool: {
            name: "question",
            arguments: {
              questions: [{
                question: "Which color?",
                header: "Color",
                options: [{ label: "red", description: "Red" }, {
                  label: "blue",
                  description: "Blue",
                }],
              }],
            },
          },
        },
      ],
      config: {
        permission: { bash: "ask" },
        agent: {
          asker: {
            mode: "subagent",
            description: "Asks the user a question",
            permission: { question: "allow" },
          },
        },
      },
    });
    let tui: Tui | undefined;
    const attachPanes = async (): Promise<PaneInfo[]> =>
      (await box.panes()).filter((p) => / attach /.test(` ${p.startCommand} `));
    const display = async (pane: string, format: string) =>
      (await box.tmux.tmux(["display-message", "-p", "-t", pane, format])).trim();
    const context = async () =>
      `TUI:\n${(await tui?.screen()) ?? ""}\npanes: ${
        JSON.stringify(await box.panes().catch(() => []))
      }\n${
        (await Promise.all(
          (await attachPanes().catch(() => [])).map(async (p) =>
            `pane ${p.id} ${await display(p.id, "#{pane_title} #{@muxbridge-status}").catch(
              () => "",
            )}:\n${await box.capture(p.id).catch(() => "")}`
          ),
        )).join("\n")
      }\nplugin log:\n${Deno.readTextFileSync(box.log).slice(-3000)}`;
    const until = (what: string, cond: () => boolean | Promise<boolean>, ms = CEILING_MS) =>
      waitUntil(what, cond, ms, context);

    /** The request the child has open, read through the pane's own server and credentials. */
    const openRequest = async (pane: PaneInfo, route: "permission" | "question") => {
      const argv = cmdline(pane.pid) ?? [];
      const url = argv.find((a) => a.startsWith("http://"))!;
      const dir = argv[argv.indexOf("--dir") + 1];
      const sid = argv[argv.indexOf("--session") + 1];
      const env = processEnviron(pane.pid) ?? {};
      const auth = Buffer.from(
        `${env.OPENCODE_SERVER_USERNAME ?? "opencode"}:${env.OPENCODE_SERVER_PASSWORD ?? ""}`,
      ).toString("base64");
      let found: { id: string } | undefined;
      await until(`the child's ${route} request in GET /${route}`, async () => {
        const r = await fetch(`${url}/${route}?directory=${encodeURIComponent(dir)}`, {
          headers: { authorization: `Basic ${auth}` },
        }).catch(() => null);
        const list = r?.ok ? (await r.json()) as Array<{ id: string; sessionID: string }> : [];
        found = list.find((x) => x.sessionID === sid);
        return found !== undefined;
      });
      return found!.id;
    };

    /** Runs one child to its request, checks the pane, answers in the pane, checks busy. */
    const child = async (
      route: "permission" | "question",
      known: Set<string>,
    ): Promise<{ shownMs: number; busyMs: number; picture: string }> => {
      await tui!.promptTask();
      let pane: PaneInfo | undefined;
      await until("the child's pane running attach", async () => {
        pane = (await attachPanes()).find((p) => !known.has(p.id));
        return pane !== undefined && (cmdline(pane.pid) ?? []).includes("attach");
      });
      known.add(pane!.id);
      // The child asks once its pane has drawn (the model holds its tool call until then).
      await until(
        "the pane to draw the child",
        async () => (await box.capture(pane!.id)).includes("child: say the marker"),
      );
      box.mock.release();
      box.mock.hold(); // its turn after the answer stays busy until released
      const id = await openRequest(pane!, route);
      const asked = idTime(id);
      await until(
        "[needs you] and waiting on the pane",
        async () =>
          (await display(pane!.id, "#{pane_title}")).startsWith("[needs you] ") &&
          (await display(pane!.id, "#{@muxbridge-status}")) === "waiting",
      );
      const shownMs = Date.now() - asked;
      await until(
        "the bell to reach tmux",
        async () => (await display(pane!.id, "#{window_bell_flag}")) === "1",
      );
      const picture = `${await display(
        pane!.id,
        "#{pane_title} · @muxbridge-status #{@muxbridge-status}",
      )}\n${await box.capture(pane!.id)}`;
      // OpenCode 1.18.33 asks in the root session's view only: a child's view (its pane's attach
      // too) shows the pending call but no prompt. Answered there: the selected choice (allow
      // once; the first option).
      const prompt = route === "permission" ? /Permission required/ : /Which color\?/;
      await until(
        "the request in OpenCode's own view",
        async () => prompt.test(await tui!.screen()),
      );
      assert.doesNotMatch(await box.capture(pane!.id), prompt, "no prompt in the child's view");
      await box.tmux.tmux(["send-keys", "-t", tui!.pane, "Enter"]);
      const t0 = Date.now();
      await until(
        "busy again on the pane",
        async () =>
          (await display(pane!.id, "#{@muxbridge-status}")) === "busy" &&
          (await display(pane!.id, "#{pane_title}")).startsWith("[busy] "),
      );
      return { shownMs, busyMs: Date.now() - t0, picture };
    };

    try {
      const installed = await runCli(["install", "--json"], {
        env: {
          HOME: box.env.HOME,
          XDG_CONFIG_HOME: box.env.XDG_CONFIG_HOME,
          XDG_STATE_HOME: box.env.XDG_STATE_HOME,
          PATH: box.env.PATH,
          DENO_DIR: box.env.DENO_DIR,
        },
      });
      assert.equal(installed.code, 0, installed.stderr);
      tui = await box.start();
      await until("the bridge's ready", () => Deno.readTextFileSync(box.log).includes('"ready"'));
      box.mock.hold(); // each child asks only once its pane drew, and stays busy after its answer
      const known = new Set<string>();

      const permission = await child("permission", known);
      box.mock.release();
      await until(
        "the first child's pane to close",
        async () => (await attachPanes()).length === 0,
      );

      box.mock.hold();
      const question = await child("question", known);
      box.mock.release();
      assert.ok(
        box.mock.childTools.some((tools) => tools.includes("question")),
        "the asker child was offered the question tool",
      );
      assert.ok(
        box.mock.childTools.some((tools) => !tools.includes("question")),
        "the general child was not",
      );
      console.log(
        `      [needs you] shown ${permission.shownMs} ms (permission) and ${question.shownMs} ms (question) after the request was made; busy again ${permission.busyMs} / ${question.busyMs} ms after the answer was typed (load ${
          Deno.readTextFileSync("/proc/loadavg").split(" ")[0]
        })\n      a waiting child's pane (capture-pane):\n${
          permission.picture.trimEnd().split("\n").map((l) => `      | ${l.trimEnd()}`).join("\n")
        }`,
      );
      assert.ok(permission.shownMs < CEILING_MS && question.shownMs < CEILING_MS);
      await tui.stop();
    } finally {
      box.mock.release();
      await tui?.stop();
      await box.close();
    }
  },
});
