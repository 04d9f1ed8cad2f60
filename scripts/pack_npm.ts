/**
 * Packs muxbridge's npm packages from the binaries `scripts/build_release.ts` built: one package
 * per release target, `muxbridge-<os>-<arch>`, carrying that target's binary, and the package
 * `muxbridge`, carrying the `muxbridge` command (a small node launcher that runs the platform
 * package's binary), the OpenCode plugin for both release lines, and an optional dependency on
 * every platform package at the same version.
 *
 * Usage (`deno task pack`):
 * ```sh
 * # The binaries first: deno task release (every target into DIR/bin/<target>/).
 * deno run -A scripts/pack_npm.ts [--out DIR] [--repo OWNER/NAME]
 * ```
 * Writes `DIR/npm/muxbridge-<version>.tgz` and `DIR/npm/muxbridge-<target>-<version>.tgz` (DIR
 * defaults to dist/), staged in `DIR/npm-stage/`, and prints each tarball's size. `--repo` fills
 * in the packages' `repository` (npm's provenance checks it against the publishing workflow's
 * repository).
 *
 * One version everywhere: every package gets `deno.json`'s version, and packing stops when this
 * machine's binary does not print `muxbridge <version>` or the plugin does not name that version.
 *
 * Why the platform packages, and no install script: the package manager installs only the
 * platform package whose `os`, `cpu` (and on Linux `libc`) fields match the machine, the way
 * OpenCode ships its own binary; OpenCode installs plugins with install scripts off, so nothing
 * may depend on one. Why `./server` is the 1.x plugin: OpenCode 1.18.33 loads a plugin package's
 * `./server` export before its main entry, and OpenCode 2.x loads `./server` (else `.`) in its
 * server and `./tui` in its TUI; the 1.x file's default export, `{ id, server, setup }`, works
 * in both servers (docs/npm.md).
 *
 * @module
 */

