/**
 * `plugin/src/package_binary.ts`: the plugin finds the binary of the platform package installed
 * with the npm package it came in, nested or beside it, and nowhere else; the 1.x plugin,
 * loaded from the npm package's layout, runs it (when it passes the trust rule).
 */

import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { PLUGIN_V1 } from "../lib/install/plugin_source.ts";
import { createRealClock, waitFor } from "../lib/sys/clock.ts";
import { packageBinary, platformPackage } from "../plugin/src/package_binary.ts";
import { setEnvForFile } from "./helpers/env_scope.ts";
import { pluginInput } from "./helpers/load_plugin.ts";

Deno.test("platformPackage() names the package muxbridge publishes for a machine, or null", () => {
  assert.deepEqual(platformPackage("linux", "x64"), {
    name: "muxbridge-linux-x64",
    file: "muxbridge",
  });
  assert.deepEqual(
    platformPackage("darwin", "arm64")?.name,
    "muxbridge-darwin-arm64",
  );
  assert.deepEqual(platformPackage("win32", "x64"), {
    name: "muxbridge-windows-x64",
    file: "muxbridge.exe",
  });
  assert.equal(platformPackage("win32", "arm64"), null);
  assert.equal(platformPackage("freebsd", "x64"), null);
  assert.equal(platformPackage("linux", "ia32"), null);
});

/** Writes `files` (path → text) under a new temporary folder. */
async function tree(files: Record<string, string>): Promise<string> {
  const base = await Deno.makeTempDir({ prefix: "muxbridge-pkgbin-" });
  for (const [path, text] of Object.entries(files)) {
    await Deno.mkdir(`${base}/${path.split("/").slice(0, -1).join("/")}`, {
      recursive: true,
    });
    await Deno.writeTextFile(`${base}/${path}`, text, { mode: 0o755 });
  }
  return base;
}

const main = JSON.stringify({ name: "muxbridge", version: "1.0.0" });
const platform = JSON.stringify({
  name: "muxbridge-linux-x64",
  version: "1.0.0",
});

Deno.test("packageBinary() finds the platform package nested in the muxbridge package (npm -g)", async () => {
  const base = await tree({
    "lib/node_modules/muxbridge/package.json": main,
    "lib/node_modules/muxbridge/plugin/server.js": "",
    "lib/node_modules/muxbridge/node_modules/muxbridge-linux-x64/package.json": platform,
    "lib/node_modules/muxbridge/node_modules/muxbridge-linux-x64/bin/muxbridge": "#!/bin/sh\n",
  });
  try {
    assert.deepEqual(
      packageBinary(
        `${base}/lib/node_modules/muxbridge/plugin`,
        "linux",
        "x64",
      ),
      {
        path: `${base}/lib/node_modules/muxbridge/node_modules/muxbridge-linux-x64/bin/muxbridge`,
        name: "muxbridge-linux-x64",
        version: "1.0.0",
      },
    );
  } finally {
    await Deno.remove(base, { recursive: true });
  }
});

Deno.test("packageBinary() finds the platform package beside muxbridge (OpenCode's cache, Bun, pnpm)", async () => {
  const base = await tree({
    "node_modules/muxbridge/package.json": main,
    "node_modules/muxbridge-linux-x64/package.json": platform,
    "node_modules/muxbridge-linux-x64/bin/muxbridge": "#!/bin/sh\n",
  });
  try {
    assert.equal(
      packageBinary(`${base}/node_modules/muxbridge/plugin`, "linux", "x64")
        ?.path,
      `${base}/node_modules/muxbridge-linux-x64/bin/muxbridge`,
    );
    assert.equal(
      packageBinary(`${base}/node_modules/muxbridge/plugin`, "darwin", "arm64"),
      null,
    );
  } finally {
    await Deno.remove(base, { recursive: true });
  }
});

