/**
 * Where OpenCode looks for a user's plugins and config (see `docs/opencode.md`). OpenCode 1.x
 * (1.18.33): its global config folder `$XDG_CONFIG_HOME/opencode` (else `~/.config/opencode`)
 * and, when set, `$OPENCODE_CONFIG_DIR` too; every `*.ts` / `*.js` file directly in a
 * `plugin/` (or `plugins/`) folder of either is loaded as a plugin, and `opencode.json`,
 * `opencode.jsonc` and the older `config.json` there may list more in `plugin`. OpenCode 2.x
 * (2.1.2): the same folder (`$OPENCODE_CONFIG_DIR` replaces it when set), whose `plugin/` and
 * `plugins/` entries are loaded too — `.ts`/`.js` files, and folders (or links to folders)
 * with a `server` entry and optionally a `tui` entry. muxbridge installs into
 * `$OPENCODE_CONFIG_DIR` when it is set (the user chose it), else into the global folder.
 *
 * @module
 */

import { join } from "node:path";
import type { EnvLookup } from "../sys/env.ts";
import { MuxError } from "../sys/errors.ts";

/** The paths muxbridge's OpenCode integration uses for one user. */
export interface OpencodeLocations {
  /** OpenCode's global config folder. */
  configDir: string;
  /** The plugin folder OpenCode loads every file of. */
  pluginDir: string;
  /** The installed OpenCode 1.x plugin: `<pluginDir>/muxbridge.js`. */
  plugin: string;
  /** What `install` records beside it: `<pluginDir>/muxbridge.json`. */
  sidecar: string;
  /**
   * Where an older muxbridge plugin (and its sidecar) may sit: `<pluginDir>/muxbridge.ts` (what
   * muxbridge 0.1 installed), other places OpenCode also loads (`plugins/`), and the global
   * folder when `$OPENCODE_CONFIG_DIR` is used instead.
   */
  legacyPlugins: string[];
  /** OpenCode 2.x's plugin folder: `<configDir>/plugins`. */
  v2PluginsDir: string;
  /** The installed OpenCode 2.x plugin: `<configDir>/plugins/muxbridge`, a link. */
  v2Link: string;
  /** Where the link's versioned folders live: `<configDir>/muxbridge` (no OpenCode loads it). */
  v2Store: string;
  /** The user config files that may list plugins, in the order OpenCode reads them. */
  configFiles: string[];
}

/**
 * OpenCode's config folder and the plugin paths in it, for this environment.
 *
 * @param env The environment (`OPENCODE_CONFIG_DIR`, `XDG_CONFIG_HOME`, `HOME`).
 * @returns The locations.
 * @throws {MuxError} `invalid_config` when neither `OPENCODE_CONFIG_DIR`, `XDG_CONFIG_HOME`
 *   nor `HOME` is set.
 *
 * @example
 * ```ts
 * import { opencodeLocations } from "./locations.ts";
 * opencodeLocations((name) => ({ HOME: "/home/me" } as Record<string, string>)[name]).plugin;
 * // "/home/me/.config/opencode/plugin/muxbridge.js"
 * ```
 */
export function opencodeLocations(env: EnvLookup): OpencodeLocations {
  const chosen = env("OPENCODE_CONFIG_DIR");
  const global = chosen ? globalOrNull(env) : configHome(env);
  const base = chosen || global!;
  const pluginDir = join(base, "plugin");
  const others = [join(base, "plugins")];
  if (chosen && global && global !== chosen) {
    others.push(join(global, "plugin"), join(global, "plugins"));
  }
  return {
    configDir: base,
    pluginDir,
    plugin: join(pluginDir, "muxbridge.js"),
    sidecar: join(pluginDir, "muxbridge.json"),
    legacyPlugins: [
      join(pluginDir, "muxbridge.ts"),
      ...others.flatMap((d) =>
        ["muxbridge.ts", "muxbridge.js", "muxbridge.json"].map((f) => join(d, f))
      ),
    ],
    v2PluginsDir: join(base, "plugins"),
    v2Link: join(base, "plugins", "muxbridge"),
    v2Store: join(base, "muxbridge"),
    configFiles: ["config.json", "opencode.json", "opencode.jsonc"].map((f) => join(base, f)),
  };
}

function globalOrNull(env: EnvLookup): string | null {
  try {
    return configHome(env);
  } catch {
    return null;
  }
}

function configHome(env: EnvLookup): string {
  const xdg = env("XDG_CONFIG_HOME");
  if (xdg) return join(xdg, "opencode");
  const home = env("HOME");
  if (!home) {
    throw new MuxError("invalid_config", "Cannot find OpenCode's config folder: HOME is not set", {
      hint: "Set HOME, XDG_CONFIG_HOME or OPENCODE_CONFIG_DIR",
    });
  }
  return join(home, ".config", "opencode");
}
