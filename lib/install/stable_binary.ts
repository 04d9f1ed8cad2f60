/**
 * The command `muxbridge install` records for the plugin when muxbridge runs from a package
 * manager's folder (`npx muxbridge install`, `bunx muxbridge install`, a global or a project's
 * `npm install`): not the binary's own path, which the package manager prunes (npx's cache),
 * keeps in a temporary folder (bunx) or replaces and removes (`npm update -g`, `npm uninstall
 * -g`) under a running OpenCode, but a copy in a private place of muxbridge's own,
 * `$XDG_DATA_HOME/muxbridge/bin/muxbridge` (else `~/.local/share/muxbridge/bin/muxbridge`). The
 * plugin and the binary it runs then stay one version until the next `muxbridge install`.
 *
 * @module
 */

import { basename, join } from "node:path";
import type { EnvLookup } from "../sys/env.ts";
import { MuxError } from "../sys/errors.ts";

/**
 * Whether a binary runs from a package manager's folder: its path goes through a
 * `node_modules` folder (npm, npx, Bun, bunx and pnpm all install there).
 *
 * @param path The binary's absolute path.
 * @returns Whether it does.
 *
 * @example
 * ```ts
 * import { inPackageFolder } from "./stable_binary.ts";
 * inPackageFolder("/home/me/.npm/_npx/0b9c/node_modules/muxbridge-linux-x64/bin/muxbridge"); // true
 * inPackageFolder("/home/me/.local/bin/muxbridge"); // false
 * ```
 */
export function inPackageFolder(path: string): boolean {
  return path.split(/[\\/]/).includes("node_modules");
}

/**
 * muxbridge's own folder for the binary it copies: `$XDG_DATA_HOME/muxbridge/bin`, else
 * `~/.local/share/muxbridge/bin`.
 *
 * @param env The environment (`XDG_DATA_HOME`, `HOME`).
 * @returns The folder.
 * @throws {MuxError} `invalid_config` when neither `XDG_DATA_HOME` nor `HOME` is set.
 *
 * @example
 * ```ts
 * import { stableBinDir } from "./stable_binary.ts";
 * stableBinDir((name) => ({ HOME: "/home/me" } as Record<string, string>)[name]);
 * // "/home/me/.local/share/muxbridge/bin"
 * ```
 */
export function stableBinDir(env: EnvLookup): string {
  const xdg = env("XDG_DATA_HOME");
  if (xdg && xdg.startsWith("/")) return join(xdg, "muxbridge", "bin");
  const home = env("HOME");
  if (!home) {
    throw new MuxError(
      "invalid_config",
      "Cannot find where to keep muxbridge's binary: neither XDG_DATA_HOME nor HOME is set",
      { hint: "Set HOME or XDG_DATA_HOME" },
    );
  }
  return join(home, ".local", "share", "muxbridge", "bin");
}

/** What install records, and the copy it makes first, if any. */
export interface StableCommand {
  /** The command to record (argv prefix). */
  command: string[];
  /** When set: copy `from` to `to` (the binary's private copy) before recording. */
  copy?: { from: string; to: string };
}

/**
 * The command `install` records for `self` (what runs this muxbridge): `self` itself, unless it
 * is a binary in a package manager's folder, which is then copied to {@linkcode stableBinDir}
 * and the copy recorded.
 *
 * @param self The command that runs this muxbridge (`self_command.ts`).
 * @param env The environment.
 * @returns The command and the copy to make.
 *
 * @example
 * ```ts
 * import { stableCommand } from "./stable_binary.ts";
 * const env = (name: string) => ({ HOME: "/home/me" } as Record<string, string>)[name];
 * stableCommand(["/tmp/bunx-0-muxbridge@latest/node_modules/muxbridge-linux-x64/bin/muxbridge"], env)
 *   .command; // ["/home/me/.local/share/muxbridge/bin/muxbridge"]
 * stableCommand(["/usr/local/bin/muxbridge"], env).command; // ["/usr/local/bin/muxbridge"]
 * ```
 */
export function stableCommand(self: readonly string[], env: EnvLookup): StableCommand {
  const [binary, ...rest] = self;
  if (binary === undefined || rest.length > 0 || !inPackageFolder(binary)) {
    return { command: [...self] };
  }
  const to = join(stableBinDir(env), basename(binary));
  return { command: [to], copy: { from: binary, to } };
}
