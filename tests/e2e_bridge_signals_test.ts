/**
 * End to end: bridge mode as a black box (the compiled binary under `deno task test:binary`,
 * else `deno run main.ts`): the embedded version in `ready`, and `bye` with exit 0 on every stop
 * signal, in an isolated environment with no multiplexer.
 */

import assert from "node:assert/strict";
import denoConfig from "../deno.json" with { type: "json" };
import { startBridge } from "./helpers/bridge_process.ts";

const VERSION = denoConfig.version;

/** A temporary HOME with XDG dirs inside it, removed by `close()`. */
async function isolatedEnv(): Promise<{ env: Record<string, string>; close(): Promise<void> }> {
  const home = await Deno.makeTempDir({ prefix: "muxbridge-cli-" });
  return {
    env: {
      HOME: home,
      XDG_CONFIG_HOME: `${home}/.config`,
      XDG_STATE_HOME: `${home}/.local/state`,
      MUXBRIDGE_STATE_DIR: `${home}/state`,
    },
    close: () => Deno.remove(home, { recursive: true }),
  };
}

Deno.test("muxbridge bridge: ready first with the embedded version, pong, bye last, exit 0", async () => {
  const iso = await isolatedEnv();
  try {
    const bridge = startBridge([], { ...iso.env, MUXBRIDGE_BACKEND: "none" });
    const ready = await bridge.waitFor((l) => l.type === "ready");
    assert.deepEqual(
      {
        type: ready.type,
        protocol: ready.protocol,
        version: ready.version,
        backend: ready.backend,
      },
      { type: "ready", protocol: 1, version: VERSION, backend: null },
    );
    await bridge.send({ type: "bridge.ping", id: 7 });
    await bridge.waitFor((l) => l.type === "pong" && l.id === 7);
    await bridge.endInput();
    const status = await bridge.status;
    assert.equal(status.code, 0, bridge.stderr());
    assert.equal(bridge.lines[0], ready);
    assert.equal(bridge.lines.at(-1)?.type, "bye");
    assert.deepEqual(bridge.junk, []);
  } finally {
    await iso.close();
  }
});

Deno.test("muxbridge bridge says bye and exits 0 on SIGTERM, SIGINT and SIGHUP", async () => {
  const iso = await isolatedEnv();
  try {
    for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"] as const) {
      const bridge = startBridge([], { ...iso.env, MUXBRIDGE_BACKEND: "none" });
      await bridge.waitFor((l) => l.type === "ready");
      bridge.kill(signal);
      const status = await bridge.status;
      assert.equal(status.code, 0, `${signal}: ${bridge.stderr()}`);
      assert.equal(bridge.lines.at(-1)?.type, "bye", signal);
      await bridge.endInput();
    }
  } finally {
    await iso.close();
  }
});
