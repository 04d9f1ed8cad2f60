/**
 * The OpenCode 1.x part of `install` and `uninstall`: one file, `muxbridge.js`, in the plugin
 * folder OpenCode 1.x loads every file of, with the recorded command beside it
 * (`muxbridge.json`); older muxbridge files elsewhere (`muxbridge.ts` of muxbridge 0.1, copies
 * in `plugins/`) are removed. OpenCode 2.x loads the same folder and accepts the file as a
 * plugin that does nothing there (see `plugin/muxbridge.ts`).
 *
 * @module
 */

import { MuxError } from "../sys/errors.ts";
import type { Files } from "./files.ts";
import type { InstallDeps, Plan } from "./install.ts";
import type { OpencodeLocations } from "./locations.ts";
import { isMuxbridgePlugin, pluginVersion, readSidecar, sidecarText } from "./plugin_files.ts";
import { OWN_LINK_HINT, throughLinks } from "./through_links.ts";

/**
 * Whether a muxbridge plugin for OpenCode 1.x (any version, old places included) is installed.
 *
 * @param files The file seam.
 * @param at Where OpenCode's folders are.
 * @returns Whether one is there.
 */
export function v1Installed(files: Files, at: OpencodeLocations): boolean {
  return [at.plugin, ...at.legacyPlugins].some((path) => {
    if (path.endsWith(".json")) return false;
    const text = files.read(path);
    return text !== null && isMuxbridgePlugin(text);
  });
}

/**
 * Adds the 1.x steps to an install plan: the plugin folder, the recorded command, the plugin
 * file, and the removal of older copies.
 *
 * @param deps What install needs.
 * @param at Where OpenCode's folders are.
 * @param plan The plan to add to.
 * @throws {MuxError} `not_owned` when something that is not muxbridge's is in the way.
 */
export function planV1Install(deps: InstallDeps, at: OpencodeLocations, plan: Plan): void {
  const { files } = deps;
  const dirInfo = files.stat(at.pluginDir);
  if (dirInfo !== null && dirInfo.kind !== "dir") {
    throw new MuxError("not_owned", `Cannot install into "${at.pluginDir}": it is not a folder`, {
      hint: "Move it away, then run install again",
    });
  }
  const oldSidecar = readSidecar(files.read(at.sidecar));
  const createdDir = dirInfo === null || oldSidecar?.createdDir === true;
  if (dirInfo === null) plan.steps.push({ kind: "mkdir", path: at.pluginDir });

  const recorded = sidecarText({ command: [...deps.self], version: deps.version, createdDir });
  const currentSidecar = files.read(at.sidecar);
  if (currentSidecar === recorded) {
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
    plan.steps.push({ kind: "write", path: target, text: recorded, mode: 0o644 });
    plan.changed.push({
      path: at.sidecar,
      action: currentSidecar === null ? "write" : "replace",
      what: `the muxbridge command the plugin runs: ${deps.self.join(" ")}${note}`,
    });
  }

  const current = files.read(at.plugin);
  const what = `the OpenCode 1.x plugin ${deps.version}`;
  if (current === deps.carried.v1) {
    plan.unchanged.push({ path: at.plugin, action: "keep", what });
  } else {
    if (current !== null && !isMuxbridgePlugin(current)) {
      throw new MuxError("not_owned", `Cannot install: "${at.plugin}" is not muxbridge's plugin`, {
        hint: "Move it away, then run install again",
      });
    }
    const { target, note } = throughLinks(files, at.plugin, "write", OWN_LINK_HINT);
    plan.steps.push({ kind: "write", path: target, text: deps.carried.v1, mode: 0o644 });
    plan.changed.push({
      path: at.plugin,
      action: current === null ? "write" : "replace",
      what: (current === null
        ? what
        : `the OpenCode 1.x plugin ${pluginVersion(current) ?? "(older)"} → ${deps.version}`) +
        note,
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
}

/**
 * Adds the 1.x steps to an uninstall plan: the plugin file (and an older `muxbridge.ts` beside
 * it), the recorded command, and the plugin folder when install created it.
 *
 * @param deps Files.
 * @param at Where OpenCode's folders are.
 * @param plan The plan to add to.
 */
export function planV1Uninstall(
  deps: Pick<InstallDeps, "files">,
  at: OpencodeLocations,
  plan: Plan,
): void {
  const { files } = deps;
  const plugins = [at.plugin, ...at.legacyPlugins.filter((p) => p.startsWith(`${at.pluginDir}/`))];
  for (const path of plugins) {
    const plugin = files.read(path);
    if (plugin !== null && isMuxbridgePlugin(plugin)) {
      plan.steps.push({ kind: "remove", path });
      plan.changed.push({ path, action: "remove", what: "the OpenCode 1.x plugin" });
    } else if (path === at.plugin) {
      plan.unchanged.push({
        path,
        action: "keep",
        what: plugin === null ? "no plugin installed" : "not muxbridge's plugin: left alone",
      });
    }
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
}
