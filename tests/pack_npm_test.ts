/**
 * `scripts/pack_npm.ts` (`deno task pack`): the manifests (one version everywhere, npm's
 * os/cpu/libc per target, the plugin entries both OpenCode lines load), the names the launcher
 * and the plugin look for, and the whole packing path run for real with `npm pack` on
 * stand-in binaries. Publishing and installing the tarballs is `e2e_npm_test.ts`.
 */

import assert from "node:assert/strict";
import denoConfig from "../deno.json" with { type: "json" };
import { platformPackage as launcherPackage } from "../npm/muxbridge/bin/launcher.js";
import { platformPackage as pluginPackage } from "../plugin/src/package_binary.ts";
import { binaryName, hostTarget, TARGETS } from "../scripts/build_release.ts";
import {
  MAIN_EXPORTS,
  mainManifest,
  platformManifest,
  platformOf,
  platformPackageName,
} from "../scripts/pack_npm.ts";
import { requirement, requires, tool } from "./helpers/requires.ts";
import { runTag } from "./helpers/run_tag.ts";

const VERSION = denoConfig.version;
const ROOT = new URL("../", import.meta.url).pathname;
const host = hostTarget();

Deno.test("platformManifest() gives each target npm's os/cpu, glibc on Linux, and muxbridge's version", () => {
  const fields = TARGETS.map((t) => {
    const m = platformManifest(t, { version: "1.2.3" });
    return [m.name, m.version, m.os, m.cpu, m.libc];
  });
  assert.deepEqual(fields, [
    ["muxbridge-linux-x64", "1.2.3", ["linux"], ["x64"], ["glibc"]],
    ["muxbridge-linux-arm64", "1.2.3", ["linux"], ["arm64"], ["glibc"]],
    ["muxbridge-darwin-x64", "1.2.3", ["darwin"], ["x64"], undefined],
    ["muxbridge-darwin-arm64", "1.2.3", ["darwin"], ["arm64"], undefined],
    ["muxbridge-windows-x64", "1.2.3", ["win32"], ["x64"], undefined],
  ]);
  for (const t of TARGETS) {
    const m = platformManifest(t, { version: "1.2.3" });
    assert.equal(m.bin, undefined, "no command of its own: the launcher runs it");
    assert.equal(m.scripts, undefined, "no install script");
  }
});

Deno.test("the launcher, the plugin and the packer name the same package for every target", () => {
  for (const t of TARGETS) {
    const { os, cpu } = platformOf(t);
    const name = platformPackageName(t);
    assert.equal(launcherPackage(os[0], cpu[0]).name, name);
    assert.equal(launcherPackage(os[0], cpu[0]).binary, `bin/${binaryName(t)}`);
    assert.equal(pluginPackage(os[0], cpu[0])?.name, name);
    assert.equal(pluginPackage(os[0], cpu[0])?.file, binaryName(t));
  }
});

Deno.test("mainManifest(): the launcher as the bin, both lines' plugin entries, every platform package at one version", () => {
  const m = mainManifest(TARGETS, { version: "1.2.3", repo: "someone/muxbridge" });
  assert.equal(m.name, "muxbridge");
  assert.equal(m.version, "1.2.3");
  assert.deepEqual(m.bin, { muxbridge: "bin/muxbridge.js" });
  // OpenCode 1.18.33 and 2.x load ./server first; 2.x's TUI loads ./tui.
  assert.deepEqual(m.exports, MAIN_EXPORTS);
  assert.equal(MAIN_EXPORTS["./server"], MAIN_EXPORTS["."]);
  assert.equal(MAIN_EXPORTS["./tui"], "./plugin/tui.js");
  assert.deepEqual(
    m.optionalDependencies,
    Object.fromEntries(TARGETS.map((t) => [platformPackageName(t), "1.2.3"])),
  );
  assert.equal(m.dependencies, undefined, "nothing else is installed with it");
  assert.equal(m.scripts, undefined, "no install script");
  assert.deepEqual(m.repository, {
    type: "git",
    url: "git+https://github.com/someone/muxbridge.git",
  });
  assert.equal(mainManifest(TARGETS, { version: "1.2.3" }).repository, undefined);
});

