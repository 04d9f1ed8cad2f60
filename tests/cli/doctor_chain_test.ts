/**
 * `doctor`'s OpenCode chain on an in-memory file system and a fake runner: the plugin installed
 * (or not, or older, or someone else's), the command the plugin will run and its version, and
 * what the plugin's log says about the last OpenCode run; each failure with its fix.
 */

import { BACKENDS } from "../../backends/mod.ts";
import assert from "node:assert/strict";
import type { Check } from "../../lib/backend/backend.ts";
import { chainChecks } from "../../lib/cli/commands/_doctor_chain.ts";
import type { CliDeps } from "../../lib/cli/commands/_command.ts";
import { resolveConfig } from "../../lib/config/config.ts";
import type { OpencodeLine } from "../../lib/install/detect.ts";
import { applyPlan, planInstall } from "../../lib/install/install.ts";
import { PLUGIN_V1, PLUGIN_V2_FILES } from "../../lib/install/plugin_source.ts";
import { silentLogger } from "../../lib/sys/log.ts";
import { createFakeClock } from "../fakes/fake_clock.ts";
import { fakeEnv } from "../fakes/fake_env.ts";
import { createFakeRunner, type FakeRunner } from "../fakes/fake_runner.ts";
import { fakeProcesses } from "../fakes/memory_store.ts";
import { type MemoryFiles, memoryFiles } from "../fakes/memory_files.ts";

const HOME = "/home/me";
const BIN = "/home/me/.local/bin/muxbridge";
const PLUGIN = `${HOME}/.config/opencode/plugin/muxbridge.js`;
const LOG = `${HOME}/.local/state/muxbridge/bridge.log`;
const ENV = { HOME, PATH: "/usr/bin" };

function deps(files: MemoryFiles, runner: FakeRunner, env: Record<string, string> = ENV): CliDeps {
  return {
    env: fakeEnv(env),
    run: runner.run,
    clock: createFakeClock(),
    processes: fakeProcesses(),
    fetch: () => Promise.reject(new Error("no network in this test")),
    readText: () => null,
    stdout: () => {},
    log: silentLogger,
    cwd: "/work",
    version: "0.1.0",
    runtime: "test",
    signal: new AbortController().signal,
    bridgeIO: () => {
      throw new Error("not in doctor");
    },
    backends: BACKENDS,
    files,
  };
}

function installed(self = [BIN], lines: OpencodeLine[] = ["1.x"]): MemoryFiles {
  const files = memoryFiles();
  files.executable(BIN);
  applyPlan(
    files,
    planInstall({
      files,
      env: fakeEnv(ENV),
      self,
      version: "0.1.0",
      carried: { v1: PLUGIN_V1, v2: PLUGIN_V2_FILES },
      lines,
    }),
  );
  return files;
}

const versionAnswer = (v: string) => ({ code: 0, stdout: `{"name":"muxbridge","version":"${v}"}` });

async function run(
  files: MemoryFiles,
  runner = createFakeRunner(),
  env: Record<string, string> = ENV,
): Promise<Check[]> {
  const d = deps(files, runner, env);
  return await chainChecks(d, resolveConfig({ env: d.env, flags: {} }));
}

const byName = (checks: Check[], name: string) => checks.find((c) => c.name === name);

