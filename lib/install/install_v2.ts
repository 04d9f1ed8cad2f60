/**
 * The OpenCode 2.x part of `install` and `uninstall`: the plugin folder OpenCode 2.x loads from
 * `plugins/muxbridge` (its `server.js`, which does nothing, and `tui.js`, which runs in every
 * TUI), with the recorded command inside it (`muxbridge.json`).
 *
 * `plugins/muxbridge` is a symbolic link to a versioned folder, `<config>/muxbridge/<version>-
 * <hash>/`, written whole (in a temporary folder, then renamed) before the link is pointed at it
 * by one `rename`. So an OpenCode loading the plugin meanwhile (the service and every TUI reload
 * plugins on their own when files change) sees the old folder or the new one, never a mix of
 * files from two versions; the old folder is removed afterwards. OpenCode 2.x follows a link to
 * a plugin folder (it resolves the real folder before loading, and watches both). The versioned
 * folders live outside `plugin/` and `plugins/` because 2.x loads every folder there; the hash
 * (of every file, the recorded command included) makes a repeated install a no-op and any
 * change a new folder.
 *
 * @module
 */

import { createHash } from "node:crypto";
import { basename, dirname, isAbsolute, join, resolve } from "node:path";
import { MuxError } from "../sys/errors.ts";
import type { Files } from "./files.ts";
import type { InstallDeps, Plan } from "./install.ts";
import type { OpencodeLocations } from "./locations.ts";
import { readSidecar, sidecarText } from "./plugin_files.ts";

/** The name of a versioned folder install writes: `<version>-<12 hex>`. */
const VERSIONED = /^\d+\.\d+\.\d+[0-9A-Za-z.+-]*-[0-9a-f]{12}$/;
/** A temporary folder a crashed install may have left in the store. */
const SCRATCH = /^\..+\.[0-9a-f]{12}\.tmp$/;
/** The `name` of the package.json muxbridge writes into the folder. */
const PACKAGE_NAME = "muxbridge-opencode-plugin";

/** Where the link points, made absolute; null when `path` is no link. */
function linkTarget(files: Files, path: string): string | null {
  const target = files.readLink(path);
  if (target === null) return null;
  return isAbsolute(target) ? target : resolve(dirname(path), target);
}

/** Whether `path` names a versioned folder in the store (which may be gone). */
function inStore(at: OpencodeLocations, path: string): boolean {
  return dirname(path) === at.v2Store && VERSIONED.test(basename(path));
}

/** Whether a folder in the store holds muxbridge's package.json (or is gone). */
function ownFolder(files: Files, path: string): boolean {
  const pkg = files.read(join(path, "package.json"));
  if (pkg === null) return files.stat(path) === null;
  try {
    return JSON.parse(pkg)?.name === PACKAGE_NAME;
  } catch {
    return false;
  }
}

/** The versioned folders (and leftovers of crashed installs) muxbridge owns in the store. */
function ownFolders(files: Files, at: OpencodeLocations): string[] {
  return files.list(at.v2Store).flatMap((name) => {
    const path = join(at.v2Store, name);
    if (SCRATCH.test(name)) return [path];
    return VERSIONED.test(name) && ownFolder(files, path) ? [path] : [];
  });
}

/**
 * Whether the OpenCode 2.x plugin link is muxbridge's.
 *
 * @param files The file seam.
 * @param at Where OpenCode's folders are.
 * @returns Whether `plugins/muxbridge` is a link into muxbridge's store.
 */
export function v2Installed(files: Files, at: OpencodeLocations): boolean {
  const target = linkTarget(files, at.v2Link);
  return target !== null && inStore(at, target) && ownFolder(files, target);
}

/**
 * The name of the folder for these files: the version and a hash of every file.
 *
 * @param version muxbridge's version.
 * @param files The folder's files, by name.
 * @returns `<version>-<12 hex>`.
 */
export function versionedName(version: string, files: Readonly<Record<string, string>>): string {
  const hash = createHash("sha256");
  for (const name of Object.keys(files).sort()) hash.update(`${name}\0${files[name]}\0`);
  return `${version}-${hash.digest("hex").slice(0, 12)}`;
}

/**
 * Adds the 2.x steps to an install plan: `plugins/` and the store, the versioned folder, the
 * link, and the removal of older versioned folders.
 *
 * @param deps What install needs.
 * @param at Where OpenCode's folders are.
 * @param plan The plan to add to.
 * @throws {MuxError} `not_owned` when something that is not muxbridge's is at `plugins/muxbridge`
 *   (or `plugins` is no folder).
 */
