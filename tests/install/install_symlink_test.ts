/**
 * `install` on a real file system where the user links their OpenCode config (dotfiles setups,
 * home-manager): a symlinked `opencode.json` stays a symbolic link and its target gets the edit;
 * a link that dangles, loops, or ends at a file another user owns (a read-only store, as
 * home-manager's are) is refused before anything is written, naming the link, the target and
 * what to do. Issue 23, item 6: `install` replaced such a link with a regular file.
 */

import assert from "node:assert/strict";
import { chownSync, lstatSync, readlinkSync } from "node:fs";
import { createRealFiles } from "../../lib/install/files.ts";
import { applyPlan, planInstall } from "../../lib/install/install.ts";
import { PLUGIN_V1, PLUGIN_V2_FILES } from "../../lib/install/plugin_source.ts";
import { isMuxError } from "../../lib/sys/errors.ts";
import { fakeEnv } from "../fakes/fake_env.ts";

/** An opencode.json listing an older muxbridge by hand, with a comment and another plugin. */
const OLD_CONFIG = `{
  // mine
  "plugin": ["file:///opt/old/plugin/muxbridge.ts", "other-plugin"],
  "theme": "dark"
}
`;

async function withHome(fn: (home: string) => Promise<void>): Promise<void> {
  const home = await Deno.realPath(await Deno.makeTempDir({ prefix: "muxbridge-links-" }));
  try {
    await Deno.mkdir(`${home}/.config/opencode`, { recursive: true });
    await Deno.mkdir(`${home}/dotfiles`);
    await fn(home);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
}

function install(home: string, uid?: number) {
  const files = createRealFiles(uid === undefined ? {} : { uid });
  const plan = planInstall({
    files,
    env: fakeEnv({ HOME: home }),
    self: [`${home}/bin/muxbridge`],
    version: "0.1.0",
    carried: { v1: PLUGIN_V1, v2: PLUGIN_V2_FILES },
    lines: ["1.x"],
  });
  applyPlan(files, plan);
  return plan;
}

/** Every file under `dir`, with its text (links named as links). */
function tree(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of Deno.readDirSync(dir)) {
    const path = `${dir}/${e.name}`;
    if (e.isSymlink) out[path] = `-> ${readlinkSync(path)}`;
    else if (e.isDirectory) Object.assign(out, tree(path));
    else out[path] = Deno.readTextFileSync(path);
  }
  return out;
}

Deno.test("install edits a symlinked opencode.json through the link: the link stays a link, its target loses only the muxbridge entry", async () => {
  await withHome(async (home) => {
    const target = `${home}/dotfiles/opencode.json`;
    const link = `${home}/.config/opencode/opencode.json`;
    await Deno.writeTextFile(target, OLD_CONFIG, { mode: 0o640 });
    await Deno.chmod(target, 0o640);
    await Deno.symlink("../../dotfiles/opencode.json", link);
    const plan = install(home);
    assert.ok(lstatSync(link).isSymbolicLink(), "the link is still a link");
    assert.equal(readlinkSync(link), "../../dotfiles/opencode.json", "pointing where it did");
    assert.equal(
      await Deno.readTextFile(target),
      OLD_CONFIG.replace('"file:///opt/old/plugin/muxbridge.ts", ', ""),
    );
    assert.equal((await Deno.stat(target)).mode! & 0o777, 0o640, "the target keeps its mode");
    const edit = plan.changed.find((c) => c.action === "edit")!;
    assert.equal(edit.path, link);
    assert.match(edit.what, /written to .*dotfiles\/opencode\.json.*the link stays/);
    assert.deepEqual(
      [...Deno.readDirSync(`${home}/dotfiles`)].map((e) => e.name),
      ["opencode.json"],
      "no temporary file left beside the target",
    );
    // A second install has nothing to edit and leaves the link alone.
    assert.equal(install(home).changed.length, 0);
    assert.ok(lstatSync(link).isSymbolicLink());
  });
});

Deno.test("install writes its own plugin through a link to a file of the user's, and keeps the link", async () => {
  await withHome(async (home) => {
    await Deno.mkdir(`${home}/.config/opencode/plugin`);
    const target = `${home}/dotfiles/muxbridge.js`;
    await Deno.writeTextFile(target, "");
    const link = `${home}/.config/opencode/plugin/muxbridge.js`;
    await Deno.symlink(target, link);
    // An empty file is not muxbridge's plugin: refused as before, link or not.
    assert.throws(() => install(home), (e) => isMuxError(e, "not_owned"));
    await Deno.writeTextFile(target, PLUGIN_V1.replace("plugin 0.1.0 (", "plugin 0.0.9 ("));
    install(home);
    assert.ok(lstatSync(link).isSymbolicLink());
    assert.equal(await Deno.readTextFile(target), PLUGIN_V1);
  });
});

