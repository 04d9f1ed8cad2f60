/** The backend contract against the real tmux with commands sent over a control-mode channel. */

import assert from "node:assert/strict";
import { createTmuxBackend } from "../../backends/tmux.ts";
import { createRealClock } from "../../lib/clock.ts";
import { resolveConfig } from "../../lib/config.ts";
import { silentLogger } from "../../lib/log.ts";
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
  let forks = 0;
  const backend = createTmuxBackend({
    run: (argv, opts) => {
      forks++;
      return server.runner(argv, opts);
    },
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
      // `tmux -V` and the attach target's session id are the only processes started; a fixture
      // that never talked to the server started none.
      assert.ok(forks <= 2, `${forks} tmux processes started despite the control channel`);
      await backend.dispose?.();
      await server.close();
    },
  };
});
