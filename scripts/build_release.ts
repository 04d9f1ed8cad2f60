/**
 * Builds muxbridge's binaries with Bun, the one compiler the tests run, and packs a release:
 * one `.tar.xz` archive per target, the installer with its repository written in, and the
 * `SHA256SUMS` file that lists them.
 *
 * Bun is the only compiler so that a release ships the build the suite ran: `deno task
 * test:binary` builds this machine's binary through `--host` below (the same
 * {@linkcode compileArgv}), and the release workflow runs its end-to-end suites against the
 * binary unpacked from the linux-x64 archive this script wrote. (`deno compile` was dropped: it
 * downloads its runtime for each target, which no machine of ours could, so its binaries were
 * never run before being shipped.)
 *
 * Usage:
 * ```sh
 * # This machine's binary only, into DIR/muxbridge (default dist/); `deno task build:bun`.
 * deno run -A scripts/build_release.ts --host [--out DIR]
 * # A release; `deno task release`. Each target (default: all five; `host` = this machine's)
 * # is built into DIR/bin/<target>/muxbridge[.exe] and packed into
 * # DIR/release/muxbridge-<target>.tar.xz, listed in DIR/release/SHA256SUMS.
 * deno run -A scripts/build_release.ts [--target NAME|host]... [--out DIR] [--tag vX.Y.Z]
 *   [--repo OWNER/NAME] [--skip-build] [--readme]
 * ```
 * - `--tag` refuses to build when the tag is not `v` + the version in `deno.json`.
 * - `--repo` adds `install.sh` with that GitHub repository as its default (and to SHA256SUMS).
 * - `--skip-build` packs the binaries already in DIR/bin (a re-pack; the tests pack a stand-in).
 * - `--readme` rewrites the `release-sizes` block of docs/building.md (with `--target host` alone).
 *
 * This machine's target is built offline (Bun's runtime ships in the npm package `bun`); any
 * other target makes Bun fetch `@oven/bun-<os>-<arch>` from the npm registry once. Packing
 * needs GNU tar and xz. Every archive holds one file, the binary, owned by 0:0, mode 0755,
 * dated from `SOURCE_DATE_EPOCH` or else the last commit, so a rebuild of the same commit packs
 * the same bytes around the same binary. The binary built for this machine must print
 * `muxbridge <version>`, both as built and as unpacked from its archive; the linux-x64 archive
 * must stay within {@linkcode MAX_ARCHIVE_BYTES}.
 *
 * @module
 */

import { createHash } from "node:crypto";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import process from "node:process";
import { parseArgs } from "node:util";
import denoConfig from "../deno.json" with { type: "json" };
import { createRunner, type Runner } from "../lib/sys/exec.ts";
import { writeDocBlock } from "./_readme_blocks.ts";

/** One release target. */
export interface Target {
  /** `<os>-<arch>`, as `scripts/install.sh` derives it from `uname`. */
  name: string;
  /** `bun build --compile --target` value. */
  bun: string;
  /** File-name suffix of the executable. */
  suffix: "" | ".exe";
}

/** The five release targets. */
export const TARGETS: readonly Target[] = [
  { name: "linux-x64", bun: "bun-linux-x64", suffix: "" },
  { name: "linux-arm64", bun: "bun-linux-arm64", suffix: "" },
  { name: "darwin-x64", bun: "bun-darwin-x64", suffix: "" },
  { name: "darwin-arm64", bun: "bun-darwin-arm64", suffix: "" },
  { name: "windows-x64", bun: "bun-windows-x64", suffix: ".exe" },
];

/**
 * The largest linux-x64 archive a release may ship (issue 24: a download of at most 45 MB).
 * With xz's default preset the archive was about 40 MB (docs/building.md).
 */
export const MAX_ARCHIVE_BYTES = 45e6;

/** The xz settings of every archive: the default preset, as many threads as there are CPUs. */
export const XZ_FLAGS: readonly string[] = ["-6", "--threads=0"];

/**
 * The command that measures this machine's archive and writes docs/building.md's `release-sizes`
 * block (its marker names it; `tests/docs/readme_numbers_test.ts` checks it is this script's).
 */