Deno.test("install refuses to edit a symlinked opencode.json that points at a file another user owns, and writes nothing", async () => {
  await withHome(async (home) => {
    const link = `${home}/.config/opencode/opencode.json`;
    // As root the file really belongs to nobody; otherwise install runs as if it were nobody.
    const root = Deno.uid() === 0;
    const cases: Array<[string, () => Promise<void>, RegExp, number?]> = [
      [
        "a file of another user's (a read-only store)",
        async () => {
          const foreign = `${home}/dotfiles/store-opencode.json`;
          await Deno.writeTextFile(foreign, OLD_CONFIG);
          if (root) chownSync(foreign, 65534, 65534);
          await Deno.symlink(foreign, link);
        },
        root
          ? /it is a symbolic link to ".*store-opencode\.json", which uid 65534 owns, not you \(uid 0\)/
          : new RegExp(
            `store-opencode\\.json", which uid ${Deno.uid()} owns, not you \\(uid 65534\\)`,
          ),
        root ? undefined : 65534,
      ],
    ];
    for (const [what, arrange, why, uid] of cases) {
      await arrange();
      const before = tree(home);
      assert.throws(() => install(home, uid), (e: unknown) => {
        assert.ok(isMuxError(e, "not_owned"), what);
        assert.match(e.message, new RegExp(`^Cannot edit OpenCode's config "${link}": `), what);
        assert.match(e.message, why, what);
        assert.match(e.hint ?? "", /Remove the muxbridge entries .* yourself/, what);
        return true;
      });
      assert.deepEqual(tree(home), before, `${what}: nothing was written`);
      await Deno.remove(link);
    }
  });
});

Deno.test("install refuses to write its plugin through a dangling link or a loop, naming it, and writes nothing", async () => {
  await withHome(async (home) => {
    await Deno.mkdir(`${home}/.config/opencode/plugin`);
    const link = `${home}/.config/opencode/plugin/muxbridge.js`;
    // A dangling link: refused by the plan. A loop: reading it already fails, saying so.
    const cases: Array<[() => Promise<void>, string, RegExp, RegExp]> = [
      [
        () => Deno.symlink(`${home}/dotfiles/gone.js`, link),
        "not_owned",
        new RegExp(
          `^Cannot write "${link}": it is a symbolic link to ".*gone\\.js", which does not exist$`,
        ),
        /Remove the link/,
      ],
      [
        () => Deno.symlink(link, link),
        "write_failed",
        new RegExp(`^Cannot read "${link}": ELOOP`),
        /loop of symbolic links: fix or remove the link/,
      ],
    ];
    for (const [arrange, code, message, hint] of cases) {
      await arrange();
      const before = tree(home);
      assert.throws(() => install(home), (e: unknown) => {
        assert.ok(isMuxError(e, code as "not_owned"), String(e));
        assert.match(e.message, message);
        assert.match(e.hint ?? "", hint);
        return true;
      });
      assert.deepEqual(tree(home), before, "nothing was written");
      assert.ok(lstatSync(link).isSymbolicLink());
      await Deno.remove(link);
    }
  });
});

Deno.test("createRealFiles().writeAtomic() never replaces a symbolic link with a file", async () => {
  await withHome(async (home) => {
    const target = `${home}/dotfiles/a.json`;
    await Deno.writeTextFile(target, "old");
    await Deno.symlink(target, `${home}/link.json`);
    const files = createRealFiles();
    assert.throws(
      () => files.writeAtomic(`${home}/link.json`, "new", 0o644),
      (e) => isMuxError(e, "write_failed") && /symbolic link/.test(e.message),
    );
    assert.ok(lstatSync(`${home}/link.json`).isSymbolicLink());
    assert.equal(await Deno.readTextFile(target), "old");
    assert.deepEqual(files.writeTarget(`${home}/link.json`), { path: target, linked: true });
    assert.deepEqual(files.writeTarget(target), { path: target, linked: false });
    assert.deepEqual(files.writeTarget(`${home}/new.json`), {
      path: `${home}/new.json`,
      linked: false,
    });
  });
});
