/**
 * `muxbridge install` and `uninstall` as plans: what to write, edit and remove to put the
 * plugins this binary carries where OpenCode loads them for this user (its global config
 * folder), for each OpenCode line asked for (`install_v1.ts`: one file for 1.x;
 * `install_v2.ts`: a folder for 2.x), with this binary's command recorded beside each, or to
 * take exactly that away again. A plan is computed first (that is `--dry-run`), then applied
 * step by step, every file written atomically.
 *
 * What install never does: touch a file that is not muxbridge's; rewrite a user's config; replace
 * a symbolic link. The one config edit it makes removes an older muxbridge entry from a config's
 * `plugin` list (the old way to install), cutting only that entry's bytes so comments and layout
 * stay. A file that is a symbolic link (dotfiles setups link `opencode.json`) is written through
 * to its target, which must be a regular file of the user's in a folder the user can write;
 * else the plan is refused, naming the link and the target, before anything is written.
 *
 * @module
 */

import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { EnvLookup } from "../sys/env.ts";
import { MuxError } from "../sys/errors.ts";
import type { OpencodeLine } from "./detect.ts";
import type { Files } from "./files.ts";
import { planV1Install, planV1Uninstall, v1Installed } from "./install_v1.ts";
import { planV2Install, planV2Uninstall, v2Installed } from "./install_v2.ts";
import { type JsoncNode, parseJsonc, plain, removeItems } from "./jsonc.ts";
import { opencodeLocations } from "./locations.ts";
import { stableBinDir, stableCommand } from "./stable_binary.ts";
import { throughLinks } from "./through_links.ts";

export { isMuxbridgePlugin, pluginVersion, readSidecar, type Sidecar } from "./plugin_files.ts";

/** What a plan needs. */
export interface InstallDeps {
  /** The file seam. */
  files: Files;
  /** The environment (where OpenCode's config folder is). */
  env: EnvLookup;
  /** The command that runs this muxbridge (recorded for the plugin). */
  self: readonly string[];
  /** This muxbridge's version. */
  version: string;
  /** The plugins this binary carries (`plugin_source.ts`). */
  carried: Carried;
  /**
   * The OpenCode lines to install for (`detect.ts`); a line muxbridge is installed for already
   * is updated too, so nothing stale stays behind.
   */
  lines: readonly OpencodeLine[];
}

/** The plugins this binary carries. */
export interface Carried {
  /** The OpenCode 1.x plugin file (`muxbridge.js`). */
  v1: string;
  /** The OpenCode 2.x plugin folder's files, by name. */
  v2: Readonly<Record<string, string>>;
}

/** One thing a plan changes or leaves as it is. */
export interface Change {
  /** The file or folder. */
  path: string;
  /** `write`, `replace`, `edit`, `remove` (changed) or `keep` (unchanged). */
  action: "write" | "replace" | "edit" | "remove" | "keep";
  /** What it is and why, for people. */
  what: string;
}

/** A step of a plan. */
export type Step =
  | { kind: "mkdir"; path: string }
  | { kind: "write"; path: string; text: string; mode: number }
  | { kind: "remove"; path: string }
  | { kind: "rmdir"; path: string }
  | { kind: "writeFolder"; path: string; files: Readonly<Record<string, string>>; mode: number }
  | { kind: "link"; path: string; target: string }
  | { kind: "removeTree"; path: string }
  | { kind: "copy"; from: string; path: string; mode: number };

/** What install or uninstall will do (and, once applied, did). */
export interface Plan {
  /** The steps, in order. */
  steps: Step[];
  /** What changes. */
  changed: Change[];
  /** What is already as it should be, or left alone. */
  unchanged: Change[];
}

/** Whether a `plugin` list entry names a muxbridge plugin file. */
function isMuxbridgeEntry(entry: unknown): boolean {
  const spec = Array.isArray(entry) ? entry[0] : entry;
  if (typeof spec !== "string") return false;
  let path = spec;
  if (spec.startsWith("file://")) {
    try {
      path = fileURLToPath(spec);
    } catch {
      return false;
    }
  }
  return /(^|[/\\])muxbridge\.(ts|js)$/.test(path);
}

/** The muxbridge entries of a config's top-level `plugin` list, with the list node. */
function muxbridgeEntries(path: string, text: string): { list: JsoncNode; indexes: number[] } {
  let root: JsoncNode;
  try {
    root = parseJsonc(text);
  } catch (err) {
    throw new MuxError(
      "invalid_config",
      `Cannot read OpenCode's config "${path}": ${(err as Error).message}`,
      { hint: "Fix the file (OpenCode cannot start with it either), then run install again" },
    );
  }
  const list = root.kind === "object"
    ? root.props.findLast((p) => p.key === "plugin")?.value
    : undefined;
  if (!list || list.kind !== "array") return { list: root, indexes: [] };
  const indexes = list.items.flatMap((item, k) => (isMuxbridgeEntry(plain(item)) ? [k] : []));
  return { list, indexes };
}

/**
 * The install plan for this user.
 *
 * @param deps Files, environment, this binary's command, version and carried plugins, and the
 *   OpenCode lines to install for.
 * @returns What to do; nothing when everything is in place already.
 * @throws {MuxError} `invalid_config` for a config that is not valid JSONC (or no HOME);
 *   `not_owned` when something that is not muxbridge's sits where a plugin goes, or a file to
 *   write is a symbolic link install will not write through (dangling, or to something that is
 *   not a regular file of the user's in a folder the user can write).
 */
