/**
 * Where OpenCode 1.18.33 looks for a user's plugins and config (see `docs/opencode.md`): its
 * global config folder is `$OPENCODE_CONFIG_DIR` when set, else `$XDG_CONFIG_HOME/opencode`,
 * else `~/.config/opencode`; every `*.ts` / `*.js` file directly in its `plugin/` (or
 * `plugins/`) folder is loaded as a plugin, and `opencode.json`, `opencode.jsonc` and the older
 * `config.json` there may list more in `plugin`.
 *
 * @module
 */

import { join } from "node:path";
import type { EnvLookup } from "../identity.ts";
import { MuxError } from "../sys/errors.ts";

/** The paths muxbridge's OpenCode integration uses for one user. */
export interface OpencodeLocations {
  /** OpenCode's global config folder. */
  configDir: string;
  /** The plugin folder OpenCode loads every file of. */
  pluginDir: string;
  /** The installed plugin: `<pluginDir>/muxbridge.ts`. */
  plugin: string;
  /** What `install` records beside it: `<pluginDir>/muxbridge.json`. */
  sidecar: string;
  /** Other places an older muxbridge plugin file may sit (`plugins/muxbridge.ts`). */
  legacyPlugins: string[];
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
 * // "/home/me/.config/opencode/plugin/muxbridge.ts"
 * ```
 */
export function opencodeLocations(env: EnvLookup): OpencodeLocations {
  const base = env("OPENCODE_CONFIG_DIR") || configHome(env);
  const pluginDir = join(base, "plugin");
  return {
    configDir: base,
    pluginDir,
    plugin: join(pluginDir, "muxbridge.ts"),
    sidecar: join(pluginDir, "muxbridge.json"),
    legacyPlugins: [join(base, "plugins", "muxbridge.ts"), join(base, "plugins", "muxbridge.js")],
    configFiles: ["config.json", "opencode.json", "opencode.jsonc"].map((f) => join(base, f)),
  };
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