import {
  chmodSync,
  copyFileSync,
  existsSync,
  linkSync,
  mkdirSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { dirname, join } from "node:path";
import process from "node:process";
import { parseArgs } from "node:util";
import denoConfig from "../deno.json" with { type: "json" };
import { pluginVersion } from "../lib/install/install.ts";
import { PLUGIN_V1, PLUGIN_V2_FILES } from "../lib/install/plugin_source.ts";
import { createRunner, type Runner } from "../lib/sys/exec.ts";
import { binaryName, hostTarget, type Target, TARGETS } from "./build_release.ts";
import { BACKENDS } from "../backends/mod.ts";

/** The npm name of the package that carries a target's binary: `muxbridge-<os>-<arch>`. */
export function platformPackageName(target: Target): string {
  return `muxbridge-${target.name}`;
}

/** What npm's `os`, `cpu` and `libc` fields say about a target. */
export interface Platform {
  /** node's `process.platform` values. */
  os: string[];
  /** node's `process.arch` values. */
  cpu: string[];
  /** Linux only: the C library the binary links against. */
  libc?: string[];
}

/**
 * The `os`/`cpu`/`libc` of a target. Bun's Linux targets link against glibc, so their packages
 * say `libc: ["glibc"]`: on a musl system (Alpine) npm then installs none, and the launcher
 * says so, instead of installing a binary whose loader is missing.
 *
 * @param target The release target.
 * @returns The fields.
 * @throws {RangeError} For a target name that is not `<os>-<arch>`.
 */
export function platformOf(target: Target): Platform {
  const [os, cpu] = target.name.split("-");
  const node = ({ linux: "linux", darwin: "darwin", windows: "win32" } as Record<string, string>)[
    os
  ];
  if (!node || !cpu) throw new RangeError(`Cannot map target "${target.name}" to npm's os/cpu`);
  return { os: [node], cpu: [cpu], ...(node === "linux" ? { libc: ["glibc"] } : {}) };
}

/** What the manifests share. */
export interface ManifestOptions {
  /** The version of every package (deno.json's). */
  version: string;
  /** `owner/name` on GitHub, for `repository`, when known. */
  repo?: string;
}

/** `repository`/`homepage`/`bugs` for a GitHub repository. */
function repository(repo: string | undefined): Record<string, unknown> {
  if (!repo) return {};
  return {
    repository: { type: "git", url: `git+https://github.com/${repo}.git` },
    homepage: `https://github.com/${repo}#readme`,
    bugs: { url: `https://github.com/${repo}/issues` },
  };
}

/**
 * The `package.json` of a platform package.
 *
 * @param target The release target.
 * @param options Version and repository.
 * @returns The manifest.
 *
 * @example
 * ```ts
 * import { platformManifest } from "./pack_npm.ts";
 * import { TARGETS } from "./build_release.ts";
 * platformManifest(TARGETS[0], { version: "0.1.0" }).name; // "muxbridge-linux-x64"
 * ```
 */
export function platformManifest(
  target: Target,
  options: ManifestOptions,
): Record<string, unknown> {
  const { os, cpu, libc } = platformOf(target);
  return {
    name: platformPackageName(target),
    version: options.version,
    description: `muxbridge's binary for ${target.name}${
      libc ? ` (${libc[0]})` : ""
    }; installed by the muxbridge package, which runs it`,
    ...repository(options.repo),
    os,
    cpu,
    ...(libc ? { libc } : {}),
    // Yarn's Plug'n'Play must leave an executable on disk.
    preferUnplugged: true,
  };
}

/** The package's exports: the 1.x/dual plugin file and 2.x's TUI entry. */
export const MAIN_EXPORTS: Readonly<Record<string, string>> = {
  ".": "./plugin/server.js",
  "./server": "./plugin/server.js",
  "./tui": "./plugin/tui.js",
  "./package.json": "./package.json",
};

/**
 * The `package.json` of `muxbridge`.
 *
 * @param targets Every release target (each one an optional dependency).
 * @param options Version and repository.
 * @returns The manifest.
 */
export function mainManifest(
  targets: readonly Target[],
  options: ManifestOptions,
): Record<string, unknown> {
  return {
    name: "muxbridge",
    version: options.version,
    // The backends come from the registry: only a backend's own folder names it.
    description: `Opens one terminal-multiplexer pane per OpenCode child session (${
      BACKENDS.map((b) => b.title).join(", ")
    }): the muxbridge command and its OpenCode plugin (1.x and 2.x)`,
    keywords: ["opencode", "opencode-plugin", ...BACKENDS.map((b) => b.name), "subagents"],
    ...repository(options.repo),
    type: "module",
    bin: { muxbridge: "bin/muxbridge.js" },
    main: MAIN_EXPORTS["."],
    exports: MAIN_EXPORTS,
    engines: { node: ">=18" },
    optionalDependencies: Object.fromEntries(
      targets.map((t) => [platformPackageName(t), options.version]),
    ),
  };
}

/** The OpenCode plugin files of the `muxbridge` package. */
export interface PackagePlugin {
  /** `plugin/server.js`: OpenCode 1.x's plugin, whose `{ id, server, setup }` 2.x's server takes. */
  server: string;
  /** `plugin/tui.js`: OpenCode 2.x's TUI entry. */
  tui: string;
}

/**
 * The plugin files for the `muxbridge` package: the bundles the binary carries for `muxbridge
 * install` (`lib/install/plugin_source.ts`, generated by `scripts/gen_plugin_source.ts` from
 * `plugin/` and checked fresh by a test), so `npm install muxbridge` and `muxbridge install`
 * put the same bytes in place: the OpenCode 1.x file (`PLUGIN_V1`) and the 2.x folder's
 * `tui.js`.
 *
 * @returns The files' texts.
 */
export function packagePlugin(): PackagePlugin {
  return { server: PLUGIN_V1, tui: PLUGIN_V2_FILES["tui.js"] };
}

/** The README of a platform package. */
function platformReadme(target: Target, version: string): string {
  return [
    `# ${platformPackageName(target)}`,
    "",
    `muxbridge ${version}'s binary for ${target.name}. Install the package \`muxbridge\`, not`,
    "this one: it depends on the package for each platform and runs the one npm installed.",
    "",
  ].join("\n");
}

/** One packed tarball, as `npm pack --json` describes it. */
export interface Packed {
  /** The file name. */
  filename: string;
  /** The tarball's size in bytes (the download). */
  size: number;
  /** The size of its files, unpacked. */
  unpackedSize: number;
}

/**
 * The argv that packs a staged package folder into `dest`.
 *
 * @param dir The package folder.
 * @param dest Where the tarball goes.
 * @returns The argv.
 */
export function npmPackArgv(dir: string, dest: string): string[] {
  return ["npm", "pack", dir, "--pack-destination", dest, "--json", "--ignore-scripts"];
}

/** A size in MB with one decimal. */
const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;

/**
 * The size table the script prints.
 *
 * @param packed The tarballs.
 * @returns Aligned lines.
 */
export function sizeTable(packed: readonly Packed[]): string {
  const rows = [
    ["package", "download", "unpacked"],
    ...packed.map((p) => [p.filename, mb(p.size), mb(p.unpackedSize)]),
  ];
  const width = (i: number) => Math.max(...rows.map((r) => r[i].length));
  return rows.map((r) =>
    `${r[0].padEnd(width(0))}  ${r[1].padStart(width(1))}  ${r[2].padStart(width(2))}\n`
  ).join("");
}

const USAGE = "Usage: pack_npm.ts [--out DIR] [--repo OWNER/NAME]";
const say = (text: string) => process.stderr.write(`pack_npm: ${text}\n`);
const ROOT = join(dirname(new URL(import.meta.url).pathname), "..");

/** Puts a binary into a package folder: a hard link when it can, else a copy. */
function placeBinary(from: string, to: string): void {
  mkdirSync(dirname(to), { recursive: true });
  try {
    linkSync(from, to);
  } catch {
    copyFileSync(from, to);
  }
  chmodSync(to, 0o755);
}

/** Packs one folder; the tarball's description, or null (the failure was printed). */
async function pack(run: Runner, dir: string, dest: string): Promise<Packed | null> {
  const argv = npmPackArgv(dir, dest);
  say(argv.join(" "));
  // gzip of a 100 MB binary takes a while on a busy machine.
  const r = await run(argv, { timeoutMs: 15 * 60_000 }).catch((err) => ({
    code: -1,
    stdout: "",
    stderr: String(err),
  }));
  if (r.code !== 0) {
    process.stderr.write(r.stdout + r.stderr);
    return null;
  }
  const [info] = JSON.parse(r.stdout) as Packed[];
  return { filename: info.filename, size: info.size, unpackedSize: info.unpackedSize };
}

async function main(argv: string[]): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      options: { out: { type: "string" }, repo: { type: "string" } },
    }));
  } catch (err) {
    say(`${(err as Error).message}\n${USAGE}`);
    return 2;
  }
  if (
    values.repo !== undefined && !/^[A-Za-z0-9][A-Za-z0-9-]{0,38}\/[\w.-]{1,100}$/.test(values.repo)
  ) {
    say(`--repo "${values.repo}": expected OWNER/NAME`);
    return 2;
  }
  const version = denoConfig.version;
  const out = values.out ?? join(ROOT, "dist");
  const binary = (t: Target) => join(out, "bin", t.name, binaryName(t));
  const missing = TARGETS.filter((t) => !existsSync(binary(t)));
  if (missing.length > 0) {
    say(
      `missing ${missing.map(binary).join(", ")}: build every target first ` +
        "(deno task release)",
    );
    return 1;
  }
  const run = createRunner();
  const host = hostTarget();
  if (host) {
    const r = await run([binary(host), "--version"], { timeoutMs: 60_000 }).catch(() => null);
    if (r?.stdout.trim() !== `muxbridge ${version}`) {
      say(
        `${binary(host)} --version printed ${
          JSON.stringify(r?.stdout)
        }, not "muxbridge ${version}"`,
      );
      return 1;
    }
  }
  const plugin = packagePlugin();
  for (const [name, text] of Object.entries(plugin)) {
    if (pluginVersion(text) !== version) {
      say(`the plugin's ${name} entry is version ${pluginVersion(text)}, not ${version}`);
      return 1;
    }
  }

  const options = { version, ...(values.repo ? { repo: values.repo } : {}) };
  const stage = join(out, "npm-stage");
  const dest = join(out, "npm");
  // Nothing of an earlier run may be packed or uploaded.
  rmSync(stage, { recursive: true, force: true });
  rmSync(dest, { recursive: true, force: true });
  mkdirSync(dest, { recursive: true });
  const json = (v: unknown) => `${JSON.stringify(v, null, 2)}\n`;

  const dirs: string[] = [];
  for (const target of TARGETS) {
    const dir = join(stage, platformPackageName(target));
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "package.json"), json(platformManifest(target, options)));
    writeFileSync(join(dir, "README.md"), platformReadme(target, version));
    placeBinary(binary(target), join(dir, "bin", binaryName(target)));
    dirs.push(dir);
  }
  const main = join(stage, "muxbridge");
  const source = join(ROOT, "npm", "muxbridge");
  mkdirSync(join(main, "bin"), { recursive: true });
  mkdirSync(join(main, "plugin"), { recursive: true });
  writeFileSync(join(main, "package.json"), json(mainManifest(TARGETS, options)));
  copyFileSync(join(source, "README.md"), join(main, "README.md"));
  for (const file of readdirSync(join(source, "bin"))) {
    copyFileSync(join(source, "bin", file), join(main, "bin", file));
  }
  chmodSync(join(main, "bin", "muxbridge.js"), 0o755);
  writeFileSync(join(main, "plugin", "server.js"), plugin.server);
  writeFileSync(join(main, "plugin", "tui.js"), plugin.tui);
  dirs.push(main);

  const packed: Packed[] = [];
  for (const dir of dirs) {
    const p = await pack(run, dir, dest);
    if (!p) return 1;
    packed.push(p);
  }
  process.stdout.write(sizeTable(packed));
  say(`wrote ${packed.length} tarballs to ${dest}`);
  return 0;
}

if (import.meta.main) {
  process.exit(await main(process.argv.slice(2)));
}
