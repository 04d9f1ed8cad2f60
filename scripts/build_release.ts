/**
 * Builds muxbridge's single-file binaries and their checksum file.
 *
 * Two compilers, one source tree:
 * - `deno compile` (the release path, used by `.github/workflows/release.yml`). It downloads
 *   its runtime (`denort`) for each target on first use, so it needs network; our CI machines
 *   have none (it fails with a DNS error).
 * - `bun build --compile` (the offline path, verified here). The host target ships inside the
 *   npm package `bun`; other targets come from the npm registry.
 *
 * Usage:
 * ```sh
 * deno run -A scripts/build_release.ts --tool deno|bun [--host] [--target NAME]… [--out DIR] [--tag vX.Y.Z]
 * ```
 * `--host` builds only the host target into `dist/muxbridge` (no checksum file); otherwise every
 * target (or those named) goes to `dist/release/muxbridge-<os>-<arch>[.exe]` with `SHA256SUMS`.
 * `--tag` refuses to build when the tag is not `v` + the version in `deno.json`.
 *
 * @module
 */

import { createHash } from "node:crypto";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { basename, dirname, join } from "node:path";
import process from "node:process";
import { parseArgs } from "node:util";
import denoConfig from "../deno.json" with { type: "json" };
import { createRunner } from "../lib/sys/exec.ts";

/** A compiler that builds the binary. */
export type Tool = "deno" | "bun";

/** One release target. */
export interface Target {
  /** The asset's short name, `<os>-<arch>`, as `scripts/install.sh` derives it from `uname`. */
  name: string;
  /** `deno compile --target` value (a Rust target triple). */
  deno: string;
  /** `bun build --compile --target` value. */
  bun: string;
  /** File-name suffix of the executable. */
  suffix: "" | ".exe";
}

/** The five release targets. */
export const TARGETS: readonly Target[] = [
  { name: "linux-x64", deno: "x86_64-unknown-linux-gnu", bun: "bun-linux-x64", suffix: "" },
  { name: "linux-arm64", deno: "aarch64-unknown-linux-gnu", bun: "bun-linux-arm64", suffix: "" },
  { name: "darwin-x64", deno: "x86_64-apple-darwin", bun: "bun-darwin-x64", suffix: "" },
  { name: "darwin-arm64", deno: "aarch64-apple-darwin", bun: "bun-darwin-arm64", suffix: "" },
  {
    name: "windows-x64",
    deno: "x86_64-pc-windows-msvc",
    bun: "bun-windows-x64",
    suffix: ".exe",
  },
];

/**
 * The permissions the compiled binary runs with: it runs multiplexer and OpenCode binaries
 * (found on PATH, `HERDR_BIN_PATH` or config), reads env and config, writes its state directory,
 * calls the OpenCode server, and reads the OS's process table. Nothing can prompt (stdin is the
 * bridge's pipe), so everything is granted up front, and it has to be `--allow-all`: Deno 2.9
 * refuses `/proc/<pid>/stat` of another process to anything less ("Requires all access"), and
 * without it a zombie pane program looks alive. Same as the `start` task.
 */
export const DENO_PERMISSIONS: readonly string[] = ["--allow-all"];

/**
 * Bun's JSC bytecode (`--bytecode`; ESM needs `--format=esm`) trades ~3 MB for a faster start
 * (README "Binary size and start-up"). Only for the host: bytecode cross-compiled for another
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

/** The release asset's file name for a target. */
export function assetName(target: Target): string {
  return `muxbridge-${target.name}${target.suffix}`;
}

/** What {@linkcode compileArgv} builds. */
export interface CompileJob {
  /** The compiler. */
  tool: Tool;
  /** The target, or `null` for the host. */
  target: Target | null;
  /** The host's target (Bun adds bytecode only when building for it). */
  host: Target | null;
  /** The entry file (`main.ts`). */
  entry: string;
  /** The binary to write. */
  output: string;
  /** The `deno` and `bun` executables. */
  bins: { deno: string; bun: string };
}

/**
 * The argv that compiles a job.
 *
 * @param job What to build, for where, with what.
 * @returns The argv, program first.
 */
