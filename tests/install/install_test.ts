/**
 * install and uninstall plans for OpenCode 1.x on an in-memory file system: where the plugin
 * goes, what is recorded beside it, idempotence, an older plugin replaced (muxbridge 0.1's
 * `muxbridge.ts` included), an older config entry removed byte-preservingly, bad configs,
 * unwritable folders, and uninstall removing exactly what install wrote. The 2.x folder and both
 * lines together: `install_v2_test.ts`.
 */

import assert from "node:assert/strict";
import { isMuxError } from "../../lib/sys/errors.ts";
import {
  applyPlan,
  type InstallDeps,
  planInstall,
  planUninstall,
  readSidecar,
} from "../../lib/install/install.ts";
import { PLUGIN_V1, PLUGIN_V2_FILES } from "../../lib/install/plugin_source.ts";
import { fakeEnv } from "../fakes/fake_env.ts";
import { type MemoryFiles, memoryFiles } from "../fakes/memory_files.ts";

const HOME = "/home/me";
const CONFIG = `${HOME}/.config/opencode`;
const PLUGIN = `${CONFIG}/plugin/muxbridge.js`;
const SIDECAR = `${CONFIG}/plugin/muxbridge.json`;
const SELF = ["/home/me/.local/bin/muxbridge"];
/** What OpenCode writes into its config folder on first run (the silent-skip trap). */
const OPENCODE_PACKAGE = '{"dependencies":{"@opencode-ai/plugin":"1.18.33"}}';

function deps(files: MemoryFiles, env: Record<string, string> = { HOME }): InstallDeps {
  return {
    files,
    env: fakeEnv(env),
    self: SELF,
    version: "0.1.0",
    carried: { v1: PLUGIN_V1, v2: PLUGIN_V2_FILES },
    lines: ["1.x"],
  };
}

function install(files: MemoryFiles, env?: Record<string, string>) {
  const plan = planInstall(deps(files, env));
  applyPlan(files, plan);
  return plan;
}

function snapshot(files: MemoryFiles): Record<string, string> {
  return Object.fromEntries([...files.files].map(([p, f]) => [p, f.text]));
}

Deno.test("planInstall() writes the carried plugin and the recorded command into the global plugin folder, creating it", () => {
  const files = memoryFiles();
  const plan = install(files);
  assert.equal(files.read(PLUGIN), PLUGIN_V1);
  assert.deepEqual(readSidecar(files.read(SIDECAR)), {
    command: SELF,
    version: "0.1.0",
    createdDir: true,
  });
  assert.deepEqual(plan.changed.map((c) => `${c.action} ${c.path}`), [
    `write ${SIDECAR}`,
    `write ${PLUGIN}`,
  ]);
  assert.ok(files.dirs.has(`${CONFIG}/plugin`));
});

Deno.test("planInstall() a second time changes nothing", () => {
  const files = memoryFiles();
  install(files);
  const writes = files.writes.length;
  const again = install(files);
  assert.deepEqual(again.steps, []);
  assert.deepEqual(again.changed, []);
  assert.deepEqual(again.unchanged.map((c) => c.path), [SIDECAR, PLUGIN]);
  assert.equal(files.writes.length, writes);
});

Deno.test("planInstall() leaves OpenCode's own package.json and a user's config alone", () => {
  const config = '{\n  // mine\n  "model": "x/y",\n}\n';
  const files = memoryFiles({
    [`${CONFIG}/package.json`]: OPENCODE_PACKAGE,
    [`${CONFIG}/opencode.jsonc`]: config,
  });
  install(files);
  assert.equal(files.read(`${CONFIG}/package.json`), OPENCODE_PACKAGE);
  assert.equal(files.read(`${CONFIG}/opencode.jsonc`), config);
  assert.equal(files.read(PLUGIN), PLUGIN_V1);
});

Deno.test("planInstall() honours OPENCODE_CONFIG_DIR, then XDG_CONFIG_HOME, then HOME", () => {
  for (
    const [env, dir] of [
      [{ HOME, XDG_CONFIG_HOME: "/x", OPENCODE_CONFIG_DIR: "/oc" }, "/oc"],
      [{ HOME, XDG_CONFIG_HOME: "/x" }, "/x/opencode"],
      [{ HOME }, CONFIG],
    ] as const
  ) {
    const files = memoryFiles();
    install(files, { ...env });
    assert.equal(files.read(`${dir}/plugin/muxbridge.js`), PLUGIN_V1, JSON.stringify(env));
  }
});

