/** The backend contract against the real tmux, on a private server. */

import { resolveConfig } from "../../lib/config.ts";
import { createRealClock } from "../../lib/sys/clock.ts";
import { silentLogger } from "../../lib/sys/log.ts";
import { createTmuxBackend } from "../../backends/tmux.ts";
import { startTmuxServer } from "../helpers/tmux_server.ts";
import { backendContract } from "./_contract.ts";

backendContract("tmux", async () => {
  const server = await startTmuxServer();
  const config = resolveConfig({
    env: () => undefined,
    flags: { backend: "tmux", tmux: { socket_name: server.socketName, target: server.anchorPane } },
  });
  const backend = createTmuxBackend({
    run: server.runner,
    env: (name) => server.env[name],
    clock: createRealClock(),
    config,
    identity: { backend: null, layers: [], harness: { name: null } },
    log: silentLogger,
  });
  return { backend, dir: server.dir, close: () => server.close() };
});
