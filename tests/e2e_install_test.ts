/**
 * `muxbridge install` / `uninstall` as a black box (the compiled binary under
 * `deno task test:binary`): real files in a temporary config folder; stdout, stderr and exit
 * codes asserted apart. Which OpenCode lines it installs for follows the `opencode --version`
 * of fake binaries on PATH (1.x, 2.x, both, none); the recorded command runs muxbridge from
 * another directory; the plugins written are the carried ones byte for byte; uninstall removes
 * everything for both lines; the bad inputs get their exit codes. (The TUI end to end, with plain
 * `opencode`, is `e2e_tui_test.ts`; the 2.x folder loaded by a real OpenCode 2.x,
 * `e2e_install_v2_test.ts`.)
 */

import assert from "node:assert/strict";
import { type CliRun, runCli } from "./helpers/cli_process.ts";
import { runTag } from "./helpers/run_tag.ts";
import { PLUGIN_V1, PLUGIN_V2_FILES } from "../lib/install/plugin_source.ts";

const PLUGIN = PLUGIN_V1;

interface Rig {
  base: string;
  config: string;
  env: Record<string, string>;
  /** A folder on the rig's PATH, ahead of the system's. */
  bin: string;
  cli(args: string[], env?: Record<string, string>): Promise<CliRun>;
  files(): string[];
}

async function rig(): Promise<Rig> {
  const base = await Deno.makeTempDir({ prefix: "muxbridge-install-" });
  const env = {
    HOME: `${base}/home`,
    XDG_CONFIG_HOME: `${base}/config`,
    XDG_STATE_HOME: `${base}/state`,
    PATH: `${base}/bin:/usr/bin:/bin`, // no opencode here unless a test puts one in bin/
  };
  await Deno.mkdir(`${base}/bin`);
  const list = (dir: string): string[] => {
    try {
      return [...Deno.readDirSync(dir)].flatMap((e) =>
        e.isDirectory
          ? [`${e.name}/`, ...list(`${dir}/${e.name}`).map((p) => `${e.name}/${p}`)]
          : [e.name]
      ).sort();
    } catch {
      return [];
    }
  };
  return {
    base,
    config: `${base}/config/opencode`,
    env,
    bin: `${base}/bin`,
    cli: (args, extra = {}) => runCli(args, { env: { ...env, ...extra } }),
    files: () => list(`${base}/config`),
  };
}

/** A fake OpenCode binary `name` in the rig's bin/ that prints `version` for --version. */
async function fakeOpencode(r: Rig, name: string, version: string): Promise<void> {
  const path = `${r.bin}/${name}`;
  await Deno.writeTextFile(path, `#!/bin/sh\n[ "$1" = --version ] && echo '${version}'\n`);
  await Deno.chmod(path, 0o755);
}

function assertOneLine(r: CliRun, code: number, mention: RegExp) {
  assert.equal(r.code, code, r.stderr);
  assert.equal(r.stdout, "");
  assert.equal(r.stderr.trimEnd().split("\n").length, 1, r.stderr);
  assert.match(r.stderr, mention);
}

