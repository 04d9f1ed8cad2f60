/**
 * muxbridge from npm, end to end, against a real registry on loopback (verdaccio,
 * `helpers/npm_registry.ts`): `deno task pack`'s tarballs are published to it, then a clean
 * HOME gets muxbridge by each documented route:
 *
 * a. `npm install -g muxbridge` (into a temporary prefix): npm installs the launcher and only
 *    this machine's platform package, and `muxbridge --version` prints the binary's version,
 *    which is deno.json's.
 *
 * The package for this machine carries the real binary (`MUXBRIDGE_TEST_BIN`, else one built
 * here with Bun); the other four platform packages carry stand-ins, which npm must never
 * install here (their `os`/`cpu` do not match). Slow (a ~54 MB tarball is published and
 * installed); every wait is bounded and on a condition.
 *
 * @module
 */

import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import denoConfig from "../deno.json" with { type: "json" };
import { binaryName, hostTarget, TARGETS } from "../scripts/build_release.ts";
import { platformPackageName } from "../scripts/pack_npm.ts";
import { type NpmRegistry, startNpmRegistry, verdaccioBin } from "./helpers/npm_registry.ts";
import { requirement, requires, tool, which } from "./helpers/requires.ts";
import { runTag } from "./helpers/run_tag.ts";

const ROOT = new URL("../", import.meta.url).pathname;
const VERSION = denoConfig.version;
const host = hostTarget();

const NEEDS = [
  requirement("a release target for this machine", host !== null, "Linux or macOS, x64/arm64"),
  requirement("verdaccio in tools/verdaccio", verdaccioBin() !== null, "run scripts/setup.sh"),
  tool("node", "install Node.js 20 or later"),
  tool("npm", "install Node.js 20 or later"),
];

