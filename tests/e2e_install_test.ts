/**
 * `muxbridge install` / `uninstall` as a black box (the compiled binary under
 * `deno task test:binary`): real files in a temporary config folder; stdout, stderr and exit
 * codes asserted apart. The recorded command runs muxbridge from another directory, the plugin
 * written is `plugin/muxbridge.ts` byte for byte, and the bad inputs get their exit codes.
 * (The TUI end to end, with plain `opencode`, is `e2e_tui_test.ts`.)
 */

import assert from "node:assert/strict";
import { type CliRun, runCli } from "./helpers/cli_process.ts";
import { runTag } from "./helpers/run_tag.ts";

const PLUGIN = await Deno.readTextFile(new URL("../plugin/muxbridge.ts", import.meta.url));

interface Rig {
  base: string;
  config: string;
  env: Record<string, string>;
  cli(args: string[], env?: Record<string, string>): Promise<CliRun>;
  files(): string[];
}

async function rig(): Promise<Rig> {
  const base = await Deno.makeTempDir({ prefix: "muxbridge-install-" });
  const env = {
    HOME: `${base}/home`,
    XDG_CONFIG_HOME: `${base}/config`,
    XDG_STATE_HOME: `${base}/state`,
    PATH: "/usr/bin:/bin", // no opencode here
  };
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
    cli: (args, extra = {}) => runCli(args, { env: { ...env, ...extra } }),
    files: () => list(`${base}/config`),
  };
}

function assertOneLine(r: CliRun, code: number, mention: RegExp) {
  assert.equal(r.code, code, r.stderr);
  assert.equal(r.stdout, "");
  assert.equal(r.stderr.trimEnd().split("\n").length, 1, r.stderr);
  assert.match(r.stderr, mention);
}

Deno.test("cli install: --dry-run changes nothing, install writes the plugin and the command that runs this muxbridge, a second install changes nothing, uninstall removes exactly that", async () => {
  const r = await rig();
  try {
    // OpenCode's own first-run files in its config folder stay as they are.
    await Deno.mkdir(r.config, { recursive: true });
    await Deno.writeTextFile(`${r.config}/package.json`, '{"dependencies":{}}');
    const before = r.files();

    const dry = await r.cli(["install", "--dry-run", "--json"]);
    assert.equal(dry.code, 0, dry.stderr);
    const planned = JSON.parse(dry.stdout);
    assert.equal(planned.dryRun, true);
    assert.deepEqual(planned.changed.map((c: { path: string }) => c.path).sort(), [
      `${r.config}/plugin/muxbridge.json`,
      `${r.config}/plugin/muxbridge.ts`,
    ]);
    assert.deepEqual(r.files(), before, "--dry-run wrote nothing");

    const first = await r.cli(["install"]);
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stdout, /wrote .*plugin\/muxbridge\.ts/);
    assert.match(first.stdout, /next: start OpenCode inside tmux/);
    assert.match(first.stderr, /opencode is not on PATH/, "a note, not a failure");
    assert.equal(await Deno.readTextFile(`${r.config}/plugin/muxbridge.ts`), PLUGIN);
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
    const res = await r.cli(["install", "--json"], { OPENCODE_CONFIG_DIR: dir });
    assert.equal(res.code, 0, res.stderr);
    assert.equal(
      await Deno.readTextFile(`${dir}/opencode.jsonc`),
      jsonc.replace('"file:///old/place/muxbridge.ts", ', ""),
    );
    assert.equal(await Deno.readTextFile(`${dir}/plugin/muxbridge.ts`), PLUGIN);
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