export function planInstall(deps: InstallDeps): Plan {
  const { files } = deps;
  const at = opencodeLocations(deps.env);
  const plan: Plan = { steps: [], changed: [], unchanged: [] };
  // Configs first: a config install cannot read must stop the plan before anything is written.
  const edits = at.configFiles.flatMap((path) => {
    const text = files.read(path);
    if (text === null) return [];
    const { list, indexes } = muxbridgeEntries(path, text);
    if (!indexes.length) return [];
    const { target, note } = throughLinks(
      files,
      path,
      "edit OpenCode's config",
      `Remove the muxbridge entries from its "plugin" list yourself (in your dotfiles' source, if you link it), then run install again`,
    );
    return [{ path, target, note, text: removeItems(text, list, indexes), n: indexes.length }];
  });

  // A binary in a package manager's folder is recorded as muxbridge's own copy, made first so
  // that no recorded command ever names a missing file.
  const stable = stableCommand(deps.self, deps.env);
  if (stable.copy) planCopy(files, stable.copy, plan);
  const recording = { ...deps, self: stable.command };
  for (const line of linesFor(recording, at)) {
    if (line === "1.x") planV1Install(recording, at, plan);
    else planV2Install(recording, at, plan);
  }
  for (const edit of edits) {
    const mode = files.stat(edit.target)?.mode ?? 0o644;
    plan.steps.push({ kind: "write", path: edit.target, text: edit.text, mode });
    plan.changed.push({
      path: edit.path,
      action: "edit",
      what: `removed ${edit.n} older muxbridge ${edit.n === 1 ? "entry" : "entries"} from its ` +
        `plugin list (the plugin folder loads it now; nothing else in the file changes)${edit.note}`,
    });
  }
  return plan;
}

/**
 * The uninstall plan: removes exactly what {@linkcode planInstall} writes, for both lines.
 *
 * @param deps Files and environment.
 * @returns What to do.
 */
export function planUninstall(deps: Pick<InstallDeps, "files" | "env">): Plan {
  const { files } = deps;
  const at = opencodeLocations(deps.env);
  const plan: Plan = { steps: [], changed: [], unchanged: [] };
  planV1Uninstall(deps, at, plan);
  planV2Uninstall(deps, at, plan);
  planCopyUninstall(files, deps.env, plan);
  for (const path of at.configFiles) {
    const text = files.read(path);
    if (text === null) continue;
    let found = 0;
    try {
      found = muxbridgeEntries(path, text).indexes.length;
    } catch { /* not ours to judge here */ }
    if (found) {
      plan.unchanged.push({
        path,
        action: "keep",
        what: "lists a muxbridge plugin by hand; left alone (install did not write it)",
      });
    }
  }
  return plan;
}

/**
 * Runs a plan's steps in order.
 *
 * @param files The file seam.
 * @param plan The plan.
 * @throws {MuxError} `write_failed` from the first step that fails (earlier steps stay done;
 *   each file is whole, old or new).
 */
export function applyPlan(files: Files, plan: Plan): void {
  for (const step of plan.steps) {
    switch (step.kind) {
      case "mkdir":
        files.mkdirp(step.path);
        break;
      case "write":
        files.mkdirp(dirname(step.path));
        files.writeAtomic(step.path, step.text, step.mode);
        break;
      case "remove":
        files.remove(step.path);
        break;
      case "rmdir":
        files.removeEmptyDir(step.path);
        break;
      case "writeFolder":
        files.mkdirp(dirname(step.path));
        files.writeFolderAtomic(step.path, step.files, step.mode);
        break;
      case "link":
        files.mkdirp(dirname(step.path));
        files.replaceLink(step.path, step.target);
        break;
      case "removeTree":
        files.removeTree(step.path);
        break;
      case "copy":
        files.copyAtomic(step.from, step.path, step.mode);
        break;
      default: {
        const never: never = step;
        throw new TypeError(`Unknown step ${JSON.stringify(never)}`);
      }
    }
  }
}

/** The copy of a binary run from a package manager's folder (`stable_binary.ts`). */
function planCopy(files: Files, copy: { from: string; to: string }, plan: Plan): void {
  const what = "muxbridge's own copy of the binary, which the plugin runs (the package " +
    "manager's folder it ran from is pruned or replaced by it)";
  if (files.sameContent(copy.from, copy.to) && files.isExecutable(copy.to)) {
    plan.unchanged.push({ path: copy.to, action: "keep", what });
    return;
  }
  plan.steps.push({ kind: "copy", from: copy.from, path: copy.to, mode: 0o755 });
  plan.changed.push({
    path: copy.to,
    action: files.stat(copy.to) === null ? "write" : "replace",
    what,
  });
}

/** Removes the copy install made of a binary run from a package manager's folder. */
function planCopyUninstall(files: Files, env: EnvLookup, plan: Plan): void {
  let dir: string;
  try {
    dir = stableBinDir(env);
  } catch {
    return; // no HOME: install could not have made one
  }
  let removed = false;
  for (const name of ["muxbridge", "muxbridge.exe"]) {
    const path = join(dir, name);
    if (files.stat(path)?.kind !== "file") continue;
    removed = true;
    plan.steps.push({ kind: "remove", path });
    plan.changed.push({
      path,
      action: "remove",
      what: "muxbridge's own copy of the binary (install made it from a package manager's folder)",
    });
  }
  if (removed) {
    plan.steps.push({ kind: "rmdir", path: dir }, { kind: "rmdir", path: dirname(dir) });
  }
}

/** The lines asked for, plus those muxbridge is installed for already (kept up to date). */
function linesFor(
  deps: InstallDeps,
  at: ReturnType<typeof opencodeLocations>,
): OpencodeLine[] {
  const want = new Set(deps.lines);
  if (v1Installed(deps.files, at)) want.add("1.x");
  if (v2Installed(deps.files, at)) want.add("2.x");
  return (["1.x", "2.x"] as const).filter((l) => want.has(l));
}
