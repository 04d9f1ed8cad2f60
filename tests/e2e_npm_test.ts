/**
 * muxbridge from npm, end to end, against a real registry on loopback (verdaccio,
 * `helpers/npm_registry.ts`): `deno task pack`'s tarballs are published to it, then a clean
 * HOME gets muxbridge by each documented route:
 *
 * a. `npm install -g muxbridge` (into a temporary prefix): npm installs the launcher and only
 *    this machine's platform package, and `muxbridge --version` prints the binary's version,
 *    which is deno.json's; the binary's exit code comes through the launcher. `npx muxbridge
 *    install` and `bunx muxbridge install` record a private copy of the binary (never the
 *    package manager's cache), which runs, and `uninstall` removes it.
 * b. OpenCode 1.18.33 with `"plugin": ["muxbridge"]` in its config (put there by 1.x's own
 *    `opencode plugin muxbridge --global`) and `NPM_CONFIG_REGISTRY` in its environment:
 *    OpenCode installs the package itself, the plugin runs the platform
 *    package's binary (no `muxbridge install`, nothing on PATH), and a child gets a pane that
 *    shows its text through the real TUI, closed after the child's turn.
 * c. OpenCode 2.1.2 with `opencode plugin add muxbridge`: the service lists the package as one
 *    active plugin with a TUI part, the TUI entry runs the platform package's binary, and a
 *    child gets a pane through the real 2.x TUI, closed after the child's turn.
 *
 * The package for this machine carries the real binary (`MUXBRIDGE_TEST_BIN`, else one built
 * here with Bun); the other four platform packages carry stand-ins, which must never be
 * installed here (their `os`/`cpu` do not match). Slow (a ~54 MB tarball is published and
 * installed three times); every wait is bounded and on a condition.
 *
 * @module
 */

import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import denoConfig from "../deno.json" with { type: "json" };
import { binaryName, hostTarget, TARGETS } from "../scripts/build_release.ts";
import { shellCommand } from "../lib/sys/shell_quote.ts";
import { muxbridgeArgv } from "./helpers/bridge_process.ts";
import { platformPackageName } from "../scripts/pack_npm.ts";
import { type NpmRegistry, startNpmRegistry, verdaccioBin } from "./helpers/npm_registry.ts";
import { opencode2Bin } from "./helpers/opencode2_home.ts";
import { CHILD2_MARKER, openTui2Box } from "./helpers/opencode2_tui.ts";
import { opencodeBin } from "./helpers/opencode_server.ts";
import { CHILD_MARKER, openTuiBox, type PaneInfo, waitUntil } from "./helpers/opencode_tui.ts";
import { requirement, requires, tool, which } from "./helpers/requires.ts";
import { runTag } from "./helpers/run_tag.ts";
import type { TmuxServer } from "./helpers/tmux_server.ts";

const ROOT = new URL("../", import.meta.url).pathname;
const VERSION = denoConfig.version;
const host = hostTarget();

const NEEDS = [
  requirement("a release target for this machine", host !== null, "Linux or macOS, x64/arm64"),
  requirement("verdaccio in tools/verdaccio", verdaccioBin() !== null, "run scripts/setup.sh"),
  tool("node", "install Node.js 20 or later"),
  tool("npm", "install Node.js 20 or later"),
];
const V1 = requires("OpenCode 1.x installing muxbridge from npm", [
  ...NEEDS,
  requirement("OpenCode 1.x", opencodeBin() !== null, "npm install (opencode-ai)"),
  tool("tmux"),
]);
const V2 = requires("OpenCode 2.x installing muxbridge from npm", [
  ...NEEDS,
  requirement("OpenCode 2.x", opencode2Bin() !== null, "run scripts/setup.sh (tools/opencode2)"),
  tool("tmux"),
]);

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
 * The binary under test: `MUXBRIDGE_TEST_BIN` (the Bun build `test:binary` and the release hand
 * in: the real binary, packed as it ships), else the source under test, as every other test runs
 * it: a one-line program that runs `deno run main.ts` (`muxbridgeArgv`), so the routes are checked
 * without a minutes-long build in every run of `deno task test`.
 */