export const README_COMMAND = "./node_modules/.bin/deno task release --target host --readme";

/**
 * Bun's JSC bytecode (`--bytecode`; ESM needs `--format=esm`) trades ~3 MB for a faster start
 * (docs/performance.md, "Binary size and start-up"). Only for the host: bytecode cross-compiled for another
 * platform has segfaulted on launch (oven-sh/bun#18416, #24144), and a cross-built binary cannot
 * be run here to prove otherwise.
 */
export const BUN_HOST_FLAGS: readonly string[] = ["--bytecode", "--format=esm"];

/**
 * The JIT policy every Bun build starts with: JavaScriptCore's tier-up thresholds times 100
 * (`--compile-jit-policy`, see `Bun.unsafe.setJITPolicy`). Start-up builds about 490 zod schema
 * objects, which is enough run-once code to make JavaScriptCore compile zod's constructors
 * (baseline and DFG) and page its compilers in: about 5 MiB of an idle bridge's memory
 * (`bench/RESULTS.md`). With the policy, start-up stays in the interpreter; code that keeps
 * running (a busy bridge's event handling) is still compiled, later. The policy is kept for the
 * whole run, not reset once the bridge is up: a burst of 50 children then opened faster and left
 * the bridge 11 MiB smaller than with the reset, while noise lines still went through at about
 * the bare runtime's rate (`bench/RESULTS.md`).
 */
export const BUN_JIT_POLICY = "--compile-jit-policy=100";

/** The executable's file name for a target: `muxbridge` or `muxbridge.exe`. */
export function binaryName(target: Target): string {
  return `muxbridge${target.suffix}`;
}

/** The release archive's file name for a target: `muxbridge-<os>-<arch>.tar.xz`. */
export function archiveName(target: Target): string {
  return `muxbridge-${target.name}.tar.xz`;
}

/** What {@linkcode compileArgv} builds. */
export interface CompileJob {
  /** The target, or `null` for the host. */
  target: Target | null;
  /** The host's target (Bun adds bytecode only when building for it). */
  host: Target | null;
  /** The entry file (`main.ts`). */
  entry: string;
  /** The binary to write. */
  output: string;
  /** The `bun` executable. */
  bun: string;
}

/**
 * The argv that compiles a job with `bun build --compile`.
 *
 * @param job What to build, for where.
 * @returns The argv, program first.
 */
export function compileArgv(job: CompileJob): string[] {
  const { target, host, entry, output, bun } = job;
  return [
    bun,
    "build",
    "--compile",
    BUN_JIT_POLICY,
    ...(target === null || target.name === host?.name ? BUN_HOST_FLAGS : []),
    ...(target ? [`--target=${target.bun}`] : []),
    entry,
    "--outfile",
    output,
  ];
}

/**
 * The GNU tar argv that packs one file, with fixed owner, mode and date (uncompressed: xz runs
 * next, see {@linkcode xzArgv}).
 *
 * @param dir The directory holding the file.
 * @param member The file's name, as the archive stores it.
 * @param output The `.tar` to write.
 * @param mtime The date stored for the file, in seconds since the epoch.
 * @returns The argv.
 */
export function tarArgv(dir: string, member: string, output: string, mtime: number): string[] {
  return [
    "tar",
    "--create",
    "--format=ustar",
    `--file=${output}`,
    `--directory=${dir}`,
    "--owner=0",
    "--group=0",
    "--numeric-owner",
    "--mode=u=rwx,go=rx",
    `--mtime=@${mtime}`,
    "--",
    member,
  ];
}

/**
 * The xz argv that compresses a `.tar` into `<file>.xz` in place (the `.tar` goes).
 *
 * @param tarFile The archive to compress.
 * @returns The argv.
 */
export function xzArgv(tarFile: string): string[] {
  return ["xz", "--compress", "--force", ...XZ_FLAGS, "--", tarFile];
}

/**
 * The SHA-256 of some bytes, in hex.
 *
 * @param bytes The content.
 * @returns 64 hex digits.
 */