Deno.test("cli install: with OpenCode 1.x, --dry-run changes nothing, install writes the plugin and the command that runs this muxbridge, a second install changes nothing, uninstall removes exactly that", async () => {
  const r = await rig();
  try {
    await fakeOpencode(r, "opencode", "1.18.33");
    // OpenCode's own first-run files in its config folder stay as they are.
    await Deno.mkdir(r.config, { recursive: true });
    await Deno.writeTextFile(`${r.config}/package.json`, '{"dependencies":{}}');
    const before = r.files();

    const dry = await r.cli(["install", "--dry-run", "--json"]);
    assert.equal(dry.code, 0, dry.stderr);
    const planned = JSON.parse(dry.stdout);
    assert.equal(planned.dryRun, true);
    assert.deepEqual(planned.changed.map((c: { path: string }) => c.path).sort(), [
      `${r.config}/plugin/muxbridge.js`,
      `${r.config}/plugin/muxbridge.json`,
    ]);
    assert.deepEqual(planned.opencode.lines, ["1.x"]);
    assert.deepEqual(r.files(), before, "--dry-run wrote nothing");

    const first = await r.cli(["install"]);
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stdout, /wrote .*plugin\/muxbridge\.js/);
    assert.match(first.stdout, /found: .*opencode --version: 1\.18\.33/);
    assert.match(first.stdout, /installed muxbridge 0\.1\.0 for OpenCode 1\.x in /);
    assert.match(first.stdout, /next: start OpenCode inside tmux/);
    assert.equal(first.stderr, "");
    assert.equal(await Deno.readTextFile(`${r.config}/plugin/muxbridge.js`), PLUGIN);
    const sidecar = JSON.parse(await Deno.readTextFile(`${r.config}/plugin/muxbridge.json`));
    assert.equal(sidecar.version, "0.1.0");
    // The recorded command runs this very muxbridge, from anywhere.
    const [cmd, ...pre] = sidecar.command as string[];
    const out = await new Deno.Command(cmd, {
      args: [...pre, "version"],
      cwd: "/",
      env: { HOME: r.env.HOME, PATH: "/usr/bin:/bin", ...runTag() },
      clearEnv: true,
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(new TextDecoder().decode(out.stdout).trim(), "muxbridge 0.1.0");

    const again = await r.cli(["install", "--json"]);
    assert.equal(again.code, 0);
    assert.deepEqual(JSON.parse(again.stdout).changed, []);
    assert.equal(JSON.parse(again.stdout).unchanged.length, 2);

    const gone = await r.cli(["uninstall", "--json"]);
    assert.equal(gone.code, 0, gone.stderr);
    assert.equal(JSON.parse(gone.stdout).changed.length, 3);
    assert.deepEqual(r.files(), before, "uninstall removed exactly what install wrote");
    const twice = await r.cli(["uninstall"]);
    assert.equal(twice.code, 0);
    assert.match(twice.stdout, /not installed for OpenCode \(nothing changed\)/);
  } finally {
    await Deno.remove(r.base, { recursive: true });
  }
});

Deno.test("cli install: OPENCODE_CONFIG_DIR wins; an older entry in opencode.jsonc is cut out and every other byte kept", async () => {
  const r = await rig();
  try {
    const dir = `${r.base}/oc-dir`;
    await Deno.mkdir(dir);
    const jsonc = [
      "{",
      "  // my settings",
      '  "plugin": ["file:///old/place/muxbridge.ts", "opencode-other"],',
      '  "theme": "tokyonight", /* trailing comma next */',
      "}",
      "",
    ].join("\n");
    await Deno.writeTextFile(`${dir}/opencode.jsonc`, jsonc);
    await fakeOpencode(r, "opencode", "1.18.33");
    const res = await r.cli(["install", "--json"], { OPENCODE_CONFIG_DIR: dir });
    assert.equal(res.code, 0, res.stderr);
    assert.equal(
      await Deno.readTextFile(`${dir}/opencode.jsonc`),
      jsonc.replace('"file:///old/place/muxbridge.ts", ', ""),
    );
    assert.equal(await Deno.readTextFile(`${dir}/plugin/muxbridge.js`), PLUGIN);
    assert.deepEqual(r.files(), [], "nothing under XDG_CONFIG_HOME");
  } finally {
    await Deno.remove(r.base, { recursive: true });
  }
});

Deno.test("cli install: an invalid OpenCode config is exit 3 and nothing is written; an unusable config folder is exit 1", async () => {
  const r = await rig();
  try {
    await Deno.mkdir(r.config, { recursive: true });
    await Deno.writeTextFile(`${r.config}/opencode.json`, '{ "plugin": [ }');
    assertOneLine(await r.cli(["install"]), 3, /opencode\.json.*line 1, column \d+.*Fix the file/);
    assert.deepEqual(r.files(), ["opencode/", "opencode/opencode.json"]);

    await Deno.writeTextFile(`${r.base}/not-a-folder`, "");
    assertOneLine(
      await r.cli(["install"], { XDG_CONFIG_HOME: `${r.base}/not-a-folder` }),
      1,
      /Cannot create the folder .*not-a-folder\/opencode\/plugin/,
    );
    assertOneLine(await r.cli(["install", "--bogus"]), 2, /--bogus/);
    assertOneLine(await r.cli(["uninstall", "extra"]), 2, /expected 0 argument/);
  } finally {
    await Deno.remove(r.base, { recursive: true });
  }
});

/** The target of the 2.x link, and the files of the folder it names. */
async function v2Folder(r: Rig): Promise<{ target: string; names: string[] }> {
  const target = await Deno.readLink(`${r.config}/plugins/muxbridge`);
  const names = [...Deno.readDirSync(target)].map((e) => e.name).sort();
  return { target, names };
}

Deno.test("cli install: with OpenCode 2.x only (opencode v2 and opencode2 on PATH), the plugins/muxbridge link to a whole versioned folder; uninstall removes link, folder and the folders it made", async () => {
  const r = await rig();
  try {
    await fakeOpencode(r, "opencode", "opencode v2.1.2");
    await fakeOpencode(r, "opencode2", "opencode v2.1.2");
    await Deno.mkdir(r.config, { recursive: true }); // OpenCode made it
    const res = await r.cli(["install", "--json"]);
    assert.equal(res.code, 0, res.stderr);
    const out = JSON.parse(res.stdout);
    assert.deepEqual(out.opencode.lines, ["2.x"]);
    assert.equal(out.opencode.found.length, 2);
    const { target, names } = await v2Folder(r);
    assert.match(target, new RegExp(`^${r.config}/muxbridge/0\\.1\\.0-[0-9a-f]{12}$`));
    assert.deepEqual(names, ["muxbridge.json", "package.json", "server.js", "tui.js"]);
    for (const [name, text] of Object.entries(PLUGIN_V2_FILES)) {
      assert.equal(await Deno.readTextFile(`${target}/${name}`), text, name);
    }
    const sidecar = JSON.parse(await Deno.readTextFile(`${target}/muxbridge.json`));
    assert.equal(sidecar.version, "0.1.0");
    assert.equal(r.files().includes("opencode/plugin/"), false, "nothing for 1.x");

    const again = await r.cli(["install", "--json"]);
    assert.deepEqual(JSON.parse(again.stdout).changed, []);

    const gone = await r.cli(["uninstall", "--json"]);
    assert.equal(gone.code, 0, gone.stderr);
    assert.deepEqual(r.files(), ["opencode/"], "nothing of muxbridge (nor the folders it made)");
  } finally {
    await Deno.remove(r.base, { recursive: true });
  }
});

Deno.test("cli install: with both lines (opencode 1.x, opencode2 2.x) both plugins; with none, both and a warning; uninstall removes all of it", async () => {
  const r = await rig();
  try {
    await fakeOpencode(r, "opencode", "1.18.33");
    await fakeOpencode(r, "opencode2", "opencode v2.1.2");
    await Deno.mkdir(r.config, { recursive: true }); // OpenCode made it
    const both = await r.cli(["install", "--json"]);
    assert.equal(both.code, 0, both.stderr);
    assert.deepEqual(JSON.parse(both.stdout).opencode.lines, ["1.x", "2.x"]);
    assert.equal(await Deno.readTextFile(`${r.config}/plugin/muxbridge.js`), PLUGIN);
    assert.deepEqual((await v2Folder(r)).names.length, 4);
    await r.cli(["uninstall"]);
    assert.deepEqual(r.files(), ["opencode/"]);

    await Deno.remove(`${r.bin}/opencode`);
    await Deno.remove(`${r.bin}/opencode2`);
    const none = await r.cli(["install"]);
    assert.equal(none.code, 0, none.stderr);
    assert.match(none.stderr, /no OpenCode found .* installed for both lines/);
    assert.match(none.stdout, /installed muxbridge 0\.1\.0 for OpenCode 1\.x and 2\.x/);
    assert.equal(await Deno.readTextFile(`${r.config}/plugin/muxbridge.js`), PLUGIN);
    assert.equal((await v2Folder(r)).names.length, 4);
    const gone = await r.cli(["uninstall", "--json"]);
    assert.equal(gone.code, 0, gone.stderr);
    assert.deepEqual(r.files(), ["opencode/"]);
  } finally {
    await Deno.remove(r.base, { recursive: true });
  }
});