export function planV2Install(deps: InstallDeps, at: OpencodeLocations, plan: Plan): void {
  const { files } = deps;
  const dirInfo = files.stat(at.v2PluginsDir);
  if (dirInfo !== null && dirInfo.kind !== "dir") {
    throw new MuxError(
      "not_owned",
      `Cannot install into "${at.v2PluginsDir}": it is not a folder`,
      {
        hint: "Move it away, then run install again",
      },
    );
  }
  const current = linkTarget(files, at.v2Link);
  const ours = current !== null && inStore(at, current) && ownFolder(files, current);
  if (!ours && (current !== null || files.stat(at.v2Link) !== null)) {
    throw new MuxError(
      "not_owned",
      `Cannot install for OpenCode 2.x: "${at.v2Link}" is not muxbridge's`,
      { hint: "Move it away, then run install again" },
    );
  }
  const before = ours ? readSidecar(files.read(join(current!, "muxbridge.json"))) : null;
  const createdDir = dirInfo === null || before?.createdDir === true;
  if (dirInfo === null) plan.steps.push({ kind: "mkdir", path: at.v2PluginsDir });

  const content = {
    ...deps.carried.v2,
    "muxbridge.json": sidecarText({ command: [...deps.self], version: deps.version, createdDir }),
  };
  const folder = join(at.v2Store, versionedName(deps.version, content));
  const what = `the OpenCode 2.x plugin ${deps.version}: ${Object.keys(content).join(", ")}, ` +
    `with the muxbridge command its TUI part runs: ${deps.self.join(" ")}`;
  const whole = Object.entries(content).every(([name, text]) =>
    files.read(join(folder, name)) === text
  );
  if (whole) plan.unchanged.push({ path: folder, action: "keep", what });
  else {
    if (files.stat(folder) !== null) plan.steps.push({ kind: "removeTree", path: folder });
    plan.steps.push({ kind: "writeFolder", path: folder, files: content, mode: 0o644 });
    plan.changed.push({ path: folder, action: "write", what });
  }

  const link = `the link OpenCode 2.x loads the plugin through, to ${folder}`;
  if (current === folder) plan.unchanged.push({ path: at.v2Link, action: "keep", what: link });
  else {
    plan.steps.push({ kind: "link", path: at.v2Link, target: folder });
    plan.changed.push({ path: at.v2Link, action: current ? "replace" : "write", what: link });
  }

  for (const old of ownFolders(files, at)) {
    if (old === folder) continue;
    plan.steps.push({ kind: "removeTree", path: old });
    plan.changed.push({
      path: old,
      action: "remove",
      what: "an older version of the OpenCode 2.x plugin",
    });
  }
}

/**
 * Adds the 2.x steps to an uninstall plan: the link first (OpenCode stops loading the plugin),
 * then every versioned folder, the store, and `plugins/` when install created it.
 *
 * @param deps Files.
 * @param at Where OpenCode's folders are.
 * @param plan The plan to add to.
 */
export function planV2Uninstall(
  deps: Pick<InstallDeps, "files">,
  at: OpencodeLocations,
  plan: Plan,
): void {
  const { files } = deps;
  const current = linkTarget(files, at.v2Link);
  const ours = current !== null && inStore(at, current) && ownFolder(files, current);
  let createdDir = false;
  if (ours) {
    createdDir = readSidecar(files.read(join(current!, "muxbridge.json")))?.createdDir === true;
    plan.steps.push({ kind: "remove", path: at.v2Link });
    plan.changed.push({ path: at.v2Link, action: "remove", what: "the OpenCode 2.x plugin link" });
  } else if (current !== null || files.stat(at.v2Link) !== null) {
    plan.unchanged.push({
      path: at.v2Link,
      action: "keep",
      what: "not muxbridge's OpenCode 2.x plugin: left alone",
    });
  }
  const folders = ownFolders(files, at);
  for (const folder of folders) {
    plan.steps.push({ kind: "removeTree", path: folder });
    plan.changed.push({ path: folder, action: "remove", what: "the OpenCode 2.x plugin's files" });
  }
  if (
    folders.length > 0 || files.stat(at.v2Store) !== null && files.list(at.v2Store).length === 0
  ) {
    plan.steps.push({ kind: "rmdir", path: at.v2Store });
    plan.changed.push({
      path: at.v2Store,
      action: "remove",
      what: "muxbridge's folder for them (only if nothing else is in it)",
    });
  }
  if (createdDir) {
    plan.steps.push({ kind: "rmdir", path: at.v2PluginsDir });
    plan.changed.push({
      path: at.v2PluginsDir,
      action: "remove",
      what: "the plugins folder install created (only if nothing else is in it)",
    });
  }
}
