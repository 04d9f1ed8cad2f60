/**
 * The backend contract against the real tmux with `tmux.control_mode` on: commands go over a
 * control-mode channel while panes open, and through processes once panes are being closed.
 */

import { createTmuxBackend } from "../../backends/tmux.ts";
import { createRealClock } from "../../lib/sys/clock.ts";
import { resolveConfig } from "../../lib/config.ts";
import { silentLogger } from "../../lib/sys/log.ts";
import { startTmuxServer } from "../helpers/tmux_server.ts";
import { backendContract } from "./_contract.ts";

backendContract("tmux (control mode)", async () => {
  const server = await startTmuxServer();
  const config = resolveConfig({
    env: () => undefined,
    flags: {
      backend: "tmux",
      tmux: { socket_name: server.socketName, target: server.anchorPane, control_mode: true },
    },
  });
  const backend = createTmuxBackend({
    run: server.runner,
    openChannel: server.openChannel,
    env: (name) => server.env[name],
    clock: createRealClock(),
    config,
    identity: { backend: null, layers: [], harness: { name: null } },
    log: silentLogger,
  });
  return {
    backend,
    dir: server.dir,
    close: async () => {
      await backend.dispose?.();
      await server.close();
    },
  };
});