Deno.test("planInstall() into OPENCODE_CONFIG_DIR removes an older muxbridge from the global folder (OpenCode loads both)", () => {
  const older = PLUGIN_V1.replace("plugin 0.1.0 (", "plugin 0.0.9 (");
  const files = memoryFiles({
    [PLUGIN]: older,
    [SIDECAR]: JSON.stringify({ command: ["/old/muxbridge"], version: "0.0.9" }),
    [`${CONFIG}/plugin/other.ts`]: "export const X = async () => ({});\n",
  });
  const plan = install(files, { HOME, OPENCODE_CONFIG_DIR: "/oc" });
  assert.equal(files.read("/oc/plugin/muxbridge.js"), PLUGIN_V1);
  assert.equal(files.read(PLUGIN), null);
  assert.equal(files.read(SIDECAR), null);
  assert.ok(files.read(`${CONFIG}/plugin/other.ts`), "another plugin stays");
  assert.deepEqual(
    plan.changed.filter((c) => c.action === "remove").map((c) => c.path),
    [PLUGIN, SIDECAR],
  );
});

Deno.test("planInstall() without HOME, XDG_CONFIG_HOME or OPENCODE_CONFIG_DIR is invalid_config (exit 3)", () => {
  assert.throws(() => planInstall(deps(memoryFiles(), {})), (e) => isMuxError(e, "invalid_config"));
});

Deno.test("planInstall() replaces an older muxbridge plugin instead of adding a second one", () => {
  const older = PLUGIN_V1.replace("plugin 0.1.0 (", "plugin 0.0.9 (");
  assert.notEqual(older, PLUGIN_V1);
  const files = memoryFiles({ [PLUGIN]: older, [`${CONFIG}/plugins/muxbridge.ts`]: older });
  const plan = install(files);
  assert.equal(files.read(PLUGIN), PLUGIN_V1);
  assert.equal(files.read(`${CONFIG}/plugins/muxbridge.ts`), null, "the plugins/ copy is gone");
  const replaced = plan.changed.find((c) => c.path === PLUGIN);
  assert.equal(replaced?.action, "replace");
  assert.match(replaced!.what, /0\.0\.9 → 0\.1\.0/);
});

Deno.test("planInstall() replaces muxbridge 0.1's plugin/muxbridge.ts with plugin/muxbridge.js", () => {
  const legacy = `${CONFIG}/plugin/muxbridge.ts`;
  const old = '/** The muxbridge OpenCode plugin */\nconst PLUGIN_VERSION = "0.1.0";\n' +
    "export const MuxbridgePlugin = () => ({});\n";
  const files = memoryFiles({
    [legacy]: old,
    [SIDECAR]: JSON.stringify({ command: SELF, version: "0.1.0" }),
  });
  const plan = install(files);
  assert.equal(files.read(legacy), null);
  assert.equal(files.read(PLUGIN), PLUGIN_V1);
  assert.deepEqual(plan.changed.map((c) => `${c.action} ${c.path}`), [
    `replace ${SIDECAR}`,
    `write ${PLUGIN}`,
    `remove ${legacy}`,
  ]);
});

Deno.test("planInstall() removes an older muxbridge entry from opencode.jsonc and keeps every other byte", () => {
  const before = [
    "{",
    '  "$schema": "https://opencode.ai/config.json", // the schema',
    "  /* plugins, in order */",
    '  "plugin": [',
    '    "opencode-wakatime",',
    '    ["file:///home/me/.config/muxbridge/plugin/muxbridge.ts", { "bin": "/opt/muxbridge" }],',
    '    "./local/other.ts", // keep',
    "  ],",
    '  "model": "x/y",',
    "}",
    "",
  ].join("\n");
  const after = before.replace(
    '    ["file:///home/me/.config/muxbridge/plugin/muxbridge.ts", { "bin": "/opt/muxbridge" }],\n',
    "    \n",
  );
  const files = memoryFiles({ [`${CONFIG}/opencode.jsonc`]: before });
  const plan = install(files);
  assert.equal(files.read(`${CONFIG}/opencode.jsonc`), after);
  assert.equal(plan.changed.find((c) => c.action === "edit")?.path, `${CONFIG}/opencode.jsonc`);
  // A second install leaves the edited file as it is.
  const writes = files.writes.length;
  assert.deepEqual(install(files).changed, []);
  assert.equal(files.writes.length, writes);
});

