/**
 * The binary of the npm package this plugin file came in. When OpenCode installs the npm
 * package `muxbridge` itself (1.x: `"plugin": ["muxbridge"]` in `opencode.json`; 2.x: `opencode
 * plugin add muxbridge`), the plugin files sit in `<muxbridge>/plugin/` and the package manager
 * has put this platform's package, `muxbridge-<os>-<arch>`, in `<muxbridge>/node_modules/` or
 * beside `<muxbridge>` in the same `node_modules/` (npm's, Bun's and pnpm's layouts). Its
 * `bin/muxbridge` is then the binary to run: no `muxbridge install`, nothing on PATH.
 *
 * Only those two places count, never a package found further up the tree: the binary must be
 * the one installed with this plugin. The caller still applies the trust rule (`trust.ts`)
 * before it runs it, as for any recorded binary.
 *
 * @module
 */

import { existsSync, readFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import process from "node:process";

/** The binary found, and where it came from. */
export interface PackageBinary {
  /** The binary's absolute path. */
  path: string;
  /** The platform package's name (`muxbridge-linux-x64`). */
  name: string;
  /** The platform package's version, when its `package.json` says. */
  version?: string;
}

/**
 * The platform package for a machine, as muxbridge publishes them: `muxbridge-<os>-<arch>`
 * with `win32` named `windows`; null for a machine muxbridge publishes no binary for.
 *
 * @param platform `process.platform`.
 * @param arch `process.arch`.
 * @returns The package's name and the binary's file name, or null.
 *
 * @example
 * ```ts
 * import { platformPackage } from "./package_binary.ts";
 * platformPackage("win32", "x64"); // { name: "muxbridge-windows-x64", file: "muxbridge.exe" }
 * platformPackage("freebsd", "x64"); // null
 * ```
 */
export function platformPackage(
  platform: string,
  arch: string,
): { name: string; file: string } | null {
  const os = platform === "win32" ? "windows" : platform;
  if (
    !["linux", "darwin", "windows"].includes(os) ||
    !["x64", "arm64"].includes(arch)
  ) {
    return null;
  }
  if (os === "windows" && arch !== "x64") return null;
  return {
    name: `muxbridge-${os}-${arch}`,
    file: os === "windows" ? "muxbridge.exe" : "muxbridge",
  };
}

/** A package's `package.json`, or null. */
function manifest(dir: string): Record<string, unknown> | null {
  try {
    const data = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
    return typeof data === "object" && data !== null ? data : null;
  } catch {
    return null;
  }
}

/**
 * Finds the binary of the platform package installed with the `muxbridge` package that holds
 * `here`.
 *
 * @param here The folder of the loaded plugin file (`<muxbridge>/plugin` in the npm package).
 * @param platform `process.platform`. @default this process's
 * @param arch `process.arch`. @default this process's
 * @returns The binary, or null when `here` is not in the npm package `muxbridge` or no platform
 *   package for this machine is installed with it.
 */
export function packageBinary(
  here: string,
  platform: string = process.platform,
  arch: string = process.arch,
): PackageBinary | null {
  const root = dirname(here);
  if (manifest(root)?.name !== "muxbridge") return null;
  const pkg = platformPackage(platform, arch);
  if (!pkg) return null;
  const parent = dirname(root);
  const places = [join(root, "node_modules", pkg.name)];
  if (basename(parent) === "node_modules") places.push(join(parent, pkg.name));
  for (const dir of places) {
    const path = join(dir, "bin", pkg.file);
    const data = manifest(dir);
    if (data?.name !== pkg.name || !existsSync(path)) continue;
    const version = typeof data.version === "string" ? data.version : undefined;
    return { path, name: pkg.name, ...(version ? { version } : {}) };
  }
  return null;
}
