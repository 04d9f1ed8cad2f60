/**
 * The backend contract through the pane-provider protocol: the provider backend talking to the
 * example tmux provider (`examples/providers/tmux/provider.ts`), which drives a real tmux on a
 * private server. Proves the protocol carries everything a full multiplexer backend does.
 */

import { startTmuxServer } from "../helpers/tmux_server.ts";
import { tool } from "../helpers/requires.ts";
import { backendContract } from "./_contract.ts";
import { exampleProviderFixture, TMUX_PROVIDER } from "./provider_fixture.ts";

backendContract("provider (tmux example, real tmux)", async () => {
  const server = await startTmuxServer();
  return exampleProviderFixture(TMUX_PROVIDER, [
    "-L",
    server.socketName,
    "--target",
    server.anchorPane,
  ], {
    env: server.env,
    dir: server.dir,
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
  });
}, { requires: [tool("tmux")] });