export function compileArgv(job: CompileJob): string[] {
  const { tool, target, host, entry, output, bins } = job;
  if (tool === "deno") {
    return [
      bins.deno,
      "compile",
      ...DENO_PERMISSIONS,
      ...(target ? ["--target", target.deno] : []),
      "--output",
      output,
      entry,
    ];
  }
  return [
    bins.bun,
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
 * The SHA256SUMS text for some files, in the format `sha256sum -c` and `shasum -a 256 -c` read:
 * one `<hex>  <name>` line per file, sorted by name.
 *
 * @param files Name → content.
 * @returns The file's text.
 */
export function sha256sums(files: ReadonlyMap<string, Uint8Array>): string {
  return [...files.keys()].sort().map((name) => {
    const hex = createHash("sha256").update(files.get(name)!).digest("hex");
    return `${hex}  ${name}\n`;
  }).join("");
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

const USAGE =
  "Usage: build_release.ts --tool deno|bun [--host] [--target NAME]... [--out DIR] [--tag vX.Y.Z]";

async function main(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      tool: { type: "string" },
      host: { type: "boolean", default: false },
      target: { type: "string", multiple: true },
      out: { type: "string" },
      tag: { type: "string" },
    },
  });
  const tool = values.tool;
  if (tool !== "deno" && tool !== "bun") {
    process.stderr.write(`build_release: --tool must be deno or bun\n${USAGE}\n`);
    return 2;
  }
  const version = denoConfig.version;
  if (values.tag !== undefined && values.tag !== `v${version}`) {
    process.stderr.write(
      `build_release: tag "${values.tag}" does not match deno.json version "${version}"; ` +
        `bump deno.json or retag\n`,
    );
    return 1;
  }
  const root = join(dirname(new URL(import.meta.url).pathname), "..");
  const entry = join(root, "main.ts");
  const bins = {
    // Whichever deno runs this script (npx, the npm package, or one on PATH).
    deno: typeof Deno !== "undefined" ? Deno.execPath() : "deno",
    bun: existsSync(join(root, "node_modules/.bin/bun"))
      ? join(root, "node_modules/.bin/bun")
      : "bun",
  };
  const run = createRunner();

  const jobs: Array<{ target: Target | null; output: string }> = [];
  if (values.host) {
    jobs.push({ target: null, output: join(values.out ?? join(root, "dist"), "muxbridge") });
  } else {
    const names = values.target ?? TARGETS.map((t) => t.name);
    const outDir = values.out ?? join(root, "dist/release");
    for (const name of names) {
      const target = TARGETS.find((t) => t.name === name);
      if (!target) {
        process.stderr.write(
          `build_release: unknown target "${name}"; known: ${
            TARGETS.map((t) => t.name).join(", ")
          }\n`,
        );
        return 2;
      }
      jobs.push({ target, output: join(outDir, assetName(target)) });
    }
    // A stale asset or checksum file from an earlier run must never be shipped.
    for (const name of [...TARGETS.map(assetName), "SHA256SUMS"]) {
      rmSync(join(outDir, name), { force: true });
    }
  }

  const host = hostTarget();
  const built = new Map<string, Uint8Array>();
  for (const { target, output } of jobs) {
    mkdirSync(dirname(output), { recursive: true });
    // Built under a temporary name and renamed into place: a failed build (deno compile without
    // network removes its output file) must not destroy the previous binary. The prefix keeps
    // the ".exe" ending, so neither compiler appends another.
    const partial = join(dirname(output), `.partial-${basename(output)}`);
    rmSync(partial, { force: true });
    const cmd = compileArgv({ tool, target, host, entry, output: partial, bins });
    process.stderr.write(`build_release: ${cmd.join(" ")}\n`);
    const result = await run(cmd, { timeoutMs: 10 * 60_000, cwd: root }).catch((err) => ({
      code: -1,
      stdout: "",
      stderr: String(err),
    }));
    if (result.code !== 0 || !existsSync(partial)) {
      rmSync(partial, { force: true });
      process.stderr.write(result.stdout + result.stderr);
      process.stderr.write(
        `build_release: ${tool} failed for ${target?.name ?? "the host"} (exit ${result.code})` +
          (tool === "deno"
            ? "; deno compile downloads its runtime on first use and needs network\n"
            : "\n"),
      );
      return 1;
    }
    chmodSync(partial, 0o755);
    renameSync(partial, output);
    built.set(basename(output), readFileSync(output));
  }

  // The host binary must report the version it was built from (deno.json, embedded at build).
  for (const { target, output } of jobs) {
    if (target !== null && target.name !== host?.name) continue;
    const r = await run([output, "--version"], { timeoutMs: 30_000 });
    if (r.code !== 0 || r.stdout.trim() !== `muxbridge ${version}`) {
      process.stderr.write(
        `build_release: ${output} --version printed ${
          JSON.stringify(r.stdout)
        } (exit ${r.code}), ` +
          `expected "muxbridge ${version}"\n${r.stderr}`,
      );
      return 1;
    }
  }

  if (!values.host) {
    const outDir = dirname(jobs[0].output);
    writeFileSync(join(outDir, "SHA256SUMS"), sha256sums(built));
    process.stderr.write(`build_release: wrote ${join(outDir, "SHA256SUMS")}\n`);
  }
  for (const [name, bytes] of built) {
    process.stderr.write(`build_release: ${name} ${(bytes.byteLength / 1e6).toFixed(1)} MB\n`);
  }
  return 0;
}

if (import.meta.main) {
  process.exit(await main(process.argv.slice(2)));
}
