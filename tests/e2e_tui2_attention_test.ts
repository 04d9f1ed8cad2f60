/**
 * A child that needs the user on OpenCode 2.x, with the REAL OpenCode 2.1.2 TUI in a private
 * tmux, plain `opencode` after `muxbridge install`, and a config that asks before `bash` (2.x
 * migrates it to its `shell` action):
 *
 * 1. the mock model's child calls `shell`: its pane shows `[needs you]` and `@muxbridge-status`
 *    `waiting` (the delay from the request is printed, only a ceiling that ends a hung test is
 *    asserted), the bell reaches tmux (the window's bell flag), and once the permission is
 *    answered (`POST /api/session/<child>/permission/<request>/reply`) it says `busy` again;
 * 2. a child that asks a question (2.x asks it as a form) is `waiting` too, and the answer
 *    (`POST /api/session/<child>/form/<form>/reply`) brings `busy` back.
 */

import assert from "node:assert/strict";
import { createRealClock } from "../lib/sys/clock.ts";
import { runCli } from "./helpers/cli_process.ts";
import { opencode2Bin } from "./helpers/opencode2_home.ts";
import { stopProcess } from "./helpers/opencode_home.ts";
import { openTui2Box, type Tui2Box } from "./helpers/opencode2_tui.ts";
import { waitUntil } from "./helpers/opencode_tui.ts";
import { requirement, requires, tool } from "./helpers/requires.ts";
import { runTag } from "./helpers/run_tag.ts";

const clock = createRealClock();
const NEEDS = [
  requirement("OpenCode 2.x (@opencode/cli)", opencode2Bin() !== null, "run scripts/setup.sh"),
  tool("tmux"),
  tool("git"),
];
/** Ends a hung test only: the machine may be loaded. */
const CEILING_MS = 180_000;

function read(path: string): string {
  try {
    return Deno.readTextFileSync(path);
  } catch {
    return "";
  }
}

Deno.test({
  name:
    "real OpenCode 2.x TUI: a child waiting for a permission and one asking a question show [needs you] and waiting, ring the bell, and go back to busy once answered",
  ...requires("the real OpenCode 2.x attention test", NEEDS),
  async fn() {
    let box: Tui2Box | undefined;
    const tuis: number[] = [];
    try {
      box = await openTui2Box({
        chunkDelayMs: 100,
        config: {
          permission: { bash: "ask" },
          // The default `general` subagent is not offered `question`; an agent allowed it is.
          agent: {
            asker: {
              mode: "subagent",
              description: "Asks the user a question",
              permission: { question: "allow" },
            },
          },
        },
        task: {
          children: [
            { tool: { name: "shell", arguments: { command: "echo hi", description: "Say hi" } } },
            {
              agent: "asker",
              tool: {
                name: "question",
                arguments: {
                  questions: [{
                    question: "Which color do you want?",
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
        },
      });
      const b = box;
      const env: Record<string, string> = {
        ...b.home.env,
        DENO_DIR: Deno.env.get("DENO_DIR") ??
          `${Deno.env.get("XDG_CACHE_HOME") ?? `${Deno.env.get("HOME")}/.cache`}/deno`,
        ...runTag(),
      };
      const pluginLog = `${env.XDG_STATE_HOME}/muxbridge/bridge.log`;
      const installed = await runCli(["install"], { env, timeoutMs: 120_000 });
      assert.equal(installed.code, 0, installed.stderr);
      await waitUntil(
        "the service to load muxbridge",
        async () =>
          (await b.service.plugins()).some((p) => p.id === "muxbridge" && p.status === "active"),
        90_000,
      );
      const tui = await b.start();
      tuis.push(tui.pid);
      const display = (pane: string, format: string) =>
        b.tmux.tmux(["display", "-p", "-t", pane, format]).then((s) => s.trim());
      const childPane = async () =>
        (await b.panes()).find((p) => p.startCommand.includes("--server"))?.id;
      /** Waits for a child's request, answers it, and checks the pane on the way. */
      const round = async (kind: "permission" | "question") => {
        let pane: string | undefined;
        await waitUntil(
          `the ${kind} child's pane`,
          async () => !!(pane = await childPane()),
          CEILING_MS,
          () => read(pluginLog),
        );
        // The request, as the service lists it (its location is the project).
        const list = kind === "permission" ? "/api/permission/request" : "/api/form";
        const scope = `?${encodeURIComponent("location[directory]")}=${
          encodeURIComponent(b.home.project)
        }`;
        let request: { id: string; sessionID: string } | undefined;
        await waitUntil(`the ${kind} request`, async () => {
          const got = await b.service.json("GET", `${list}${scope}`) as {
            data?: Array<{ id: string; sessionID: string }>;
          };
          request = got.data?.[0];
          return request !== undefined;
        }, CEILING_MS);
        const asked = clock.now();
        await waitUntil(
          `[needs you] and waiting on the ${kind} child's pane`,
          async () =>
            (await display(pane!, "#{@muxbridge-status}")) === "waiting" &&
            (await display(pane!, "#{pane_title}")).includes("[needs you]"),
          CEILING_MS,
          () => display(pane!, "#{pane_title} · #{@muxbridge-status}"),
        );
        const shownMs = clock.now() - asked;
        await waitUntil(
          "the bell in the pane's window",
          async () => (await display(pane!, "#{window_bell_flag}")) === "1",
          CEILING_MS,
        );
        const path = kind === "permission"
          ? `/api/session/${request!.sessionID}/permission/${request!.id}/reply`
          : `/api/session/${request!.sessionID}/form/${request!.id}/reply`;
        await b.service.json(
          "POST",
          path,
          kind === "permission" ? { decision: "once" } : { answer: { q0: "red" } },
        );
        await waitUntil(
          `busy again after the ${kind} was answered`,
          async () =>
            (await display(pane!, "#{@muxbridge-status}")) !== "waiting" &&
            !(await display(pane!, "#{pane_title}")).includes("[needs you]"),
          CEILING_MS,
          () => display(pane!, "#{pane_title} · #{@muxbridge-status}"),
        );
        console.log(
          `e2e_tui2_attention: ${kind}: marker within ${shownMs} ms of the listed request`,
        );
        await waitUntil(
          `the ${kind} child's pane to close`,
          async () => !(await childPane()),
          CEILING_MS,
          () => read(pluginLog),
        );
      };
      await tui.promptTask();
      await round("permission");
      await tui.promptTask();
      await round("question");
      assert.ok(
        b.mock.childTools.some((tools) => tools.includes("question")),
        `the asker child was offered the question tool: ${JSON.stringify(b.mock.childTools)}`,
      );
    } finally {
      for (const pid of tuis) await stopProcess(pid, 10_000).catch(() => {});
      await box?.close();
    }
  },
});
