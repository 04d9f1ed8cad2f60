/**
 * Names that cannot escape (issue 23, item 2), as it was found: tmux joins `tmux.socket_name`
 * onto `$TMUX_TMPDIR/tmux-<uid>/`, so `"../evil/s"` reached a server listening on a socket
 * another user controls, and the pane opened there with the server's password in its
 * environment. Here "another user's server" is a real tmux server on `$TMUX_TMPDIR/evil/s`, and
 * the victim's is another real tmux server, both private to the test. The name is refused from
 * the config file (naming the key) and from `bridge.hello` (which may not choose a socket at
 * all), and no pane ever opens on the foreign server.
 */

import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createRealClock, waitFor } from "../lib/sys/clock.ts";
import { createRunner } from "../lib/sys/exec.ts";
import { createProcesses } from "../lib/sys/processes.ts";
import { events, startBridge } from "./helpers/bridge_process.ts";
import { serveFakeOpencode } from "./helpers/fake_opencode_server.ts";
import { isType, runCli, tmuxBridgeEnv } from "./helpers/real_life.ts";
import { startTmuxServer, type TmuxServer } from "./helpers/tmux_server.ts";

const HOSTILE = "../evil/s";

/** A tmux server on `<victim's TMUX_TMPDIR>/evil/s`: where `-L ../evil/s` leads. */
interface Foreign {
  /** Its socket path. */
  path: string;
  /** How many panes it has. */
  panes(): Promise<number>;
  close(): Promise<void>;
}

async function foreignServer(victim: TmuxServer): Promise<Foreign> {
  const dir = `${victim.env.TMUX_TMPDIR}/evil`;
  await Deno.mkdir(dir, { mode: 0o700 });
  const path = `${dir}/s`;
  const env = { HOME: victim.env.HOME, TMUX: "", TMUX_PANE: "" };
  const run = createRunner();
  const tmux = (args: string[]) => run(["tmux", "-S", path, ...args], { timeoutMs: 5000, env });
  const started = await tmux([
    "-f",
    "/dev/null",
    "new-session",
    "-d",
    "-s",
    "t",
    "sleep",
    "100000",
  ]);
  assert.equal(started.code, 0, started.stderr);
  const pid = Number((await tmux(["display-message", "-p", "#{pid}"])).stdout.trim());
  return {
    path,
    async panes() {
      const r = await tmux(["list-panes", "-a", "-F", "#{pane_id}"]);
      return r.stdout.split("\n").filter(Boolean).length;
    },
    async close() {
      await tmux(["kill-server"]).catch(() => {});
      const clock = createRealClock();
      const gone = await waitFor(clock, () => !createProcesses().alive(pid), {
        deadline: clock.now() + 3000,
      });
      if (!gone) Deno.kill(pid, "SIGKILL");
    },
  };
}

Deno.test('a config file\'s tmux.socket_name "../evil/s" is refused naming the key, and no pane opens on the server it leads to', async () => {
  const server = await startTmuxServer();
  const foreign = await foreignServer(server);
  const oc = serveFakeOpencode();
  oc.fake.knowAll = true;
  const dir = mkdtempSync(join(tmpdir(), "muxbridge-sec-names-"));
  try {
    // Without the check, `tmux -L ../evil/s` reaches the foreign server, whose session "t" is a
    // valid target: the pane would open there.
    const env = await tmuxBridgeEnv(server, dir, { tmux: { socket_name: HOSTILE, target: "t" } });
    const run = await runCli([
      "spawn",
      "--session",
      "ses_namesFile1",
      "--url",
      oc.url,
      "--dir",
      dir,
    ], env);
    assert.equal(run.code, 3, run.stderr);
    assert.match(run.stderr, /key "tmux\.socket_name": it holds "\/"/);
    assert.equal(run.stdout, "");
    assert.equal(await foreign.panes(), 1, "nothing opened on the foreign server");
  } finally {
    await oc.close();
    await foreign.close();
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

Deno.test("bridge.hello cannot point tmux at another socket or session: an error line each, and the next pane opens on the user's own server", async () => {
  const server = await startTmuxServer();
  const foreign = await foreignServer(server);
  const oc = serveFakeOpencode();
  oc.fake.knowAll = true;
  const dir = mkdtempSync(join(tmpdir(), "muxbridge-sec-names-"));
  try {
    const program = `${dir}/attach-stand-in`;
    await Deno.writeTextFile(program, "#!/bin/sh\nexec sleep 100000\n", { mode: 0o755 });
    const env = await tmuxBridgeEnv(server, dir, { opencode_bin: program });
    const bridge = startBridge(["--url", oc.url, "--dir", dir], env);
    try {
      await bridge.waitFor(isType("ready"));
      const hostile = [
        { tmux: { socket_name: HOSTILE, target: "t" } },
        { tmux: { socket_name: "victim" } },
        { tmux: { target: "t" } },
      ];
      for (const config of hostile) {
        await bridge.send({ type: "bridge.hello", serverUrl: oc.url, directory: dir, config });
      }
      await bridge.send(events.created("ses_namesParent", "p", null, dir));
      await bridge.send(events.created("ses_namesChild", "c", "ses_namesParent", dir));
      await bridge.send(events.status("ses_namesChild", "busy"));
      const opened = await bridge.waitFor(isType("pane.opened", "ses_namesChild"));
      const errors = bridge.lines.filter((l) => l.type === "error");
      assert.deepEqual(errors.map((e) => e.line), [1, 2, 3]);
      assert.ok(errors.every((e) => e.code === "invalid_config"), JSON.stringify(errors));
      assert.match(String(errors[0].message), /key "tmux\.socket_name" names a socket/);
      assert.match(String(errors[1].message), /key "tmux\.socket_name" names a socket/);
      assert.match(String(errors[2].message), /key "tmux\.target" chooses the multiplexer session/);
      // The pane is on the user's server, next to the configured anchor.
      const own = await server.tmux(["list-panes", "-a", "-F", "#{pane_id}"]);
      assert.ok(own.split("\n").includes(String(opened.paneId)), own);
      assert.equal(await foreign.panes(), 1, "nothing opened on the foreign server");
      await bridge.endInput();
      await bridge.waitFor(isType("bye"));
    } finally {
      bridge.kill("SIGKILL");
      await bridge.status.catch(() => {});
    }
  } finally {
    await oc.close();
    await foreign.close();
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
