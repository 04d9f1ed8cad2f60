// @ts-check
/**
 * The `muxbridge` command of the npm package `muxbridge`: finds muxbridge's binary in the
 * platform package npm installed with it and runs it with the same arguments.
 *
 * The binary comes in one npm package per platform, `muxbridge-<os>-<arch>`, each an optional
 * dependency of `muxbridge` whose `os`, `cpu` (and on Linux `libc`) fields let the package
 * manager install only the one this machine can run (OpenCode ships its binary the same way).
 * No install script is involved: OpenCode installs plugins with scripts off, and so do many
 * users.
 *
 * The binary runs as a child of this node process with stdio inherited. SIGINT, SIGTERM, SIGHUP
 * and SIGQUIT sent to this process are passed on to it; its exit code becomes this process's,
 * and when a signal ended it, this process ends by the same signal. A missing platform package
 * is a message naming it and how to install it, and exit code 3 (muxbridge's code for a problem
 * of the environment).
 *
 * Plain JavaScript for node (no build step), checked by `deno check`.
 *
 * @module
 */

import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { constants } from "node:os";
import { dirname, join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";

/** The signals passed on to the binary (SIGUSR1 starts node's inspector: not taken). */
export const FORWARDED_SIGNALS = /** @type {const} */ (["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT"]);

/** muxbridge's exit code for a problem of the environment (lib/sys/errors.ts). */
export const EXIT_ENVIRONMENT = 3;

/** The platforms muxbridge's npm packages cover, as `<os>-<arch>`. */
export const PLATFORMS = ["linux-x64", "linux-arm64", "darwin-x64", "darwin-arm64", "windows-x64"];

/**
 * The platform package for a machine: `muxbridge-<os>-<arch>`, with node's `process.platform`
 * `win32` named `windows` (as the release archives are).
 *
 * @param {string} platform `process.platform`.
 * @param {string} arch `process.arch`.
 * @returns {{ name: string, binary: string, supported: boolean }} The package's name, the
 *   binary's path inside it, and whether muxbridge publishes such a package.
 *
 * @example
 * ```ts
 * import { platformPackage } from "./launcher.js";
 * platformPackage("linux", "x64");
 * // { name: "muxbridge-linux-x64", binary: "bin/muxbridge", supported: true }
 * ```
 */
export function platformPackage(platform, arch) {
  const os = platform === "win32" ? "windows" : platform;
  const id = `${os}-${arch}`;
  return {
    name: `muxbridge-${id}`,
    binary: os === "windows" ? "bin/muxbridge.exe" : "bin/muxbridge",
    supported: PLATFORMS.includes(id),
  };
}

/**
 * Whether this Linux runs musl rather than glibc (node reports the glibc version it runs
 * with, and none under musl).
 *
 * @returns {boolean}
 */
export function isMusl() {
  if (process.platform !== "linux") return false;
  try {
    const report = /** @type {{ header?: { glibcVersionRuntime?: string } }} */ (
      process.report?.getReport()
    );
    return report?.header?.glibcVersionRuntime === undefined;
  } catch {
    return false;
  }
}

/**
 * Finds the binary of the platform package installed with the package at `root`, as node
 * resolves a dependency from there (nested in `root/node_modules`, or beside it).
 *
 * @param {string} root The `muxbridge` package's folder.
 * @param {{ name: string, binary: string }} pkg The platform package.
 * @returns {string | null} The binary's path, or null when the package is not installed.
 */
export function findBinary(root, pkg) {
  let manifest;
  try {
    manifest = createRequire(join(root, "package.json")).resolve(`${pkg.name}/package.json`);
  } catch {
    return null;
  }
  const binary = join(dirname(manifest), pkg.binary);
  return existsSync(binary) ? binary : null;
}

/**
 * The message for a machine whose platform package is missing.
 *
 * @param {{ name: string, supported: boolean }} pkg The platform package.
 * @param {string} version The `muxbridge` package's version.
 * @param {{ platform: string, arch: string, musl: boolean }} machine What this machine is.
 * @returns {string} Lines for stderr.
 */
export function missingMessage(pkg, version, machine) {
  const what = `${machine.platform} ${machine.arch}${machine.musl ? " (musl)" : ""}`;
  if (!pkg.supported || machine.musl) {
    return [
      `muxbridge: no muxbridge ${version} binary is published for this machine (${what}).`,
      `The npm packages cover ${PLATFORMS.join(", ")}${
        machine.platform === "linux" ? " (Linux with glibc)" : ""
      }.`,
      "Build it from source instead: https://www.npmjs.com/package/muxbridge#from-source",
      "",
    ].join("\n");
  }
  return [
    `muxbridge: the binary for this machine (${what}) is missing: it comes in the npm package`,
    `"${pkg.name}", an optional dependency of muxbridge that was not installed (optional`,
    "dependencies were omitted: --omit=optional, --no-optional or omit=optional in .npmrc; or",
    "your registry lacks it). Install muxbridge again with them, for example:",
    `  npm install -g muxbridge@${version} --include=optional`,
    `or add the package where muxbridge is installed: npm install ${pkg.name}@${version}`,
    "",
  ].join("\n");
}

/**
 * Runs `binary` with `args` as a child with stdio inherited, passes on the signals this
 * process receives, and ends this process as the child ended.
 *
 * @param {string} binary The program.
 * @param {string[]} args Its arguments.
 * @returns {void} This process exits when the child does.
 */
export function runBinary(binary, args) {
  const child = spawn(binary, args, { stdio: "inherit" });
  /** @param {NodeJS.Signals} signal */
  const forward = (signal) => {
    try {
      child.kill(signal);
    } catch { /* already gone */ }
  };
  for (const signal of FORWARDED_SIGNALS) process.on(signal, forward);
  child.on("error", (err) => {
    const code = /** @type {NodeJS.ErrnoException} */ (err).code;
    process.stderr.write(
      `muxbridge: cannot run ${binary}: ${err.message}` +
        (code === "ENOENT" && existsSync(binary)
          ? " (the file is there: its loader is missing, so it was built for another system)"
          : "") +
        "\n",
    );
    process.exit(EXIT_ENVIRONMENT);
  });
  child.on("exit", (code, signal) => {
    for (const s of FORWARDED_SIGNALS) process.removeListener(s, forward);
    if (signal === null) return process.exit(code ?? 1);
    // End by the same signal, so that whoever waits for this process sees what happened.
    try {
      process.kill(process.pid, signal);
    } catch { /* cannot signal itself */ }
    process.exit(128 + (constants.signals[signal] ?? 0));
  });
}

/**
 * The `muxbridge` command: the platform package's binary, run with this process's arguments.
 *
 * @returns {void}
 */
export function main() {
  const root = dirname(dirname(fileURLToPath(import.meta.url)));
  const pkg = platformPackage(process.platform, process.arch);
  const binary = pkg.supported ? findBinary(root, pkg) : null;
  if (binary === null) {
    const version = String(JSON.parse(readFileSync(join(root, "package.json"), "utf8")).version);
    process.stderr.write(
      missingMessage(pkg, version, {
        platform: process.platform,
        arch: process.arch,
        musl: isMusl(),
      }),
    );
    process.exit(EXIT_ENVIRONMENT);
  }
  runBinary(binary, process.argv.slice(2));
}
