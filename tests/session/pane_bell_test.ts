/**
 * A pane's bell on a real, private tmux server: BEL written to the terminal of the pane's own
 * start command reaches tmux (the window's bell flag), found by the pane's exit file whether the
 * backend told the pid or not; nothing rings for an exit file no start command carries, for two
 * that carry the same one, for a pid that runs something else, or once the program ended.
 */

import assert from "node:assert/strict";
import { createPaneBell } from "../../lib/session/pane_bell.ts";
import { holdArgv } from "../../lib/session/pane_program.ts";
import { createRealClock, waitFor } from "../../lib/sys/clock.ts";
import { processArgv } from "../../lib/sys/tty.ts";
import { requires, tool } from "../helpers/requires.ts";
import { startTmuxServer, type TmuxServer } from "../helpers/tmux_server.ts";

const clock = createRealClock();

/** Opens a window running the start command with `exitFile`; returns its pane and pid. */
async function holdWindow(server: TmuxServer, exitFile: string) {
  const argv = holdArgv(["sleep", "600"], { holdMs: 0, exitFile, banner: "[muxbridge] test" });
  const [pane, pid] = (await server.tmux([
    "new-window",
    "-d",
    "-P",
    "-F",
    "#{pane_id} #{pane_pid}",
    "-t",
    "t:",
    "--",
    ...argv,
  ])).trim().split(" ");
  // The start command is the pane's first process (tmux runs the argv as given).
  await waitFor(clock, () => processArgv(Number(pid))?.[6] === exitFile, {
    deadline: clock.now() + 10_000,
  });
  return { pane, pid: Number(pid) };
}

const bellFlag = async (server: TmuxServer, pane: string) =>
  (await server.tmux(["display-message", "-p", "-t", pane, "#{window_bell_flag}"])).trim();

Deno.test(
  "createPaneBell() rings the pane whose start command carries the exit file, and nothing else",
  requires("the pane bell test", [tool("tmux"), tool("sh")]),
  async () => {
    const server = await startTmuxServer();
    try {
      const bell = createPaneBell();
      const file = `${server.dir}/exits/0123456789abcdef0123456789abcdef`;
      const { pane, pid } = await holdWindow(server, file);
      assert.equal(await bellFlag(server, pane), "0");
      // Found by the exit file alone (a backend that tells no pid) …
      assert.equal(bell.ring({ exitFile: file }), "rung");
      assert.ok(
        await waitFor(clock, async () => (await bellFlag(server, pane)) === "1", {
          deadline: clock.now() + 10_000,
        }),
        "tmux saw the bell",
      );
      // … and by the recorded pid, checked against the exit file.
      assert.equal(bell.ring({ exitFile: file, pid }), "rung");
      assert.equal(bell.ring({ exitFile: `${file}x` }), "no_program");
      // A pid that runs something else is not trusted: the exit file decides.
      assert.equal(bell.ring({ exitFile: `${file}x`, pid }), "no_program");
      assert.equal(bell.ring({ exitFile: "" }), "no_program");

      // Two start commands with the same exit file: no proof of which pane is meant.
      const twin = await holdWindow(server, file);
      assert.equal(bell.ring({ exitFile: file }), "no_program");
      await server.tmux(["kill-pane", "-t", twin.pane]);
      await waitFor(clock, () => processArgv(twin.pid) === undefined, {
        deadline: clock.now() + 10_000,
      });

      await server.tmux(["kill-pane", "-t", pane]);
      await waitFor(clock, () => processArgv(pid) === undefined, {
        deadline: clock.now() + 10_000,
      });
      assert.equal(bell.ring({ exitFile: file, pid }), "no_program", "the program ended");
    } finally {
      await server.close();
    }
  },
);
