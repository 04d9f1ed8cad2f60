/**
 * `muxbridge install` and `uninstall` as plans: what to write, edit and remove to put the
 * plugin this binary carries where OpenCode loads it for this user (its global plugin folder),
 * with this binary's command recorded beside it, or to take exactly that away again. A plan is
 * computed first (that is `--dry-run`), then applied step by step, every file written
 * atomically.
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

import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import type { EnvLookup } from "../sys/env.ts";
import { MuxError } from "../sys/errors.ts";
import type { Files } from "./files.ts";
import { type JsoncNode, parseJsonc, plain, removeItems } from "./jsonc.ts";
import { opencodeLocations } from "./locations.ts";

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
  /** The plugin this binary carries. */
  source: string;
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
  | { kind: "rmdir"; path: string };

/** What install or uninstall will do (and, once applied, did). */
export interface Plan {
  /** The steps, in order. */
  steps: Step[];
  /** What changes. */
  changed: Change[];
  /** What is already as it should be, or left alone. */
  unchanged: Change[];
}

/** What `install` records beside the plugin (`muxbridge.json`). */
export interface Sidecar {
  /** The command that runs muxbridge (argv prefix). */
  command: string[];
  /** The muxbridge version that installed the plugin. */
  version: string;
  /** Whether install created the plugin folder (uninstall then removes it when empty). */
  createdDir?: boolean;
}

/**
 * Whether a file's text is a muxbridge plugin (any version).
 *
 * @param text The file's text.
 * @returns Whether it is muxbridge's.
 */
export function isMuxbridgePlugin(text: string): boolean {
  return text.includes("The muxbridge OpenCode plugin") && text.includes("MuxbridgePlugin");
}

/**
 * The version a plugin file was released with, if it says.
 *
 * @param text The plugin's text.
 * @returns `X.Y.Z`, or undefined.
 */
export function pluginVersion(text: string): string | undefined {
  return /const PLUGIN_VERSION = "([^"]+)"/.exec(text)?.[1];
}

/**
 * Reads the sidecar `install` wrote; null when absent or not muxbridge's.
 *
 * @param text The sidecar's text, or null.
 * @returns The recorded command and version.
 */
export function readSidecar(text: string | null): Sidecar | null {
  if (text === null) return null;
  try {
    const data = JSON.parse(text);
    if (
      !Array.isArray(data?.command) || data.command.length === 0 ||
      !data.command.every((a: unknown) => typeof a === "string" && a !== "") ||
      typeof data.version !== "string"
    ) return null;
    return {
      command: data.command,
      version: data.version,
      ...(data.createdDir === true ? { createdDir: true } : {}),
    };
  } catch {
    return null;
  }
}

/**
 * Where a planned write of `path` goes: `path`, or the file a symbolic link there points to (the
 * link stays a link).
 *
 * @throws {MuxError} `not_owned` when the link dangles, loops or ends at something that is not a
 *   regular file of the user's in a folder the user can write.
 */
function throughLinks(
  files: Files,
  path: string,
  action: string,
  hint: string,
): { target: string; note: string } {
  const t = files.writeTarget(path);
  if (t.refused !== undefined) {
    throw new MuxError("not_owned", `Cannot ${action} "${path}": ${t.refused}`, { hint });
  }
  return {
    target: t.path,
    note: t.linked
      ? ` (written to ${t.path}, which the symbolic link points to; the link stays)`
      : "",
  };
}

