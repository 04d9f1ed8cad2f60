/**
 * Security findings about panes (issue 17, items 4 and 5), reproduced on a real private tmux
 * server: multiplexer marks are hints anyone on the tmux server can set, so a pane that carries
 * them without a record is never closed; the pane muxbridge runs in is never closed; and a
 * model-written title holding tmux style directives (`#[…]`) is shown as text, never restyles
 * the status line (checked on the screen of a real client attached to the server).
 */

import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { escapeTitle } from "../backends/tmux/_parse.ts";
import { createPaneStore } from "../lib/session/pane_store.ts";
import { serveFakeOpencode } from "./helpers/fake_opencode_server.ts";
import { runCli } from "./helpers/cli_process.ts";
import { createRandom } from "./helpers/hostile.ts";
import { tmuxBridgeEnv } from "./helpers/real_life.ts";
import { writeStandIn } from "./helpers/stand_in.ts";
import { startTmuxServer, type TmuxServer } from "./helpers/tmux_server.ts";
import { until } from "./helpers/until.ts";

async function setup() {
  const dir = mkdtempSync(join(tmpdir(), "muxbridge-sec-panes-"));
  const server = await startTmuxServer({ width: 160, height: 30 });
  const env = await tmuxBridgeEnv(server, dir);
  return {
    dir,
    server,
    env,
    alive: async (pane: string) => (await server.run(["list-panes", "-t", pane])).code === 0,
    async close() {
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Sets muxbridge's marks on a pane, as any program on the tmux server can. */
async function forgeMarks(server: TmuxServer, pane: string): Promise<void> {
  await server.tmux(["set-option", "-p", "-t", pane, "@muxbridge-session", "ses_forged1"]);
  await server.tmux(["set-option", "-p", "-t", pane, "@muxbridge-owner", "999999:1"]);
}

Deno.test("cleanup --all never closes a pane that only carries muxbridge's marks", async () => {
  const s = await setup();
  try {
    const pane = await s.server.userPane();
    await forgeMarks(s.server, pane);
    // Run from inside the tmux server (its anchor pane), so cleanup looks at tmux's panes.
    const r = await runCli(["cleanup", "--all", "--json"], {
      env: {
        ...s.env,
        TMUX: `${s.server.socketPath},${s.server.serverPid},0`,
        TMUX_PANE: s.server.anchorPane,
      },
    });
    assert.ok(await s.alive(pane), "a marked pane without a record was closed");
    assert.equal(r.code, 0, r.stderr);
    const report = JSON.parse(r.stdout);
    assert.deepEqual(report.closed, []);
    assert.match(report.kept[0].reason, /marked but not recorded/);
  } finally {
    await s.close();
  }
});

Deno.test("close refuses a pane that only carries muxbridge's marks (not_owned, exit 1)", async () => {
  const s = await setup();
  try {
    const pane = await s.server.userPane();
    await forgeMarks(s.server, pane);
    const r = await runCli(["close", pane], { env: s.env });
    assert.ok(await s.alive(pane), "a marked pane without a record was closed");
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /did not open it \(it has no record of it\).*--force/);
  } finally {
    await s.close();
  }
});

Deno.test("cleanup and close --force never close the pane muxbridge runs in", async () => {
  const s = await setup();
  try {
    const pane = await s.server.userPane();
    // A record (stale, or written by mistake) naming the caller's own pane, owner dead.
    createPaneStore(s.env.MUXBRIDGE_STATE_DIR).put({
      sessionId: "ses_self1",
      paneId: pane,
      backend: "tmux",
      title: "me",
      openedAt: "2026-11-30T12:00:00.000Z",
      owner: "999999:1",
    });
    const inPane = {
      ...s.env,
      TMUX: `${s.server.socketPath},${s.server.serverPid},0`,
      TMUX_PANE: pane,
    };
    const r = await runCli(["cleanup", "--json"], { env: inPane });
    assert.ok(await s.alive(pane), "cleanup closed the pane it runs in");
    assert.equal(r.code, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).kept[0].reason, "the pane muxbridge runs in");
    const c = await runCli(["close", "--force", pane], { env: inPane });
    assert.ok(await s.alive(pane), "close --force closed the pane it runs in");
    assert.equal(c.code, 1, c.stderr);
    assert.match(c.stderr, /muxbridge runs in it/);
  } finally {
    await s.close();
  }
});

Deno.test("a title holding tmux style directives is drawn as text on a real client's status line", async () => {
  const s = await setup();
  let outer: TmuxServer | null = null;
  // spawn checks that the server knows the session before it opens a pane.
  const opencode = serveFakeOpencode();
  opencode.fake.knowAll = true;
  try {
    const standIn = await writeStandIn(s.dir);
    await Deno.writeTextFile(
      s.env.MUXBRIDGE_CONFIG,
      JSON.stringify({
        ...JSON.parse(await Deno.readTextFile(s.env.MUXBRIDGE_CONFIG)),
        opencode_bin: standIn,
      }),
    );
    await s.server.tmux(["set-option", "-g", "status-right", "<#{pane_title}>"]);
    await s.server.tmux(["set-option", "-g", "status-right-length", "120"]);
    const hostile = "A#[fg=red,bg=blue]EVIL ###[reverse]B #[range=user|x]C";
    const spawn = await runCli([
      "spawn",
      "--session",
      "ses_title1",
      "--url",
      opencode.url,
      "--dir",
      s.dir,
      "--title",
      hostile,
    ], { env: s.env });
    assert.equal(spawn.code, 0, spawn.stderr);
    const pane = spawn.stdout.trim();
    await s.server.tmux(["select-pane", "-t", pane]);
    // A real client attached to the private server, inside a second private server whose pane
    // screen shows what that client draws.
    outer = await startTmuxServer({
      width: 160,
      height: 30,
      program: [
        "env",
        "-u",
        "TMUX",
        `TMUX_TMPDIR=${s.server.env.TMUX_TMPDIR}`,
        "tmux",
        "-L",
        s.server.socketName,
        "attach",
        "-t",
        "t",
      ],
    });
    const o = outer;
    let screen = "";
    await until("the status line to show the title", async () => {
      screen = await o.tmux(["capture-pane", "-p", "-t", o.anchorPane]);
      return screen.includes("EVIL");
    }, { ms: 15_000, context: () => screen });
    const status = screen.trimEnd().split("\n").at(-1)!;
    assert.ok(status.includes(`<${hostile}>`), `the title was not drawn as text: ${status}`);
    await runCli(["close", pane], { env: s.env });
  } finally {
    await outer?.close();
    await opencode.close();
    await s.close();
  }
});

Deno.test("escapeTitle() leaves every #[ of a stored tmux title behind an even run of #: random titles through real tmux", async () => {
  const r = createRandom();
  console.log(`title-escape seed: ${r.seed} (replay: MUXBRIDGE_SEED=${r.seed})`);
  const server = await startTmuxServer();
  try {
    const pieces = ["#", "##", "###", "[", "]", "{", "}", "(", ")", "a", ",", "fg=red", "pane_id"];
    const pane = await server.userPane();
    for (let i = 0; i < 60; i++) {
      const text = Array.from({ length: 1 + r.int(8) }, () => r.pick(pieces)).join("");
      await server.tmux(["select-pane", "-t", pane, "-T", escapeTitle(text)]);
      const stored = (await server.tmux(["display-message", "-p", "-t", pane, "#{pane_title}"]))
        .replace(/\n$/, "");
      const why = `title ${JSON.stringify(text)} stored as ${
        JSON.stringify(stored)
      } (seed ${r.seed})`;
      // tmux's style parser reads #[ after an odd run of # as a style, after an even run as text.
      for (const m of stored.matchAll(/#+(?=\[)/g)) assert.equal(m[0].length % 2, 0, why);
      assert.equal(stored, text.replace(/#+(?=\[)/g, (run) => run + run), why);
    }
  } finally {
    await server.close();
  }
});
