/**
 * End to end: bridge mode as a black box (the compiled binary under `deno task test:binary`,
 * else `deno run main.ts`): the embedded version in `ready`, and `bye` with exit 0 on every stop
 * signal, in an isolated environment with no multiplexer.
 */

import assert from "node:assert/strict";
import denoConfig from "../deno.json" with { type: "json" };
import { createRealClock, waitFor } from "../lib/sys/clock.ts";
import { muxbridgeArgv, startBridge } from "./helpers/bridge_process.ts";
import { runTag } from "./helpers/run_tag.ts";

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

Deno.test("muxbridge bridge: a reader slower than the bridge still gets every line, bye last", async () => {
  // The bridge must not exit with lines still queued for stdout: `process.exit()` drops them.
  // Under Bun an empty write's callback ran ahead of the queued data, so a reader that lagged
  // behind by more than the pipe holds lost its last lines, `bye` among them.
  const iso = await isolatedEnv();
  const [cmd, ...pre] = muxbridgeArgv();
  const child = new Deno.Command(cmd, {
    args: [...pre, "bridge"],
    env: {
      PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
      ...iso.env,
      MUXBRIDGE_BACKEND: "none",
      ...runTag(),
    },
    clearEnv: true,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  try {
    let stderr = "";
    const stderrRead = (async () => {
      for await (const chunk of child.stderr.pipeThrough(new TextDecoderStream())) stderr += chunk;
    })();
    let exited = false;
    const status = child.status.then((s) => {
      exited = true;
      return s;
    });
    // ~0.6 MB of answers: far more than a pipe holds.
    const n = 20_000;
    const input = Array.from({ length: n }, (_, id) => `{"type":"bridge.ping","id":${id}}\n`);
    const writer = child.stdin.getWriter();
    const writing = writer.write(new TextEncoder().encode(input.join(""))).then(() =>
      writer.close()
    );
    // Nobody reads stdout until the bridge is shutting down, or has ended, or cannot go on
    // without a reader (a runtime whose writes block: Deno): the bound is for that last case.
    const clock = createRealClock();
    await waitFor(clock, () => exited || stderr.includes("shutting down"), {
      deadline: clock.now() + 2000,
    });
    const out = await new Response(child.stdout).text();
    await writing;
    const { code } = await status;
    await stderrRead;
    assert.equal(code, 0, stderr);
    const lines = out.split("\n");
    assert.equal(lines.pop(), "", "the output ends with a whole line");
    assert.equal(lines.length, n + 2, `every line arrived (the last: ${lines.at(-1)})`);
    assert.equal(JSON.parse(lines[0]).type, "ready");
    assert.deepEqual(JSON.parse(lines[n]), { type: "pong", id: n - 1 });
    assert.deepEqual(JSON.parse(lines[n + 1]), { type: "bye", closed: 0 });
  } finally {
    await iso.close();
  }
});