/** What to do about a link install will not write through, for its own files. */
const OWN_LINK_HINT =
  "Remove the link (install writes this file itself), or point it at a file of yours, then run install again";

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
 * @param deps Files, environment, this binary's command, version and carried plugin.
 * @returns What to do; nothing when everything is in place already.
 * @throws {MuxError} `invalid_config` for a config that is not valid JSONC (or no HOME);
 *   `not_owned` when a file that is not muxbridge's sits where the plugin goes, or a file to
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

  const dirInfo = files.stat(at.pluginDir);
  if (dirInfo !== null && dirInfo.kind !== "dir") {
    throw new MuxError("not_owned", `Cannot install into "${at.pluginDir}": it is not a folder`, {
      hint: "Move it away, then run install again",
    });
  }
  const oldSidecar = readSidecar(files.read(at.sidecar));
  const createdDir = dirInfo === null || oldSidecar?.createdDir === true;
  if (dirInfo === null) plan.steps.push({ kind: "mkdir", path: at.pluginDir });

  const sidecarText = `${
    JSON.stringify(
      {
        command: deps.self,
        version: deps.version,
        ...(createdDir ? { createdDir: true } : {}),
      },
      null,
      2,
    )
  }\n`;
  const currentSidecar = files.read(at.sidecar);
  if (currentSidecar === sidecarText) {
    plan.unchanged.push({
      path: at.sidecar,
      action: "keep",
      what: "the recorded muxbridge command",
    });
  } else {
    if (currentSidecar !== null && oldSidecar === null) {
      throw new MuxError("not_owned", `Cannot install: "${at.sidecar}" is not muxbridge's`, {
        hint: "Move it away, then run install again",
      });
    }
    const { target, note } = throughLinks(files, at.sidecar, "write", OWN_LINK_HINT);
    plan.steps.push({ kind: "write", path: target, text: sidecarText, mode: 0o644 });
    plan.changed.push({
      path: at.sidecar,
      action: currentSidecar === null ? "write" : "replace",
      what: `the muxbridge command the plugin runs: ${deps.self.join(" ")}${note}`,
    });
  }

  const current = files.read(at.plugin);
  if (current === deps.source) {
    plan.unchanged.push({ path: at.plugin, action: "keep", what: `the plugin ${deps.version}` });
  } else {
    if (current !== null && !isMuxbridgePlugin(current)) {
      throw new MuxError("not_owned", `Cannot install: "${at.plugin}" is not muxbridge's plugin`, {
        hint: "Move it away, then run install again",
      });
    }
    const { target, note } = throughLinks(files, at.plugin, "write", OWN_LINK_HINT);
    plan.steps.push({ kind: "write", path: target, text: deps.source, mode: 0o644 });
    plan.changed.push({
      path: at.plugin,
      action: current === null ? "write" : "replace",
      what: (current === null
        ? `the plugin ${deps.version}`
        : `the plugin ${pluginVersion(current) ?? "(older)"} → ${deps.version}`) + note,
    });
  }

  for (const path of at.legacyPlugins) {
    const text = files.read(path);
    if (text === null) continue;
    const sidecar = path.endsWith(".json");
    if (sidecar ? readSidecar(text) === null : !isMuxbridgePlugin(text)) continue;
    plan.steps.push({ kind: "remove", path });
    plan.changed.push({
      path,
      action: "remove",
      what: sidecar ? "the command recorded for an older copy" : "an older copy of the plugin",
    });
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
 * The uninstall plan: removes exactly what {@linkcode planInstall} writes.
 *
 * @param deps Files and environment.
 * @returns What to do.
 */
export function planUninstall(deps: Pick<InstallDeps, "files" | "env">): Plan {
  const { files } = deps;
  const at = opencodeLocations(deps.env);
  const plan: Plan = { steps: [], changed: [], unchanged: [] };
  const plugin = files.read(at.plugin);
  if (plugin !== null && isMuxbridgePlugin(plugin)) {
    plan.steps.push({ kind: "remove", path: at.plugin });
    plan.changed.push({ path: at.plugin, action: "remove", what: "the plugin" });
  } else {
    plan.unchanged.push({
      path: at.plugin,
      action: "keep",
      what: plugin === null ? "no plugin installed" : "not muxbridge's plugin: left alone",
    });
  }
  const sidecar = readSidecar(files.read(at.sidecar));
  if (sidecar) {
    plan.steps.push({ kind: "remove", path: at.sidecar });
    plan.changed.push({
      path: at.sidecar,
      action: "remove",
      what: "the recorded muxbridge command",
    });
    if (sidecar.createdDir) {
      plan.steps.push({ kind: "rmdir", path: at.pluginDir });
      plan.changed.push({
        path: at.pluginDir,
        action: "remove",
        what: "the plugin folder install created (only if nothing else is in it)",
      });
    }
  }
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
      default: {
        const never: never = step;
        throw new TypeError(`Unknown step ${JSON.stringify(never)}`);
      }
    }
  }
}