Deno.test("doctor chain: installed, recorded binary of this version, last run ready: all pass", async () => {
  const files = installed();
  files.files.set(LOG, {
    text: [
      "2026-12-01T10:00:00.000Z muxbridge-plugin[7] OpenCode listens on no port: forwarding http://127.0.0.1:4242/ to it in-process",
      `2026-12-01T10:00:00.001Z muxbridge-plugin[7] starting "${BIN}" (from muxbridge.json) for the forwarding endpoint in /p`,
      '2026-12-01T10:00:00.300Z muxbridge-plugin[7] bridge: {"type":"ready","protocol":1,"version":"0.1.0","backend":"tmux"}',
      "",
    ].join("\n"),
    mode: 0o600,
  });
  const checks = await run(
    files,
    createFakeRunner().on([BIN, "version", "--json"], versionAnswer("0.1.0")),
  );
  assert.deepEqual(checks.map((c) => [c.name, c.status]), [
    ["opencode plugin", "pass"],
    ["muxbridge for the plugin", "pass"],
    ["last opencode run", "pass"],
  ], JSON.stringify(checks, null, 2));
  assert.match(
    byName(checks, "last opencode run")!.detail,
    /tmux \(plain opencode, through the plugin's forwarding endpoint\)/,
  );
});

Deno.test("doctor chain: no plugin is a warning with the fix, and nothing about the binary", async () => {
  const checks = await run(memoryFiles());
  assert.equal(byName(checks, "opencode plugin")?.status, "warn");
  assert.match(byName(checks, "opencode plugin")!.hint!, /muxbridge install/);
  assert.equal(byName(checks, "muxbridge for the plugin"), undefined);
  assert.equal(byName(checks, "last opencode run")?.status, "warn");
});

Deno.test("doctor chain: an older plugin, someone else's file, a hand-made entry", async () => {
  const older = installed();
  older.files.set(PLUGIN, {
    text: PLUGIN_V1.replace("plugin 0.1.0 (", "plugin 0.0.9 ("),
    mode: 0o644,
  });
  const runner = () => createFakeRunner().on([BIN, "version", "--json"], versionAnswer("0.1.0"));
  let c = byName(await run(older, runner()), "opencode plugin")!;
  assert.equal(c.status, "fail");
  assert.match(c.detail, /muxbridge 0\.0\.9, this binary is 0\.1\.0/);
  assert.match(c.hint!, /muxbridge install/);

  const foreign = installed();
  foreign.files.set(PLUGIN, { text: "export const Mine = async () => ({});\n", mode: 0o644 });
  c = byName(await run(foreign, runner()), "opencode plugin")!;
  assert.equal(c.status, "fail");
  assert.match(c.detail, /not muxbridge's plugin/);

  const byHand = memoryFiles({
    [`${HOME}/.config/opencode/opencode.jsonc`]: '{ "plugin": ["file:///x/muxbridge.ts"], }',
  });
  c = byName(await run(byHand), "opencode plugin")!;
  assert.equal(c.status, "warn");
  assert.match(c.detail, /listed by hand/);
});

Deno.test("doctor chain: the recorded binary missing, or of another version, fails with the fix", async () => {
  const missing = installed(["/gone/muxbridge"]);
  let c = byName(await run(missing), "muxbridge for the plugin")!;
  assert.equal(c.status, "fail");
  assert.match(c.detail, /\/gone\/muxbridge is missing or not executable/);
  assert.match(c.hint!, /muxbridge install/);

  const other = installed();
  c = byName(
    await run(other, createFakeRunner().on([BIN, "version", "--json"], versionAnswer("0.2.0"))),
    "muxbridge for the plugin",
  )!;
  assert.equal(c.status, "fail");
  assert.match(c.detail, /is muxbridge 0\.2\.0, this one is 0\.1\.0/);
});

Deno.test("doctor chain: MUXBRIDGE_BIN wins over the recorded command, as in the plugin", async () => {
  const files = installed();
  files.executable("/opt/dev/muxbridge");
  const checks = await run(
    files,
    createFakeRunner().on(["/opt/dev/muxbridge", "version", "--json"], versionAnswer("0.1.0")),
    { ...ENV, MUXBRIDGE_BIN: "/opt/dev/muxbridge" },
  );
  assert.match(
    byName(checks, "muxbridge for the plugin")!.detail,
    /\/opt\/dev\/muxbridge \(from MUXBRIDGE_BIN\)/,
  );
});

Deno.test("doctor chain: a last run whose bridge could not start, or found no multiplexer, is a warning with the fix", async () => {
  const files = installed();
  files.files.set(LOG, {
    text:
      `2026-12-01T10:00:00.000Z muxbridge-plugin[7] cannot start "muxbridge" (ENOENT): install muxbridge\n`,
    mode: 0o600,
  });
  let c = byName(
    await run(files, createFakeRunner().on([BIN, "version", "--json"], versionAnswer("0.1.0"))),
    "last opencode run",
  )!;
  assert.equal(c.status, "warn");
  assert.match(c.hint!, /muxbridge install/);
  files.files.set(LOG, {
    text: [
      `2026-12-01T10:00:00.001Z muxbridge-plugin[7] starting "${BIN}" (from muxbridge.json) for http://127.0.0.1:4096/ in /p`,
      '2026-12-01T10:00:00.300Z muxbridge-plugin[7] bridge: {"type":"ready","protocol":1,"version":"0.1.0","backend":null,"reason":"none"}',
      "",
    ].join("\n"),
    mode: 0o600,
  });
  c = byName(
    await run(files, createFakeRunner().on([BIN, "version", "--json"], versionAnswer("0.1.0"))),
    "last opencode run",
  )!;
  assert.equal(c.status, "warn");
  assert.match(c.hint!, /inside tmux/);
});

Deno.test("doctor chain: children skipped for auth_unsupported point to a local pane or a provider with env, never to dropping the password", async () => {
  const files = installed();
  files.files.set(LOG, {
    text: [
      `2026-12-01T10:00:00.001Z muxbridge-plugin[7] starting "${BIN}" (from muxbridge.json) for the forwarding endpoint in /p`,
      '2026-12-01T10:00:00.300Z muxbridge-plugin[7] bridge: {"type":"ready","protocol":1,"version":"0.1.0","backend":"zellij"}',
      '2026-12-01T10:00:05.000Z muxbridge-plugin[7] bridge: {"type":"pane.skipped","sessionID":"ses_c","reason":"auth_unsupported","hint":"x"}',
      "",
    ].join("\n"),
    mode: 0o600,
  });
  const c = byName(
    await run(files, createFakeRunner().on([BIN, "version", "--json"], versionAnswer("0.1.0"))),
    "last opencode run",
  )!;
  assert.equal(c.status, "warn");
  assert.match(c.detail, /auth_unsupported/);
  assert.match(c.hint!, /local pane|provider that promises `env`/);
  assert.doesNotMatch(c.hint!, /--port|without .*password/);
});

Deno.test("doctor chain: a last run on OpenCode's own port is checked for a password, without sending one", async () => {
  const files = installed();
  files.files.set(LOG, {
    text: [
      `2026-12-01T10:00:00.001Z muxbridge-plugin[7] starting "${BIN}" (from muxbridge.json) for http://127.0.0.1:4096/ in /p`,
      '2026-12-01T10:00:00.300Z muxbridge-plugin[7] bridge: {"type":"ready","protocol":1,"version":"0.1.0","backend":"tmux"}',
      "",
    ].join("\n"),
    mode: 0o600,
  });
  const asked: Array<{ url: string; authorization: string | null }> = [];
  const serving = (status: number) => (input: string | URL | Request, init?: RequestInit) => {
    const req = new Request(input, init);
    asked.push({ url: req.url, authorization: req.headers.get("authorization") });
    return Promise.resolve(
      status === 200
        ? Response.json({ healthy: true, version: "1.18.33" })
        : new Response(null, { status }),
    );
  };
  const check = async (status: number) => {
    const d = {
      ...deps(files, createFakeRunner().on([BIN, "version", "--json"], versionAnswer("0.1.0")), {
        ...ENV,
        OPENCODE_SERVER_PASSWORD: "never-sent",
      }),
      fetch: serving(status),
    };
    const checks = await chainChecks(d, resolveConfig({ env: d.env, flags: {} }));
    return byName(checks, "last run's server password");
  };
  const open = await check(200);
  assert.equal(open?.status, "warn");
  assert.match(open!.detail, /http:\/\/127\.0\.0\.1:4096\/? answers without a password/);
  assert.match(open!.hint!, /OPENCODE_SERVER_PASSWORD/);
  assert.equal((await check(401))?.status, "pass");
  assert.ok(asked.length >= 2);
  assert.ok(asked.every((a) => a.authorization === null), "the probe carries no password");
  // Plain opencode (the forwarding endpoint) and a server that does not answer: no such check.
  files.files.set(LOG, {
    text: files.files.get(LOG)!.text.replace(
      "for http://127.0.0.1:4096/ in /p",
      "for the forwarding endpoint in /p",
    ),
    mode: 0o600,
  });
  assert.equal(await check(200), undefined);
});

Deno.test("doctor chain: only OpenCode 2.x's plugin installed: it and its recorded binary pass, no 1.x finding; a stale one fails", async () => {
  const files = installed([BIN], ["2.x"]);
  const runner = createFakeRunner().on([BIN, "version", "--json"], versionAnswer("0.1.0"));
  const checks = await run(files, runner);
  assert.equal(byName(checks, "opencode plugin"), undefined);
  assert.equal(byName(checks, "opencode 2.x plugin")?.status, "pass");
  assert.equal(byName(checks, "muxbridge for the plugin")?.status, "pass");

  const link = `${HOME}/.config/opencode/plugins/muxbridge`;
  const tui = files.read(`${link}/tui.js`)!.replace("plugin 0.1.0 (", "plugin 0.0.9 (");
  files.files.set(`${files.readLink(link)}/tui.js`, { text: tui, mode: 0o644 });
  const stale = byName(await run(files, runner), "opencode 2.x plugin");
  assert.equal(stale?.status, "fail");
  assert.match(stale!.detail, /muxbridge 0\.0\.9, this binary is 0\.1\.0/);
});

Deno.test("doctor chain: the npm package OpenCode installed itself (listed in its config) counts as installed", async () => {
  for (
    const config of [{ plugin: ["muxbridge"] }, { plugins: ["muxbridge@0.1.0"] }, {
      plugins: [{ package: "muxbridge", options: {} }],
    }]
  ) {
    const files = memoryFiles();
    files.files.set(`${HOME}/.config/opencode/opencode.json`, {
      text: JSON.stringify(config),
      mode: 0o644,
    });
    const checks = await run(files, createFakeRunner());
    const plugin = checks.find((c) => c.name === "opencode plugin")!;
    assert.equal(plugin.status, "pass", JSON.stringify(config));
    assert.match(plugin.detail, /npm package muxbridge/);
    // The 2.x service is looked for (none runs here: a warning that says how to start one).
    assert.ok(checks.some((c) => c.name === "opencode 2.x service"), JSON.stringify(checks));
  }
  // Another package whose name starts the same is not muxbridge.
  const files = memoryFiles();
  files.files.set(`${HOME}/.config/opencode/opencode.json`, {
    text: JSON.stringify({ plugin: ["muxbridge-x"] }),
    mode: 0o644,
  });
  const other = (await run(files, createFakeRunner())).find((c) => c.name === "opencode plugin")!;
  assert.equal(other.status, "warn");
});