async function hostBinary(dir: string): Promise<string> {
  const named = Deno.env.get("MUXBRIDGE_TEST_BIN");
  if (named) {
    assert.ok(existsSync(named), `MUXBRIDGE_TEST_BIN="${named}": no such file`);
    return named;
  }
  await Deno.mkdir(dir, { recursive: true });
  const path = `${dir}/muxbridge`;
  await Deno.writeTextFile(path, `#!/bin/sh\nexec ${shellCommand(muxbridgeArgv())} "$@"\n`);
  await Deno.chmod(path, 0o755);
  return path;
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
  const r = await deno(["run", "--allow-all", "scripts/pack_npm.ts", "--out", out]);
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

/** A file's text, or "" when it cannot be read. */
function read(path: string): string {
  try {
    return Deno.readTextFileSync(path);
  } catch {
    return "";
  }
}

/** The protocol lines the plugin logged from its bridge, in order. */
function bridgeSaid(log: string): Array<Record<string, unknown>> {
  return read(log).split("\n").flatMap((l) => {
    const i = l.indexOf("] bridge: {");
    return i < 0 ? [] : [JSON.parse(l.slice(i + "] bridge: ".length))];
  });
}

/**
 * Points what the private tmux starts (OpenCode and its panes) at the registry through npm's
 * own variable, as a user with a private registry would: the test homes point npm at a dead
 * port and offline, which is taken back here.
 */
async function pointAtRegistry(tmux: TmuxServer, url: string): Promise<void> {
  await tmux.tmux(["set-environment", "-g", "-u", "npm_config_registry"]);
  await tmux.tmux(["set-environment", "-g", "-u", "npm_config_offline"]);
  await tmux.tmux(["set-environment", "-g", "NPM_CONFIG_REGISTRY", url]);
}

/** A home's environment for a command, with npm pointed at the registry the same way. */
function withRegistry(env: Record<string, string>, url: string): Record<string, string> {
  const { npm_config_registry: _r, npm_config_offline: _o, ...rest } = env;
  return { ...rest, NPM_CONFIG_REGISTRY: url, ...runTag() };
}

/** The line the plugin logs when it starts the platform package's binary. */
function startedFromPackage(log: string, modules: string): boolean {
  const binary = `${modules}/${platformPackageName(host!)}/bin/muxbridge`;
  return read(log).includes(
    `starting ${JSON.stringify(binary)} (from the ${platformPackageName(host!)} package)`,
  );
}

/**
 * b. OpenCode 1.18.33 with `"plugin": ["muxbridge"]`: OpenCode installs muxbridge from the
 * registry by itself, the plugin runs the platform package's binary, and a child gets a pane
 * through the real TUI.
 */
async function viaOpencode1(reg: NpmRegistry): Promise<void> {
  const box = await openTuiBox();
  let tui: Awaited<ReturnType<typeof box.start>> | undefined;
  const attachPanes = async (): Promise<PaneInfo[]> =>
    (await box.panes()).filter((p) => / attach /.test(` ${p.startCommand} `));
  const context = async () =>
    `plugin log:\n${read(box.log).slice(-4000)}\nTUI:\n${(await tui?.screen()) ?? ""}\n` +
    `panes: ${JSON.stringify(await box.panes().catch(() => []))}`;
  try {
    // 1.x's own command puts "muxbridge" in the global config's plugin list (and in tui.json,
    // for the package's ./tui export, which 1.x's TUI must then take in its stride).
    const added = await reg.run(
      [opencodeBin()!, "plugin", "muxbridge", "--global"],
      withRegistry(box.env, reg.url),
      10 * 60_000,
      box.project,
    );
    assert.equal(
      added.code,
      0,
      `opencode plugin muxbridge --global:\n${added.stdout}${added.stderr}`,
    );
    const listed = ["opencode.json", "opencode.jsonc"].map((f) => read(`${box.configDir}/${f}`))
      .join("\n");
    assert.match(listed, /"plugin": \[\s*"muxbridge"\s*\]/, listed);
    await pointAtRegistry(box.tmux, reg.url);
    tui = await box.start();
    const t = tui;
    const modules = `${box.env.XDG_CACHE_HOME}/opencode/packages/muxbridge@latest/node_modules`;
    // OpenCode installs the package (a ~54 MB tarball) before it loads the plugin.
    await waitUntil(
      "the plugin from npm to start its bridge",
      () => bridgeSaid(box.log).some((m) => m.type === "ready"),
      10 * 60_000,
      context,
    );
    assert.deepEqual(packagesIn(modules), ["muxbridge", platformPackageName(host!)]);
    assert.ok(startedFromPackage(box.log, modules), await context());
    box.mock.hold(); // the child stays busy until its text is seen in its pane
    await t.promptTask();
    let pane: PaneInfo | undefined;
    await waitUntil(
      "the child's pane",
      async () => (pane = (await attachPanes())[0]) !== undefined,
      120_000,
      context,
    );
    await waitUntil(
      "the child's text in its pane",
      async () => (await box.capture(pane!.id).catch(() => "")).includes(CHILD_MARKER),
      120_000,
      context,
    );
    box.mock.release();
    await waitUntil(
      "the pane to close after the child's turn",
      async () => (await attachPanes()).length === 0,
      120_000,
      context,
    );
  } finally {
    box.mock.release();
    await tui?.stop();
    await box.close();
  }
}

/**
 * c. OpenCode 2.1.2 with `opencode plugin add muxbridge`: 2.x installs muxbridge from the
 * registry, its TUI loads the package's `./tui` entry, which runs the platform package's
 * binary, and a child gets a pane through the real 2.x TUI.
 */
async function viaOpencode2(reg: NpmRegistry): Promise<void> {
  const box = await openTui2Box();
  let tui: Awaited<ReturnType<typeof box.start>> | undefined;
  const log = `${box.home.env.XDG_STATE_HOME}/muxbridge/bridge.log`;
  const childPanes = async () =>
    (await box.panes()).filter((p) => / --session /.test(` ${p.startCommand} `));
  const context = async () =>
    `plugin log:\n${read(log).slice(-4000)}\nTUI:\n${(await tui?.screen()) ?? ""}\n` +
    `panes: ${JSON.stringify(await box.panes().catch(() => []))}`;
  try {
    const added = await reg.run(
      [box.home.bin, "plugin", "add", "muxbridge"],
      withRegistry(box.home.env, reg.url),
      10 * 60_000,
      box.home.project,
    );
    assert.equal(added.code, 0, `opencode plugin add muxbridge:\n${added.stdout}${added.stderr}`);
    const config = JSON.parse(await Deno.readTextFile(`${box.home.configDir}/opencode.json`));
    assert.deepEqual(config.plugins, ["muxbridge"]);
    await pointAtRegistry(box.tmux, reg.url);
    tui = await box.start();
    const t = tui;
    await waitUntil(
      "the TUI entry from npm to start its bridge",
      () => bridgeSaid(log).some((m) => m.type === "ready"),
      5 * 60_000,
      context,
    );
    // `plugin add` installed into a folder of its own under OpenCode's cache.
    const installs = `${box.home.env.XDG_CACHE_HOME}/opencode/npm/muxbridge@latest`;
    const [stamp] = [...Deno.readDirSync(installs)].map((e) => e.name);
    const modules = `${installs}/${stamp}/node_modules`;
    assert.deepEqual(packagesIn(modules), ["muxbridge", platformPackageName(host!)]);
    assert.ok(startedFromPackage(log, modules), await context());
    // The service took the package's ./server entry (the 1.x file, whose setup does nothing in
    // 2.x) and the TUI its ./tui entry: one plugin, active, with a TUI part. The service loads
    // its plugins on its own clock, not the TUI's: on a busy machine the TUI's bridge can be up
    // before the service lists the plugin, so this waits for the list to settle.
    const ours = async () => (await box.service.plugins()).map((p) => [p.status, p.tui]);
    let listed: unknown[][] = [];
    await waitUntil(
      "the service to list the plugin from npm, loaded or failed",
      async () =>
        (listed = await ours()).length > 0 &&
        listed.every(([status]) => status === "active" || status === "failed"),
      90_000,
      async () => `${JSON.stringify(listed)}\n${await context()}`,
    );
    assert.deepEqual(listed, [["active", true]]);
    box.mock.hold();
    await t.promptTask();
    let pane: { id: string } | undefined;
    await waitUntil(
      "the child's pane",
      async () => (pane = (await childPanes())[0]) !== undefined,
      180_000,
      context,
    );
    await waitUntil(
      "the child's text in its pane",
      async () => (await box.capture(pane!.id).catch(() => "")).includes(CHILD2_MARKER),
      180_000,
      context,
    );
    box.mock.release();
    await waitUntil(
      "the pane to close after the child's turn",
      async () => (await childPanes()).length === 0,
      180_000,
      context,
    );
  } finally {
    box.mock.release();
    await tui?.stop();
    await box.close();
  }
}

Deno.test({
  name:
    "muxbridge from a real npm registry on loopback: npm install -g, npx and bunx install, OpenCode 1.x's and 2.x's plugin commands",
  ...requires("the npm end-to-end test", NEEDS),
  async fn(t) {
    const base = await Deno.makeTempDir({ prefix: "muxbridge-e2e-npm-" });
    let registry: NpmRegistry | undefined;
    const compiled = Deno.env.get("MUXBRIDGE_TEST_BIN") !== undefined;
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

      await t.step("a. npm install -g muxbridge: muxbridge --version is the binary's", async () => {
        const home = `${base}/a-home`;
        const prefix = `${base}/a-prefix`;
        const env = reg.npmEnv(home);
        const installed = await reg.run(
          [which("npm")!, "install", "-g", "muxbridge", "--prefix", prefix, "--ignore-scripts"],
          env,
          15 * 60_000,
        );
        assert.equal(installed.code, 0, `npm install -g muxbridge:\n${installed.stderr}`);
        assert.deepEqual(
          packagesIn(`${prefix}/lib/node_modules`),
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
      });

      await t.step({
        // The private copy is of the compiled binary: from source (a one-line program running
        // `deno run main.ts`) there is no binary to copy. `deno task test:binary` (CI runs it
        // after `deno task test`) runs this file with the real binary, and this step with it.
        name:
          "a2. npx muxbridge install and bunx muxbridge install record a private copy, not the cache" +
          (compiled ? "" : " (compiled binary only: runs in deno task test:binary)"),
        ignore: !compiled,
        fn: async () => {
          const bun = `${ROOT}node_modules/.bin/bun`;
          for (
            const [name, argv] of [
              ["npx", [which("npx")!, "--yes", "muxbridge", "install", "--json"]],
              ["bunx", [bun, "x", "muxbridge", "install", "--json"]],
            ] as const
          ) {
            const home = `${base}/${name}-home`;
            const env = { ...reg.npmEnv(home), BUN_CONFIG_REGISTRY: reg.url };
            const r = await reg.run([...argv], env, 15 * 60_000, home);
            assert.equal(r.code, 0, `${name} muxbridge install:\n${r.stdout}${r.stderr}`);
            const copy = `${home}/.local/share/muxbridge/bin/muxbridge`;
            const sidecars = [
              `${home}/.config/opencode/plugin/muxbridge.json`,
              `${home}/.config/opencode/plugins/muxbridge/muxbridge.json`,
            ];
            for (const sidecar of sidecars) {
              const recorded = JSON.parse(await Deno.readTextFile(sidecar));
              assert.deepEqual(recorded.command, [copy], `${name}: ${sidecar}`);
            }
            const printed = await reg.run([copy, "--version"], env, 60_000);
            assert.equal(printed.stdout.trim(), binaryVersion, `${name}: the copy runs`);
            assert.equal((await Deno.stat(`${home}/.local/share/muxbridge`)).mode! & 0o777, 0o700);
            const removed = await reg.run([copy, "uninstall", "--json"], env, 60_000, home);
            assert.equal(removed.code, 0, removed.stderr);
            assert.equal(existsSync(copy), false, `${name}: uninstall removes the copy`);
          }
        },
      });

      await t.step({
        name: "b. OpenCode 1.18.33 with opencode plugin muxbridge --global: a child gets a pane",
        ...V1,
        fn: () => viaOpencode1(reg),
      });

      await t.step({
        name: "c. OpenCode 2.1.2 with opencode plugin add muxbridge: a child gets a pane",
        ...V2,
        fn: () => viaOpencode2(reg),
      });
    } finally {
      await registry?.close();
      await Deno.remove(base, { recursive: true }).catch(() => {});
    }
  },
});
