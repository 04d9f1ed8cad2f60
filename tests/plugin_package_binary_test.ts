/**
 * `plugin/src/package_binary.ts`: the plugin finds the binary of the platform package installed
 * with the npm package it came in, nested or beside it, and nowhere else.
 */

import assert from "node:assert/strict";
import {
  packageBinary,
  platformPackage,
} from "../plugin/src/package_binary.ts";

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
    "lib/node_modules/muxbridge/node_modules/muxbridge-linux-x64/package.json":
      platform,
    "lib/node_modules/muxbridge/node_modules/muxbridge-linux-x64/bin/muxbridge":
      "#!/bin/sh\n",
  });
  try {
    assert.deepEqual(
      packageBinary(
        `${base}/lib/node_modules/muxbridge/plugin`,
        "linux",
        "x64",
      ),
      {
        path:
          `${base}/lib/node_modules/muxbridge/node_modules/muxbridge-linux-x64/bin/muxbridge`,
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
