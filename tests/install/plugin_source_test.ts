/**
 * The plugins the binary carries are what `scripts/gen_plugin_source.ts` bundles from `plugin/`
 * today (the pinned Bun makes the same bytes every time), they name muxbridge's version, and
 * they import nothing but `node:` modules (OpenCode's Bun resolves npm imports from the
 * plugin's folder, where there are none).
 */

import assert from "node:assert/strict";
import denoConfig from "../../deno.json" with { type: "json" };
import { pluginVersion } from "../../lib/install/plugin_files.ts";
import { PLUGIN_V1, PLUGIN_V2_FILES } from "../../lib/install/plugin_source.ts";
import { PLUGIN_VERSION } from "../../plugin/src/values.ts";

Deno.test("lib/install/plugin_source.ts is what scripts/gen_plugin_source.ts makes of plugin/ (run it)", async () => {
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      new URL("../../scripts/gen_plugin_source.ts", import.meta.url).pathname,
      "--check",
    ],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
});

Deno.test("every carried plugin file names deno.json's version, as the plugin's PLUGIN_VERSION does", () => {
  assert.equal(PLUGIN_VERSION, denoConfig.version);
  assert.equal(pluginVersion(PLUGIN_V1), denoConfig.version);
  assert.equal(pluginVersion(PLUGIN_V2_FILES["server.js"]), denoConfig.version);
  assert.equal(pluginVersion(PLUGIN_V2_FILES["tui.js"]), denoConfig.version);
  assert.equal(JSON.parse(PLUGIN_V2_FILES["package.json"]).version, denoConfig.version);
});

Deno.test("the carried plugins import only node: modules and export only their default", () => {
  for (const [name, text] of [["muxbridge.js", PLUGIN_V1], ...Object.entries(PLUGIN_V2_FILES)]) {
    if (name.endsWith(".json")) continue;
    const from = [...text.matchAll(/\bfrom\s+"([^"]+)"/g)].map((m) => m[1]);
    assert.deepEqual(from.filter((m) => !m.startsWith("node:")), [], name);
    assert.doesNotMatch(text, /\bimport\s*\(/, `${name}: no dynamic import`);
    const exported = [...text.matchAll(/^export\s*\{([^}]*)\}/gm)].map((m) => m[1].trim());
    assert.deepEqual(exported, [/^\w+ as default$/.exec(exported[0] ?? "")?.[0]], name);
  }
});
