/**
 * install and uninstall plans for OpenCode 2.x, and for both lines, on an in-memory file
 * system: `plugins/muxbridge` is a link to a versioned folder in `<config>/muxbridge/` holding
 * the carried files and the recorded command; a repeated install changes nothing; a changed
 * install writes a new folder, swaps the link and removes the old folder; what is not
 * muxbridge's is refused or left alone; uninstall removes link, folders and the folders install
 * made.
 */

import assert from "node:assert/strict";
import {
  applyPlan,
  type InstallDeps,
  planInstall,
  planUninstall,
  readSidecar,
} from "../../lib/install/install.ts";
import { versionedName } from "../../lib/install/install_v2.ts";
import type { OpencodeLine } from "../../lib/install/detect.ts";
import { PLUGIN_V1, PLUGIN_V2_FILES } from "../../lib/install/plugin_source.ts";
import { isMuxError } from "../../lib/sys/errors.ts";
import { fakeEnv } from "../fakes/fake_env.ts";
import { type MemoryFiles, memoryFiles } from "../fakes/memory_files.ts";

const HOME = "/home/me";
const CONFIG = `${HOME}/.config/opencode`;
const LINK = `${CONFIG}/plugins/muxbridge`;
const STORE = `${CONFIG}/muxbridge`;
const SELF = ["/home/me/.local/bin/muxbridge"];

function deps(
  files: MemoryFiles,
  lines: OpencodeLine[] = ["2.x"],
  self = SELF,
): InstallDeps {
  return {
    files,
    env: fakeEnv({ HOME }),
    self,
    version: "0.1.0",
    carried: { v1: PLUGIN_V1, v2: PLUGIN_V2_FILES },
    lines,
  };
}

function install(files: MemoryFiles, lines?: OpencodeLine[], self?: string[]) {
  const plan = planInstall(deps(files, lines, self));
  applyPlan(files, plan);
  return plan;
}

function uninstall(files: MemoryFiles) {
  const plan = planUninstall({ files, env: fakeEnv({ HOME }) });
  applyPlan(files, plan);
  return plan;
}

Deno.test("planInstall() for 2.x links plugins/muxbridge to a versioned folder with the carried files and the recorded command", () => {
  const files = memoryFiles({ [`${CONFIG}/opencode.json`]: "{}" });
  const plan = install(files);
  const target = files.readLink(LINK)!;
  assert.match(target, /^\/home\/me\/\.config\/opencode\/muxbridge\/0\.1\.0-[0-9a-f]{12}$/);
  for (const [name, text] of Object.entries(PLUGIN_V2_FILES)) {
    assert.equal(files.read(`${LINK}/${name}`), text, name);
  }
  assert.deepEqual(readSidecar(files.read(`${target}/muxbridge.json`)), {
    command: SELF,
    version: "0.1.0",
    createdDir: true,
  });
  assert.deepEqual(plan.changed.map((c) => `${c.action} ${c.path}`), [
    `write ${target}`,
    `write ${LINK}`,
  ]);
  assert.equal(files.read(`${CONFIG}/plugin/muxbridge.js`), null, "nothing for 1.x");
  // The folder's name is its content's: the same install names the same folder.
  assert.equal(
    target,
    `${STORE}/${
      versionedName("0.1.0", {
        ...PLUGIN_V2_FILES,
        "muxbridge.json": files.read(`${target}/muxbridge.json`)!,
      })
    }`,
  );
});

Deno.test("planInstall() for 2.x a second time changes nothing", () => {
  const files = memoryFiles();
  install(files);
  const writes = files.writes.length;
  const again = install(files);
  assert.deepEqual(again.steps, []);
  assert.deepEqual(again.changed, []);
  assert.equal(files.writes.length, writes);
});

Deno.test("planInstall() for 2.x with another binary writes a new folder, swaps the link in one step, then removes the old folder", () => {
  const files = memoryFiles();
  install(files);
  const old = files.readLink(LINK)!;
  const plan = install(files, ["2.x"], ["/opt/muxbridge/bin/muxbridge"]);
  const now = files.readLink(LINK)!;
  assert.notEqual(now, old);
  assert.deepEqual(plan.steps.map((s) => s.kind), ["writeFolder", "link", "removeTree"]);
  assert.deepEqual(files.list(STORE), [now.slice(STORE.length + 1)]);
  assert.deepEqual(readSidecar(files.read(`${LINK}/muxbridge.json`))?.command, [
    "/opt/muxbridge/bin/muxbridge",
  ]);
  assert.equal(
    readSidecar(files.read(`${LINK}/muxbridge.json`))?.createdDir,
    true,
    "still remembers install made plugins/",
  );
});