/** Runs the pack script with `--out out`. */
async function pack(out: string, args: string[] = []) {
  const r = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-all", "scripts/pack_npm.ts", "--out", out, ...args],
    cwd: ROOT,
    env: runTag(),
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decode = (b: Uint8Array) => new TextDecoder().decode(b);
  return { code: r.code, stdout: decode(r.stdout), stderr: decode(r.stderr) };
}

/** Stand-in binaries for every target; this machine's prints `muxbridge <printed>`. */
async function standIns(out: string, printed: string) {
  for (const t of TARGETS) {
    await Deno.mkdir(`${out}/bin/${t.name}`, { recursive: true });
    await Deno.writeTextFile(
      `${out}/bin/${t.name}/${binaryName(t)}`,
      `#!/bin/sh\necho "muxbridge ${t.name === host?.name ? printed : "stand-in"}"\n`,
      { mode: 0o755 },
    );
  }
}

/** `tar -tvzf` of a tarball: `mode path` lines. */
async function listing(tgz: string): Promise<string[]> {
  const out = await new Deno.Command("tar", { args: ["-tvzf", tgz], stdout: "piped" }).output();
  return new TextDecoder().decode(out.stdout).trim().split("\n").map((l) => {
    const cols = l.split(/\s+/);
    return `${cols[0]} ${cols.at(-1)}`;
  }).sort();
}

const PACKING = [
  requirement("a release target for this machine", host !== null, "Linux or macOS, x64/arm64"),
  tool("npm", "install Node.js 20 or later"),
  tool("tar"),
];

Deno.test({
  name:
    "deno task pack writes one tarball per target and muxbridge's, every binary executable, every version deno.json's",
  ...requires("packing the npm packages", PACKING),
  async fn() {
    const out = await Deno.makeTempDir({ prefix: "muxbridge-pack-" });
    try {
      await standIns(out, VERSION);
      const r = await pack(out);
      assert.equal(r.code, 0, r.stderr);
      const names = [...Deno.readDirSync(`${out}/npm`)].map((e) => e.name).sort();
      assert.deepEqual(
        names,
        [
          `muxbridge-${VERSION}.tgz`,
          ...TARGETS.map((t) => `${platformPackageName(t)}-${VERSION}.tgz`),
        ]
          .sort(),
      );
      for (const t of TARGETS) {
        assert.deepEqual(
          await listing(`${out}/npm/${platformPackageName(t)}-${VERSION}.tgz`),
          [
            "-rw-r--r-- package/README.md",
            "-rw-r--r-- package/package.json",
            `-rwxr-xr-x package/bin/${binaryName(t)}`,
          ].sort(),
        );
      }
      assert.deepEqual(
        await listing(`${out}/npm/muxbridge-${VERSION}.tgz`),
        [
          "-rw-r--r-- package/README.md",
          "-rw-r--r-- package/bin/launcher.js",
          "-rw-r--r-- package/package.json",
          "-rw-r--r-- package/plugin/server.js",
          "-rw-r--r-- package/plugin/tui.js",
          "-rwxr-xr-x package/bin/muxbridge.js",
        ].sort(),
      );
      const manifest = JSON.parse(
        await Deno.readTextFile(`${out}/npm-stage/muxbridge/package.json`),
      );
      assert.deepEqual(manifest, mainManifest(TARGETS, { version: VERSION }));
      assert.match(r.stdout, /^package +download +unpacked$/m, "the size table");
    } finally {
      await Deno.remove(out, { recursive: true });
    }
  },
});

Deno.test({
  name: "deno task pack refuses a binary of another version, and missing binaries",
  ...requires("packing the npm packages", PACKING),
  async fn() {
    const out = await Deno.makeTempDir({ prefix: "muxbridge-pack-" });
    try {
      await standIns(out, "0.0.0-other");
      const other = await pack(out);
      assert.equal(other.code, 1);
      assert.match(other.stderr, /--version printed "muxbridge 0\.0\.0-other\\n", not "muxbridge /);
      await Deno.remove(`${out}/bin/darwin-arm64`, { recursive: true });
      const missing = await pack(out);
      assert.equal(missing.code, 1);
      assert.match(missing.stderr, /missing .*bin\/darwin-arm64\/muxbridge: build every target/);
      assert.equal((await pack(out, ["--repo", "not a repo"])).code, 2);
    } finally {
      await Deno.remove(out, { recursive: true });
    }
  },
});