export function sha256Hex(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/**
 * The SHA256SUMS text for some files, in the format `sha256sum -c` and `shasum -a 256 -c` read:
 * one `<hex>  <name>` line per file, sorted by name.
 *
 * @param files Name → content.
 * @returns The file's text.
 */
export function sha256sums(files: ReadonlyMap<string, Uint8Array>): string {
  return [...files.keys()].sort().map((name) => `${sha256Hex(files.get(name)!)}  ${name}\n`)
    .join("");
}

/**
 * The installer as a release attaches it: `scripts/install.sh` with `repo` as its default
 * repository (its `DEFAULT_REPO=""` line filled in).
 *
 * @param source The text of `scripts/install.sh`.
 * @param repo `owner/name` on GitHub.
 * @returns The installer's text.
 * @throws {RangeError} When `repo` is not `owner/name`, or the source lacks the line.
 */
export function installerFor(source: string, repo: string): string {
  if (!/^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})\/[A-Za-z0-9._-]{1,100}$/.test(repo)) {
    throw new RangeError(`Cannot use repository "${repo}": expected owner/name`);
  }
  const line = /^DEFAULT_REPO=""$/m;
  if (!line.test(source)) throw new RangeError('Cannot find the line DEFAULT_REPO="" to fill in');
  return source.replace(line, `DEFAULT_REPO="${repo}"`);
}

/**
 * Finds the target of the machine running this script.
 *
 * @returns The host target, or `null` when it is not one of the five.
 */
export function hostTarget(): Target | null {
  const os = process.platform === "win32" ? "windows" : process.platform;
  const arch = process.arch === "x64" ? "x64" : process.arch === "arm64" ? "arm64" : process.arch;
  return TARGETS.find((t) => t.name === `${os}-${arch}`) ?? null;
}

const USAGE = "Usage: build_release.ts --host [--out DIR]\n" +
  "       build_release.ts [--target NAME|host]... [--out DIR] [--tag vX.Y.Z] [--repo OWNER/NAME]" +
  " [--skip-build] [--readme]";

const say = (text: string) => process.stderr.write(`build_release: ${text}\n`);

/** A size in MB with one decimal, as the docs print it. */
const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;

/** Runs a step; on failure prints what it printed and returns false. */
async function step(run: Runner, argv: string[], timeoutMs: number, cwd?: string) {
  say(argv.join(" "));
  const r = await run(argv, { timeoutMs, ...(cwd ? { cwd } : {}) }).catch((err) => ({
    code: -1,
    stdout: "",
    stderr: String(err),
  }));
  if (r.code !== 0) process.stderr.write(r.stdout + r.stderr);
  return r.code === 0 ? r : null;
}

/** The date stored in archives: SOURCE_DATE_EPOCH, else the last commit's, else now. */
async function archiveDate(run: Runner, root: string): Promise<number> {
  const fromEnv = process.env.SOURCE_DATE_EPOCH;
  if (fromEnv !== undefined && /^\d+$/.test(fromEnv)) return Number(fromEnv);
  const r = await run(["git", "log", "-1", "--format=%ct"], { timeoutMs: 30_000, cwd: root })
    .catch(() => null);
  const commit = r?.code === 0 ? r.stdout.trim() : "";
  return /^\d+$/.test(commit) ? Number(commit) : Math.floor(Date.now() / 1000);
}

/** Checks that a binary prints `muxbridge <version>`. */
async function checkVersion(run: Runner, binary: string, version: string): Promise<boolean> {
  const r = await run([binary, "--version"], { timeoutMs: 60_000 }).catch((err) => ({
    code: -1,
    stdout: "",
    stderr: String(err),
  }));
  if (r.code === 0 && r.stdout.trim() === `muxbridge ${version}`) return true;
  say(
    `${binary} --version printed ${JSON.stringify(r.stdout)} (exit ${r.code}), expected ` +
      `"muxbridge ${version}"\n${r.stderr}`,
  );
  return false;
}

