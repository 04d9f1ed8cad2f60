/** The backend contract against the real tmux, on a private server. */

import { resolveConfig } from "../helpers/config.ts";
import { createRealClock } from "../../lib/sys/clock.ts";
import { silentLogger } from "../../lib/sys/log.ts";
import { createTmuxBackend } from "../../backends/tmux/backend.ts";
import { startTmuxServer } from "../helpers/tmux_server.ts";
import { backendContract } from "./_contract.ts";
import { answerFault, losingRunner } from "./_lost_answer.ts";

/**
 * Whether tmux commands open a pane: on argv (a command of its own, or inside the `if-shell`
 * block of an open) or in the command lines of `source-file -`.
 */
export const opensPane = (argv: readonly string[], stdin: string | undefined) =>
  [...argv, stdin ?? ""].some((a) => /(^|[\s;])(split-window|new-window)(\s|$)/.test(a));

backendContract("tmux", async () => {
  const server = await startTmuxServer();
  const answers = answerFault();
  const config = resolveConfig({
    env: () => undefined,
    flags: { backend: "tmux", tmux: { socket_name: server.socketName, target: server.anchorPane } },
  });
  const backend = createTmuxBackend({
    run: losingRunner(server.runner, answers, opensPane),
    env: (name) => server.env[name],
    clock: createRealClock(),
    config,
    identity: { backend: null, layers: [], harness: { name: null } },
    log: silentLogger,
  });
  return {
    backend,
    dir: server.dir,
    answers,
    paneIds: async () =>
      (await server.tmux(["list-panes", "-a", "-F", "#{pane_id}"])).trim().split("\n"),
    restart: () => server.restart(),
    async userPane() {
      const out = await server.tmux([
        "split-window",
        "-d",
        "-P",
        "-F",
        "#{pane_id} #{pane_pid}",
        "-t",
        server.anchorPane,
        "--",
        "sleep",
        "424242",
      ]);
      const [paneId, pid] = out.trim().split(" ");
      return { paneId, pid: Number(pid) };
    },
    close: () => server.close(),
  };
});
