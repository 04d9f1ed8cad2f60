/**
 * End to end, on a private real tmux server whose `default-shell` is fish (not POSIX: `(cmd)` is
 * its command substitution, `$(…)`, `{a,b}` and quotes mean other things) and whose
 * `default-command` is hostile: panes start by argv, never through the user's shell, so the
 * attach receives exactly the contract's argv, hostile directory included, in the split and in
 * the overflow-window path, and nothing the user's shell or default-command would run ever runs.
 */

import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { events, startBridge } from "./helpers/bridge_process.ts";
import { isType, livePanes, realLife, runCli } from "./helpers/real_life.ts";
import { until } from "./helpers/until.ts";
import { recordedLaunches, writeStandIn } from "./helpers/stand_in.ts";
import { serveFakeOpencode } from "./helpers/fake_opencode_server.ts";
import { requires, tool, which } from "./helpers/requires.ts";

const P = "ses_shellParent";
const FISH = which("fish") ?? "fish";

Deno.test({
  name:
    "panes start by argv under a fish default-shell and a hostile default-command: exact argv, nothing run by a shell",
  ...requires("fish as tmux's default-shell", [tool("fish", "apt-get install -y fish")]),
  async fn() {
    let standIns = "";
    const s = await realLife(async (dir) => {
      standIns = `${dir}/stand-ins`;
      await Deno.mkdir(standIns);
      return { opencode_bin: await writeStandIn(standIns) };
    });
    const server = serveFakeOpencode();
    server.fake.knowAll = true; // the tests invent session ids
    try {
      const ran = `${s.dir}/default-command-ran`;
      await s.server.tmux(["set-option", "-g", "default-shell", FISH]);
      await s.server.tmux(["set-option", "-g", "default-command", `touch '${ran}'; exit 3`]);
      // Every character a shell (POSIX or fish) or tmux's own parser would act on, and a
      // trailing ';' (tmux's command separator when it ends an argument).
      const project = `${s.dir}/p 'q' "d" $(touch pwned) \`touch pwned2\` (touch pwned3) ` +
        `{a,b} * ? ~ & | \\ $HOME #{pane_id} %1;`;
      await Deno.mkdir(project);
      const title = "t $(touch pwned4) (touch pwned5) 'q' \"d\" #{pane_id};";
      const A = "ses_shellSplit", W = "ses_shellWindow";

      const bridge = startBridge(["--url", server.url, "--dir", s.dir], s.env);
      let paneA = "";
      try {
        await bridge.waitFor(isType("ready"));
        await bridge.send(events.created(P, "parent", null, s.dir));
        await bridge.send(events.created(A, title, P, project));
        paneA = String((await bridge.waitFor(isType("pane.opened", A))).paneId);
        await until(
          "the split pane's launch",
          async () => (await recordedLaunches(standIns)).length === 1,
        );
      } finally {
        bridge.kill("SIGKILL");
        await bridge.status.catch(() => {});
      }

      // The overflow-window path (new-window), through the CLI with placement window.
      const config = JSON.parse(await Deno.readTextFile(`${s.dir}/config.json`));
      const windowConfig = `${s.dir}/window.json`;
      await Deno.writeTextFile(windowConfig, JSON.stringify({ ...config, placement: "window" }));
      const spawned = await runCli(
        [
          "--config",
          windowConfig,
          "spawn",
          "--session",
          W,
          "--url",
          server.url,
          "--dir",
          project,
          "--title",
          title,
          "--json",
        ],
        s.env,
      );
      assert.equal(spawned.code, 0, spawned.stderr);
      const paneW = JSON.parse(spawned.stdout).paneId as string;
      await until(
        "the window pane's launch",
        async () => (await recordedLaunches(standIns)).length === 2,
      );

      const launches = await recordedLaunches(standIns);
      for (const id of [A, W]) {
        const launch = launches.find((l) => l.argv[3] === id);
        assert.ok(launch, `launch of ${id}`);
        assert.deepEqual(launch.argv, ["attach", server.url, "--session", id, "--dir", project]);
        assert.equal(launch.cwd, project);
      }
      const live = await livePanes(s.server);
      assert.notEqual(live.get(paneW)?.window, live.get(paneA)?.window, "W is in its own window");
      const titles = await s.server.tmux(["list-panes", "-a", "-F", "#{pane_title}"]);
      assert.equal(
        titles.split("\n").filter((t) => t === title).length,
        2,
        "titles arrive verbatim",
      );
      assert.ok(!existsSync(ran), "tmux's default-command never ran");
      for (const where of [s.dir, project, s.server.dir, standIns]) {
        const made = [...Deno.readDirSync(where)].map((e) => e.name).filter((n) =>
          n.startsWith("pwned")
        );
        assert.deepEqual(made, [], `nothing was executed in ${where}`);
      }
    } finally {
      await server.close();
      await s.close();
    }
  },
});