/** Runs a deno script of the repository (cleared environment but PATH and HOME). */
async function deno(args: string[], env: Record<string, string> = {}) {
  const out = await new Deno.Command(Deno.execPath(), {
    args,
    cwd: ROOT,
    env: { ...runTag(), ...env },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decode = (b: Uint8Array) => new TextDecoder().decode(b);
  return { code: out.code, stdout: decode(out.stdout), stderr: decode(out.stderr) };
}

/**
 * The binary under test: `MUXBRIDGE_TEST_BIN` (the release and `test:binary` hand it in), else
 * this machine's, built with Bun into `dir` by the release script.
 */
async function hostBinary(dir: string): Promise<string> {
  const named = Deno.env.get("MUXBRIDGE_TEST_BIN");
  if (named) {
    assert.ok(existsSync(named), `MUXBRIDGE_TEST_BIN="${named}": no such file`);
    return named;
  }
  const r = await deno(["run", "--allow-all", "scripts/build_release.ts", "--host", "--out", dir]);
  assert.equal(r.code, 0, `the Bun build failed:\n${r.stderr}`);
  return `${dir}/muxbridge`;
}

/**
 * Packs the npm packages into `<out>/npm` with `scripts/pack_npm.ts`: the real binary for this
 * machine's target, a stand-in for every other.
 */
async function packAll(out: string, binary: string): Promise<string[]> {
  for (const t of TARGETS) {
    const file = `${out}/bin/${t.name}/${binaryName(t)}`;
    await Deno.mkdir(`${out}/bin/${t.name}`, { recursive: true });
    if (t.name === host!.name) await Deno.copyFile(binary, file);
    else await Deno.writeTextFile(file, `#!/bin/sh\necho "stand-in for ${t.name}"\nexit 99\n`);
    await Deno.chmod(file, 0o755);
  }
  const pluginSource = Deno.env.get("MUXBRIDGE_PACK_PLUGIN_SOURCE");
  const r = await deno(
    ["run", "--allow-all", "scripts/pack_npm.ts", "--out", out],
    pluginSource ? { MUXBRIDGE_PACK_PLUGIN_SOURCE: pluginSource } : {},
  );
  assert.equal(r.code, 0, `deno task pack failed:\n${r.stderr}`);
  console.log(`e2e_npm: packed\n${r.stdout.trimEnd()}`);
  return [...Deno.readDirSync(`${out}/npm`)].map((e) => `${out}/npm/${e.name}`).sort();
}

/** Every package folder under a node_modules, relative (scoped names included). */
function packagesIn(nodeModules: string): string[] {
  const found: string[] = [];
  const walk = (dir: string, prefix: string) => {
    let entries: Deno.DirEntry[];
    try {
      entries = [...Deno.readDirSync(dir)];
    } catch {
      return;
    }
    for (const e of entries) {
      if (e.name.startsWith(".")) continue;
      const path = `${dir}/${e.name}`;
      if (e.name.startsWith("@")) walk(path, `${e.name}/`);
      else if (existsSync(`${path}/package.json`)) {
        found.push(`${prefix}${e.name}`);
        walk(`${path}/node_modules`, `${prefix}${e.name}/node_modules/`);
      }
    }
  };
  walk(nodeModules, "");
  return found.sort();
}

Deno.test({
  name:
    "npm packages from a real registry on loopback: npm install -g muxbridge runs this machine's binary",
  ...requires("the npm end-to-end test", NEEDS),
  async fn() {
    const base = await Deno.makeTempDir({ prefix: "muxbridge-e2e-npm-" });
    let registry: NpmRegistry | undefined;
    try {
      const binary = await hostBinary(`${base}/build`);
      const version = await new Deno.Command(binary, {
        args: ["--version"],
        stdout: "piped",
        env: runTag(),
      }).output();
      const binaryVersion = new TextDecoder().decode(version.stdout).trim();
      assert.equal(binaryVersion, `muxbridge ${VERSION}`, "the binary is deno.json's version");

      const tarballs = await packAll(`${base}/dist`, binary);
      assert.deepEqual(
        tarballs.map((t) => t.split("/").pop()),
        [
          `muxbridge-${VERSION}.tgz`,
          ...TARGETS.map((t) => `${platformPackageName(t)}-${VERSION}.tgz`),
        ].sort(),
      );
      registry = await startNpmRegistry();
      const reg = registry;
      // The platform packages first, as the release does: muxbridge's optional dependencies
      // then exist when it appears.
      const main = tarballs.find((t) => t.endsWith(`/muxbridge-${VERSION}.tgz`))!;
      for (const t of tarballs.filter((t) => t !== main)) await reg.publish(t);
      await reg.publish(main);

      // ------------------------------------------------ a. npm install -g muxbridge
      const home = `${base}/a-home`;
      const prefix = `${base}/a-prefix`;
      const env = reg.npmEnv(home);
      const installed = await reg.run(
        [which("npm")!, "install", "-g", "muxbridge", "--prefix", prefix, "--ignore-scripts"],
        env,
        15 * 60_000,
      );
      assert.equal(installed.code, 0, `npm install -g muxbridge:\n${installed.stderr}`);
      const modules = `${prefix}/lib/node_modules`;
      assert.deepEqual(
        packagesIn(modules),
        ["muxbridge", `muxbridge/node_modules/${platformPackageName(host!)}`],
        "npm installs the launcher and this machine's platform package only",
      );
      const command = `${prefix}/bin/muxbridge`;
      const printed = await reg.run([command, "--version"], env, 60_000);
      assert.equal(printed.code, 0, printed.stderr);
      assert.equal(printed.stdout.trim(), binaryVersion, "`muxbridge --version` from npm");
      const unknown = await reg.run([command, "definitely-not-a-command"], env, 60_000);
      assert.equal(unknown.code, 2, "the binary's exit code comes through the launcher");
      assert.match(unknown.stderr, /unknown command "definitely-not-a-command"/);
    } finally {
      await registry?.close();
      await Deno.remove(base, { recursive: true }).catch(() => {});
    }
  },
});