Deno.test("planInstall() for 2.x refuses a plugins/muxbridge that is not muxbridge's (a folder, a link elsewhere) and writes nothing", () => {
  const folder = memoryFiles({ [`${LINK}/package.json`]: '{"name":"mine"}' });
  assert.throws(() => install(folder), (e) => isMuxError(e, "not_owned"));
  assert.deepEqual(folder.writes, []);

  const link = memoryFiles({ "/src/mine/package.json": '{"name":"mine"}' });
  link.dirs.add(`${CONFIG}/plugins`);
  link.links.set(LINK, "/src/mine");
  assert.throws(() => install(link), (e) => isMuxError(e, "not_owned"));
  assert.equal(link.readLink(LINK), "/src/mine");

  // A look-alike folder in the store that is not muxbridge's is never taken for ours.
  const lookalike = memoryFiles({ [`${STORE}/0.1.0-0123456789ab/package.json`]: "{}" });
  lookalike.dirs.add(`${CONFIG}/plugins`);
  lookalike.links.set(LINK, `${STORE}/0.1.0-0123456789ab`);
  assert.throws(() => install(lookalike), (e) => isMuxError(e, "not_owned"));
});

Deno.test("planInstall() removes a temporary folder a crashed install left in the store", () => {
  const files = memoryFiles();
  install(files);
  const leftover = `${STORE}/.0.1.0-aaaaaaaaaaaa.0123456789ab.tmp`;
  files.files.set(`${leftover}/tui.js`, { text: "x", mode: 0o644 });
  files.dirs.add(leftover);
  install(files);
  assert.equal(files.stat(leftover), null);
});

Deno.test("planInstall() for both lines writes both; asked for one, it also updates the other when muxbridge is installed there", () => {
  const files = memoryFiles();
  const plan = install(files, ["1.x", "2.x"]);
  assert.equal(files.read(`${CONFIG}/plugin/muxbridge.js`), PLUGIN_V1);
  assert.ok(files.readLink(LINK));
  assert.equal(plan.changed.length, 4);

  // A 1.x plugin of an older muxbridge is updated even when only 2.x is found now.
  const older = PLUGIN_V1.replace("plugin 0.1.0 (", "plugin 0.0.9 (");
  files.files.set(`${CONFIG}/plugin/muxbridge.js`, { text: older, mode: 0o644 });
  install(files, ["2.x"]);
  assert.equal(files.read(`${CONFIG}/plugin/muxbridge.js`), PLUGIN_V1);
});

Deno.test("planUninstall() removes the 2.x link, every versioned folder, the store and the plugins folder install made", () => {
  const initial = { [`${CONFIG}/opencode.json`]: '{ "model": "x/y" }' };
  const files = memoryFiles(initial);
  const dirsBefore = new Set(files.dirs);
  install(files, ["1.x", "2.x"]);
  const plan = uninstall(files);
  assert.equal(plan.steps[0].kind, "remove", "the 1.x file first");
  assert.deepEqual(
    plan.steps.filter((s) => s.path === LINK).map((s) => s.kind),
    ["remove"],
    "the link goes before its folder",
  );
  assert.deepEqual(Object.fromEntries([...files.files].map(([p, f]) => [p, f.text])), initial);
  assert.deepEqual(files.links.size, 0);
  assert.deepEqual(files.dirs, dirsBefore);
  assert.deepEqual(planUninstall({ files, env: fakeEnv({ HOME }) }).steps, [], "again: nothing");
});

Deno.test("planUninstall() leaves a plugins/muxbridge that is not muxbridge's and a plugins folder it did not make", () => {
  const files = memoryFiles({ "/src/mine/package.json": '{"name":"mine"}' });
  files.dirs.add(`${CONFIG}/plugins`);
  files.links.set(LINK, "/src/mine");
  const plan = uninstall(files);
  assert.equal(files.readLink(LINK), "/src/mine");
  assert.deepEqual(plan.changed, []);
  assert.match(plan.unchanged.find((c) => c.path === LINK)!.what, /left alone/);
  assert.ok(files.dirs.has(`${CONFIG}/plugins`));
});
