/**
 * The backend contract against the real kitty (Debian 12's 0.26.5 here) under Xvfb. One kitty
 * serves every test of this file (its start-up dominates); each test closes the windows it
 * opened. Needs kitty, xvfb-run, xauth and setsid (`requires`: skipped and listed locally,
 * a failure in CI).
 */

import { createKittyBackend } from "../../backends/kitty/backend.ts";
import { createRealClock } from "../../lib/sys/clock.ts";
import { resolveConfig } from "../helpers/config.ts";
import { silentLogger } from "../../lib/sys/log.ts";
import { KITTY_TOOLS, sharedKittyServer } from "../helpers/kitty_server.ts";
import { backendContract } from "./_contract.ts";
import { unixRequest } from "../../lib/sys/unix_request.ts";
import { answerFault, losingRequester, losingRunner } from "./_lost_answer.ts";

const kitty = sharedKittyServer();

backendContract("kitty", async () => {
  const server = await kitty.get();
  const dir = await Deno.makeTempDir({ dir: server.dir, prefix: "contract-" });
  const config = resolveConfig({
    env: () => undefined,
    flags: {
      backend: "kitty",
      command_timeout_ms: 15_000,
      kitty: { listen_on: server.address },
      // Credentials files go there: never the real home's state directory.
      state_dir: `${dir}/state`,
    },
  });
  const answers = answerFault();
  // launch goes over kitty's socket; a `kitty @ launch` would lose its answer the same way.
  const backend = createKittyBackend({
    run: losingRunner(server.runner, answers, (argv) => argv.includes("launch")),
    env: (name) => server.env[name],
    clock: createRealClock(),
    config,
    // As inside kitty: the anchor is the window muxbridge runs in.
    identity: {
      backend: "kitty",
      layers: [{ backend: "kitty", paneId: server.anchorWindow, socket: server.address }],
      harness: { name: null },
    },
    log: silentLogger,
  }, {
    unixRequest: losingRequester(unixRequest, answers, (line) => line.includes('"cmd":"launch"')),
  });
  return {
    backend,
    dir,
    answers,
    paneIds: () => server.windowIds(),
    restart: () => server.restart(),
    async userPane() {
      const r = await server.rc(["launch", "--type=window", "--keep-focus", "sleep", "424242"]);
      const paneId = r.stdout.trim();
      const listed = await server.rc(["ls"]);
      const pid = (JSON.parse(listed.stdout) as Array<
        { tabs: Array<{ windows: Array<{ id: number; pid: number }> }> }
      >).flatMap((os) => os.tabs.flatMap((t) => t.windows))
        .find((w) => String(w.id) === paneId)?.pid;
      if (pid === undefined) throw new Error(`kitty opened no user window: ${r.stderr}`);
      return { paneId, pid };
    },
    async close() {
      await server.closeOthers();
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    },
  };
}, { requires: KITTY_TOOLS, startMs: 15_000 });