async function main(argv: string[]): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      options: {
        host: { type: "boolean", default: false },
        target: { type: "string", multiple: true },
        out: { type: "string" },
        tag: { type: "string" },
        repo: { type: "string" },
        "skip-build": { type: "boolean", default: false },
        readme: { type: "boolean", default: false },
      },
    }));
  } catch (err) {
    say(`${(err as Error).message}\n${USAGE}`);
    return 2;
  }
  const version = denoConfig.version;
  if (values.tag !== undefined && values.tag !== `v${version}`) {
    say(
      `tag "${values.tag}" does not match deno.json version "${version}"; bump deno.json or retag`,
    );
    return 1;
  }
  const root = join(dirname(new URL(import.meta.url).pathname), "..");
  const out = values.out ?? join(root, "dist");
  const entry = join(root, "main.ts");
  const bun = existsSync(join(root, "node_modules/.bin/bun"))
    ? join(root, "node_modules/.bin/bun")
    : "bun";
  const run = createRunner();
  const host = hostTarget();

  if (values.host) {
    if (values.target || values.repo || values.readme || values["skip-build"]) {
      say(`--host builds this machine's binary alone\n${USAGE}`);
      return 2;
    }
    const output = join(out, "muxbridge");
    return await build(run, { target: null, host, entry, output, bun }) &&
        await checkVersion(run, output, version)
      ? 0
      : 1;
  }

  const targets: Target[] = [];
  for (const name of values.target ?? TARGETS.map((t) => t.name)) {
    const target = name === "host" ? host : TARGETS.find((t) => t.name === name);
    if (!target) {
      say(
        name === "host"
          ? `this machine (${process.platform} ${process.arch}) is none of the release targets`
          : `unknown target "${name}"; known: host, ${TARGETS.map((t) => t.name).join(", ")}`,
      );
      return 2;
    }
    if (!targets.includes(target)) targets.push(target);
  }
  if (values.readme && !(targets.length === 1 && targets[0] === host)) {
    say(`--readme records this machine's archive: use it with --target host alone\n${USAGE}`);
    return 2;
  }
  let installer: string | undefined;
  if (values.repo !== undefined) {
    try {
      installer = installerFor(readFileSync(join(root, "scripts/install.sh"), "utf8"), values.repo);
    } catch (err) {
      say((err as Error).message);
      return 2;
    }
  }

  const releaseDir = join(out, "release");
  // Nothing from an earlier run may end up in this release.
  rmSync(releaseDir, { recursive: true, force: true });
  mkdirSync(releaseDir, { recursive: true });
  const binary = (t: Target) => join(out, "bin", t.name, binaryName(t));

  for (const target of targets) {
    if (values["skip-build"]) {
      if (!existsSync(binary(target))) {
        say(`--skip-build: there is no ${binary(target)} to pack`);
        return 1;
      }
      chmodSync(binary(target), 0o755);
    } else if (!await build(run, { target, host, entry, output: binary(target), bun })) {
      return 1;
    }
    if (target === host && !await checkVersion(run, binary(target), version)) return 1;
  }

  const mtime = await archiveDate(run, root);
  const sums = new Map<string, string>();
  const sizes: Array<{ target: Target; archive: number; binary: number }> = [];
  for (const target of targets) {
    const tarFile = join(releaseDir, archiveName(target).replace(/\.xz$/, ""));
    if (
      !await step(
        run,
        tarArgv(dirname(binary(target)), binaryName(target), tarFile, mtime),
        300_000,
      )
    ) return 1;
    // xz takes minutes for a 100 MB binary on a busy 2-core machine.
    if (!await step(run, xzArgv(tarFile), 30 * 60_000)) return 1;
    const archive = join(releaseDir, archiveName(target));
    const listed = await step(run, ["tar", "--list", `--file=${archive}`], 300_000);
    if (!listed || listed.stdout !== `${binaryName(target)}\n`) {
      say(
        `${archive} should hold ${binaryName(target)} alone; it lists ${
          JSON.stringify(listed?.stdout)
        }`,
      );
      return 1;
    }
    if (target === host && !await checkUnpacked(run, archive, target, version)) return 1;
    const bytes = readFileSync(archive);
    sums.set(archiveName(target), sha256Hex(bytes));
    sizes.push({ target, archive: bytes.byteLength, binary: statSync(binary(target)).size });
  }
  if (installer !== undefined) {
    writeFileSync(join(releaseDir, "install.sh"), installer, { mode: 0o755 });
    sums.set("install.sh", sha256Hex(new TextEncoder().encode(installer)));
  }
  const sumsText = [...sums.keys()].sort().map((name) => `${sums.get(name)}  ${name}\n`).join("");
  writeFileSync(join(releaseDir, "SHA256SUMS"), sumsText);
  say(`wrote ${join(releaseDir, "SHA256SUMS")}`);

  process.stdout.write(sizeTable(sizes));
  const tooBig = sizes.find((s) => s.target.name === "linux-x64" && s.archive > MAX_ARCHIVE_BYTES);
  if (tooBig) {
    say(
      `${archiveName(tooBig.target)} is ${mb(tooBig.archive)}, over the ${
        mb(MAX_ARCHIVE_BYTES)
      } budget`,
    );
    return 1;
  }
  if (values.readme) {
    const { file, changed } = writeDocBlock("release-sizes", readmeBlock(sizes));
    say(
      changed
        ? `rewrote ${file}'s release-sizes block`
        : `${file}'s release-sizes block is current`,
    );
  }
  return 0;
}