Deno.test("planInstall() removes the only and the last muxbridge entries of opencode.json", () => {
  const only = '{"plugin": ["/abs/muxbridge.ts"], "model": "x/y"}';
  const last = '{"plugin": ["a", "file:///p/muxbridge.ts"]}';
  const files = memoryFiles({ [`${CONFIG}/opencode.json`]: only, [`${CONFIG}/config.json`]: last });
  install(files);
  assert.equal(files.read(`${CONFIG}/opencode.json`), '{"plugin": [], "model": "x/y"}');
  assert.equal(files.read(`${CONFIG}/config.json`), '{"plugin": ["a"]}');
  assert.deepEqual(JSON.parse(files.read(`${CONFIG}/opencode.json`)!), {
    plugin: [],
    model: "x/y",
  });
});

Deno.test("planInstall() refuses a config that is not valid JSON/JSONC and writes nothing", () => {
  for (const bad of ['{"plugin": [', "{ model: x }", '{"a": 1} trailing', "/* open"]) {
    const files = memoryFiles({ [`${CONFIG}/opencode.json`]: bad });
    assert.throws(
      () => install(files),
      (e) =>
        isMuxError(e, "invalid_config") && /opencode\.json.*line \d+, column \d+/.test(e.message),
      bad,
    );
    assert.deepEqual(files.writes, [], bad);
    assert.equal(files.read(PLUGIN), null);
  }
});

Deno.test("planInstall() into an unwritable config folder fails with write_failed and leaves no file behind", () => {
  const files = memoryFiles({ [`${CONFIG}/opencode.json`]: "{}" });
  files.readOnly.add(CONFIG);
  assert.throws(() => install(files), (e) => isMuxError(e, "write_failed"));
  assert.equal(files.read(PLUGIN), null);
  assert.equal(files.read(SIDECAR), null);
  assert.equal(files.read(`${CONFIG}/opencode.json`), "{}");
});

Deno.test("planInstall() refuses to overwrite a muxbridge.js that is not muxbridge's (not_owned)", () => {
  const files = memoryFiles({ [PLUGIN]: "export const Mine = async () => ({});\n" });
  assert.throws(() => install(files), (e) => isMuxError(e, "not_owned"));
  assert.equal(files.read(PLUGIN), "export const Mine = async () => ({});\n");
});

Deno.test("planUninstall() removes exactly what install wrote, folder included when install created it", () => {
  const initial = {
    [`${CONFIG}/package.json`]: OPENCODE_PACKAGE,
    [`${CONFIG}/opencode.json`]: '{ "model": "x/y" }',
  };
  const files = memoryFiles(initial);
  const dirsBefore = new Set(files.dirs);
  install(files);
  const plan = planUninstall({ files, env: fakeEnv({ HOME }) });
  applyPlan(files, plan);
  assert.deepEqual(snapshot(files), initial);
  assert.deepEqual(files.dirs, dirsBefore);
  // Again: nothing to do.
  assert.deepEqual(planUninstall({ files, env: fakeEnv({ HOME }) }).steps, []);
});

Deno.test("planUninstall() keeps a plugin folder it did not create, other plugins, and hand-written entries", () => {
  const other = `${CONFIG}/plugin/other.ts`;
  const config = '{"plugin": ["file:///somewhere/muxbridge.ts"]}';
  const files = memoryFiles({ [other]: "export const X = async () => ({});\n" });
  install(files);
  files.files.set(`${CONFIG}/opencode.json`, { text: config, mode: 0o644 });
  const plan = planUninstall({ files, env: fakeEnv({ HOME }) });
  applyPlan(files, plan);
  assert.equal(files.read(PLUGIN), null);
  assert.equal(files.read(SIDECAR), null);
  assert.ok(files.read(other));
  assert.ok(files.dirs.has(`${CONFIG}/plugin`));
  assert.equal(files.read(`${CONFIG}/opencode.json`), config);
  assert.match(plan.unchanged.find((c) => c.path.endsWith("opencode.json"))!.what, /left alone/);
});

Deno.test("planUninstall() leaves a muxbridge.js that is not muxbridge's", () => {
  const files = memoryFiles({ [PLUGIN]: "// mine\n" });
  const plan = planUninstall({ files, env: fakeEnv({ HOME }) });
  applyPlan(files, plan);
  assert.equal(files.read(PLUGIN), "// mine\n");
  assert.deepEqual(plan.changed, []);
});
