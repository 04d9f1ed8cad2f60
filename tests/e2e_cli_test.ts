/**
 * End to end: the CLI as a black box (the compiled binary under `deno task test:binary`, else
 * `deno run main.ts`): stdout, stderr and exit code asserted separately, in an isolated
 * environment with no multiplexer, so nothing here can touch a user's session.
 */

import assert from "node:assert/strict";
import denoConfig from "../deno.json" with { type: "json" };
import { startBridge } from "./helpers/bridge_process.ts";
import { runCli } from "./helpers/cli_process.ts";

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

/** Asserts a failure printed exactly one line on stderr and nothing on stdout. */
function assertOneLineFailure(run: { stdout: string; stderr: string }): void {
  assert.equal(run.stdout, "");
  const lines = run.stderr.split("\n").filter((l) => l !== "");
  assert.equal(lines.length, 1, `stderr: ${run.stderr}`);
  assert.match(lines[0], /^muxbridge: /);
}

Deno.test("muxbridge --version prints the version from deno.json", async () => {
  const iso = await isolatedEnv();
  try {
    const run = await runCli(["--version"], { env: iso.env });
    assert.deepEqual(run, { code: 0, stdout: `muxbridge ${VERSION}\n`, stderr: "" });
  } finally {
    await iso.close();
  }
});

Deno.test("muxbridge version --json reports version, protocol 1 and the runtime", async () => {
  const iso = await isolatedEnv();
  try {
    const run = await runCli(["version", "--json"], { env: iso.env });
    assert.equal(run.code, 0, run.stderr);
    const json = JSON.parse(run.stdout);
    assert.equal(json.name, "muxbridge");
    assert.equal(json.version, VERSION);
    assert.equal(json.protocol, 1);
    assert.match(json.runtime, /^(deno|bun|node) \d/);
  } finally {
    await iso.close();
  }
});

Deno.test("muxbridge --help lists every command on stdout and exits 0", async () => {
  const iso = await isolatedEnv();
  try {
    const run = await runCli(["--help"], { env: iso.env });
    assert.equal(run.code, 0);
    assert.equal(run.stderr, "");
    for (
      const cmd of [
        "bridge",
        "detect",
        "spawn",
        "close",
        "layout",
        "list",
        "cleanup",
        "doctor",
        "schema",
        "demo",
        "version",
      ]
    ) {
      assert.match(run.stdout, new RegExp(`^  ${cmd} `, "m"), cmd);
    }
  } finally {
    await iso.close();
  }
});

Deno.test("muxbridge with an unknown command or flag exits 2 with one stderr line", async () => {
  const iso = await isolatedEnv();
  try {
    for (const args of [["frobnicate"], ["version", "--bogus"]]) {
      const run = await runCli(args, { env: iso.env });
      assert.equal(run.code, 2, args.join(" "));
      assertOneLineFailure(run);
    }
  } finally {
    await iso.close();
  }
});

Deno.test("muxbridge --config with a missing file exits 3 with one stderr line", async () => {
  const iso = await isolatedEnv();
  try {
    const run = await runCli(["--config", `${iso.env.HOME}/nope.json`, "list"], { env: iso.env });
    assert.equal(run.code, 3);
    assertOneLineFailure(run);
  } finally {
    await iso.close();
  }
});

Deno.test("muxbridge schema config and schema protocol print JSON Schema", async () => {
  const iso = await isolatedEnv();
  try {
    const config = await runCli(["schema", "config"], { env: iso.env });
    assert.equal(config.code, 0, config.stderr);
    const configSchema = JSON.parse(config.stdout);
    assert.equal(configSchema.type, "object");
    assert.ok(configSchema.properties.backend, "config schema has a backend key");
    const protocol = await runCli(["schema", "protocol"], { env: iso.env });
    assert.equal(protocol.code, 0, protocol.stderr);
    assert.equal(typeof JSON.parse(protocol.stdout), "object");
  } finally {
    await iso.close();
  }
});

Deno.test("muxbridge detect --json outside any multiplexer finds nothing and exits 0", async () => {
  const iso = await isolatedEnv();
  try {
    const run = await runCli(["detect", "--json"], { env: iso.env });
    assert.equal(run.code, 0, run.stderr);
    assert.equal(JSON.parse(run.stdout).backend, null);
  } finally {
    await iso.close();
  }
});

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