Deno.test("packageBinary() finds nothing outside the npm package, nor further up the tree", async () => {
  const base = await tree({
    // A plugin `muxbridge install` wrote: its folder's parent is OpenCode's config, not muxbridge.
    "config/opencode/package.json": JSON.stringify({ dependencies: {} }),
    "config/opencode/plugin/muxbridge.js": "",
    "config/opencode/node_modules/muxbridge-linux-x64/package.json": platform,
    "config/opencode/node_modules/muxbridge-linux-x64/bin/muxbridge": "",
    // A muxbridge package whose platform package sits two levels up: not its own.
    "up/node_modules/muxbridge-linux-x64/package.json": platform,
    "up/node_modules/muxbridge-linux-x64/bin/muxbridge": "",
    "up/node_modules/x/node_modules/muxbridge/package.json": main,
    // A folder of that name that is some other package.
    "odd/node_modules/muxbridge/package.json": main,
    "odd/node_modules/muxbridge-linux-x64/package.json": JSON.stringify({
      name: "evil",
    }),
    "odd/node_modules/muxbridge-linux-x64/bin/muxbridge": "",
  });
  try {
    assert.equal(
      packageBinary(`${base}/config/opencode/plugin`, "linux", "x64"),
      null,
    );
    assert.equal(
      packageBinary(
        `${base}/up/node_modules/x/node_modules/muxbridge/plugin`,
        "linux",
        "x64",
      ),
      null,
    );
    assert.equal(
      packageBinary(
        `${base}/odd/node_modules/muxbridge/plugin`,
        "linux",
        "x64",
      ),
      null,
    );
  } finally {
    await Deno.remove(base, { recursive: true });
  }
});

// ---------------------------------------------------------------- the plugin as OpenCode loads it

const STATE = Deno.makeTempDirSync({ prefix: "muxbridge-pkgbin-state-" });
setEnvForFile({
  MUXBRIDGE_BIN: undefined,
  MUXBRIDGE_PLUGIN_LOG: undefined,
  MUXBRIDGE_STATE_DIR: STATE,
});
globalThis.addEventListener("unload", () => Deno.removeSync(STATE, { recursive: true }));
const clock = createRealClock();
const HERE = platformPackage(
  Deno.build.os === "windows" ? "win32" : Deno.build.os,
  Deno.build.arch === "x86_64" ? "x64" : "arm64",
)!;

/**
 * The npm package as OpenCode 1.x leaves it in its cache: `node_modules/muxbridge` with the
 * 1.x plugin as `plugin/server.js`, this machine's platform package beside it with a stand-in
 * binary that records that it ran.
 */
async function installedFromNpm(): Promise<{ dir: string; plugin: string; ran: string }> {
  const binary = `node_modules/${HERE.name}/bin/${HERE.file}`;
  const dir = await tree({
    "node_modules/muxbridge/package.json": JSON.stringify({ name: "muxbridge", type: "module" }),
    "node_modules/muxbridge/plugin/server.js": PLUGIN_V1,
    [`node_modules/${HERE.name}/package.json`]: JSON.stringify({ name: HERE.name }),
    [binary]: `#!/bin/sh\necho ran >> "$0.ran"\nexec cat > /dev/null\n`,
  });
  return {
    dir,
    plugin: `${dir}/node_modules/muxbridge/plugin/server.js`,
    ran: `${dir}/${binary}.ran`,
  };
}

/** Loads the plugin file as OpenCode 1.x does and returns its log once the load settled. */
async function load(dir: string, plugin: string, instance: string): Promise<string> {
  const log = `${dir}/bridge.log`;
  const { default: { server } } = await import(plugin);
  const hooks = await server(pluginInput(dir), { log, instance });
  const read = () => {
    try {
      return Deno.readTextFileSync(log);
    } catch {
      return "";
    }
  };
  const settled = await waitFor(clock, () => /not running|starting/.test(read()), {
    deadline: clock.now() + 15_000,
    maxIntervalMs: 20,
  });
  assert.ok(settled, read());
  await hooks.dispose();
  return read();
}

Deno.test("the 1.x plugin installed from npm runs the platform package's binary, with no sidecar and no PATH", async () => {
  const { dir, plugin, ran } = await installedFromNpm();
  try {
    const log = await load(dir, plugin, "pkgbin-ok");
    const binary = `${dir}/node_modules/${HERE.name}/bin/${HERE.file}`;
    assert.match(log, new RegExp(`starting "${binary}" \\(from the ${HERE.name} package\\)`));
    await waitFor(clock, () => existsSync(ran), { deadline: clock.now() + 15_000 });
    assert.ok(existsSync(ran), "the binary ran");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the 1.x plugin installed from npm does not run a platform binary in a group-writable folder", async () => {
  const { dir, plugin, ran } = await installedFromNpm();
  try {
    await Deno.chmod(`${dir}/node_modules/${HERE.name}/bin`, 0o775);
    const log = await load(dir, plugin, "pkgbin-open");
    assert.match(
      log,
      /not running the muxbridge of the npm package ".*": .*bin is writable by its group .*MUXBRIDGE_BIN/,
    );
    assert.doesNotMatch(log, /starting/);
    assert.equal(existsSync(ran), false, "the binary never ran");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