/** Builds one binary under a temporary name, renamed into place only when the build worked. */
async function build(run: Runner, job: CompileJob): Promise<boolean> {
  mkdirSync(dirname(job.output), { recursive: true });
  // The prefix keeps the ".exe" ending, so Bun appends no other.
  const partial = join(dirname(job.output), `.partial-${job.output.split("/").pop()}`);
  rmSync(partial, { force: true });
  const ok = await step(
    run,
    compileArgv({ ...job, output: partial }),
    10 * 60_000,
    dirname(job.entry),
  );
  if (!ok || !existsSync(partial)) {
    rmSync(partial, { force: true });
    say(`bun build failed for ${job.target?.name ?? "this machine"}`);
    return false;
  }
  chmodSync(partial, 0o755);
  renameSync(partial, job.output);
  return true;
}

/** Unpacks an archive into a temporary directory and checks the binary in it runs. */
async function checkUnpacked(run: Runner, archive: string, target: Target, version: string) {
  const dir = mkdtempSync(join(tmpdir(), "muxbridge-unpack-"));
  try {
    if (
      !await step(run, ["tar", "--extract", `--file=${archive}`, `--directory=${dir}`], 300_000)
    ) {
      return false;
    }
    return await checkVersion(run, join(dir, binaryName(target)), version);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

type Sizes = ReadonlyArray<{ target: Target; archive: number; binary: number }>;

/** The sizes, as the script prints them. */
function sizeTable(sizes: Sizes): string {
  const rows = sizes.map((s) => [archiveName(s.target), mb(s.archive), mb(s.binary)]);
  const all = [["archive", "download", "unpacked"], ...rows];
  const width = (i: number) => Math.max(...all.map((r) => r[i].length));
  return all.map((r) =>
    `${r[0].padEnd(width(0))}  ${r[1].padStart(width(1))}  ${r[2].padStart(width(2))}\n`
  )
    .join("");
}

/** The release-sizes block (docs/building.md). */
function readmeBlock(sizes: Sizes): string {
  const when = new Date().toISOString().slice(0, 16);
  const bunVersion = readPackageVersion("bun");
  return [
    `Measured ${when}Z by \`${README_COMMAND}\` on ${process.platform} ${process.arch} ` +
    `(bun ${bunVersion}, xz ${XZ_FLAGS.join(" ")}):`,
    "",
    "| archive | download | unpacked binary |",
    "|---|---|---|",
    ...sizes.map((s) => `| \`${archiveName(s.target)}\` | ${mb(s.archive)} | ${mb(s.binary)} |`),
  ].join("\n");
}

/** The installed version of an npm package of this repository. */
function readPackageVersion(name: string): string {
  const root = join(dirname(new URL(import.meta.url).pathname), "..");
  try {
    return JSON.parse(readFileSync(join(root, "node_modules", name, "package.json"), "utf8"))
      .version;
  } catch {
    return "?";
  }
}

if (import.meta.main) {
  process.exit(await main(process.argv.slice(2)));
}
