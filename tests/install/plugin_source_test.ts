/**
 * The plugin the binary carries is the plugin in the repository, byte for byte, and its
 * version is muxbridge's.
 */

import assert from "node:assert/strict";
import denoConfig from "../../deno.json" with { type: "json" };
import { pluginVersion } from "../../lib/install/install.ts";
import { PLUGIN_SOURCE } from "../../lib/install/plugin_source.ts";

Deno.test("PLUGIN_SOURCE is plugin/muxbridge.ts byte for byte (run scripts/gen_plugin_source.ts)", async () => {
  const file = await Deno.readTextFile(new URL("../../plugin/muxbridge.ts", import.meta.url));
  assert.ok(
    PLUGIN_SOURCE === file,
    "lib/install/plugin_source.ts is stale: run `deno run -A scripts/gen_plugin_source.ts`",
  );
});

Deno.test("the plugin's PLUGIN_VERSION is deno.json's version", () => {
  assert.equal(pluginVersion(PLUGIN_SOURCE), denoConfig.version);
});
