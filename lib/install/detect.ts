/**
 * Which OpenCode lines this user has, for `muxbridge install`: 1.x (npm `opencode-ai`, whose
 * `opencode --version` prints `1.18.33`) and 2.x (npm `@opencode/cli`, which prints
 * `opencode v2.1.2` and also installs the same binary as `opencode2`). Both can be installed at
 * once (under separate prefixes, since their `opencode` bins clash).
 *
 * Evidence, each line independently: the version a binary on PATH prints (`opencode`,
 * `opencode2`, and `MUXBRIDGE_OPENCODE_BIN` when set), asked through the exec seam with a
 * bounded timeout; when it does not answer in time (1.18.33 took 9 s for `--version` on a
 * loaded 2-core machine), the npm package the binary belongs to (its real path runs through
 * `node_modules/opencode-ai/` or `node_modules/@opencode/cli…/`); for 2.x also its per-user
 * service's files (`service.json` in OpenCode's state or config folder), which 2.x alone
 * writes, so a 2.x that is not on this shell's PATH still counts once it has run.
 *
 * @module
 */

import { join } from "node:path";
import type { EnvLookup } from "../sys/env.ts";
import { envText } from "../sys/env.ts";
import { isMuxError } from "../sys/errors.ts";
import type { Runner } from "../sys/exec.ts";
import type { Files } from "./files.ts";
import { findOnPath } from "./find_on_path.ts";

/** An OpenCode release line. */
export type OpencodeLine = "1.x" | "2.x";

/** What was found for one candidate. */
export interface Evidence {
  /** The line it shows, or null when it shows none. */
  line: OpencodeLine | null;
  /** What was seen, for people (`/usr/bin/opencode --version: 1.18.33`). */
  detail: string;
}

/** The outcome of {@linkcode detectOpencode}. */
export interface Detected {
  /** The lines found (possibly none). */
  lines: OpencodeLine[];
  /** Everything looked at, in order. */
  evidence: Evidence[];
}

/** What {@linkcode detectOpencode} needs. */
export interface DetectDeps {
  /** The exec seam. */
  run: Runner;
  /** The environment (PATH, the XDG folders, HOME, `MUXBRIDGE_OPENCODE_BIN`). */
  env: EnvLookup;
  /** The file seam (PATH lookup, the service's files). */
  files: Files;
  /** The longest `--version` may take (the 1.x npm wrapper took 9 s on a loaded machine). */
  timeoutMs?: number;
}

/**
 * The line a `--version` output names: `1.2.3` is 1.x, `opencode v2.1.2` is 2.x.
 *
 * @param stdout What `opencode --version` printed.
 * @returns The line, or null for anything else.
 *
 * @example
 * ```ts
 * import { lineOfVersion } from "./detect.ts";
 * lineOfVersion("1.18.33\n"); // "1.x"
 * lineOfVersion("opencode v2.1.2\n"); // "2.x"
 * ```
 */
export function lineOfVersion(stdout: string): OpencodeLine | null {
  const out = stdout.trim();
  const m = /^(?:opencode\s+)?v?(\d+)\.\d+\.\d+\S*$/m.exec(out);
  if (!m) return null;
  const major = Number(m[1]);
  return major === 1 ? "1.x" : major === 2 ? "2.x" : null;
}

/**
 * The line of the npm package a binary belongs to, from its real path, or null.
 *
 * @param real The binary's path with every link resolved.
 * @returns The line.
 *
 * @example
 * ```ts
 * import { lineOfPackage } from "./detect.ts";
 * lineOfPackage("/usr/lib/node_modules/opencode-ai/bin/opencode.exe"); // "1.x"
 * lineOfPackage("/usr/lib/node_modules/@opencode/cli/bin/opencode.exe"); // "2.x"
 * ```
 */
export function lineOfPackage(real: string): OpencodeLine | null {
  if (/\/node_modules\/opencode-ai\/|\/node_modules\/opencode-[a-z0-9-]+\/bin\//.test(real)) {
    return "1.x";
  }
  return /\/node_modules\/@opencode\/cli(?:-[a-z0-9-]+)?\//.test(real) ? "2.x" : null;
}

/** Asks one binary for its version; its package tells when it does not answer. */
async function versionOf(deps: DetectDeps, bin: string): Promise<Evidence> {
  const asked = await askVersion(deps, bin);
  if (asked.line !== null) return asked;
  const real = deps.files.realPath(bin);
  const line = real ? lineOfPackage(real) : null;
  return line
    ? {
      line,
      detail: `${asked.detail}; ${real} is npm's ${
        line === "1.x" ? "opencode-ai" : "@opencode/cli"
      }`,
    }
    : asked;
}

/** Runs `<bin> --version`. */
async function askVersion(deps: DetectDeps, bin: string): Promise<Evidence> {
  try {
    const r = await deps.run([bin, "--version"], { timeoutMs: deps.timeoutMs ?? 30_000 });
    const first = r.stdout.trim().split("\n")[0]?.slice(0, 100) ?? "";
    if (r.code !== 0) return { line: null, detail: `${bin} --version exited ${r.code}` };
    const line = lineOfVersion(r.stdout);
    return {
      line,
      detail: `${bin} --version: ${first}${
        line ? "" : " (not an OpenCode version muxbridge knows)"
      }`,
    };
  } catch (err) {
    const why = isMuxError(err, "timed_out") ? "did not answer in time" : (err as Error).message;
    return { line: null, detail: `${bin} --version: ${why}` };
  }
}

/** OpenCode 2.x's per-user service files, which 1.x never writes. */
function serviceFiles(env: EnvLookup): string[] {
  const home = envText(env, "HOME");
  const state = envText(env, "XDG_STATE_HOME") ?? (home ? join(home, ".local", "state") : null);
  const config = envText(env, "OPENCODE_CONFIG_DIR") ??
    (envText(env, "XDG_CONFIG_HOME")
      ? join(envText(env, "XDG_CONFIG_HOME")!, "opencode")
      : home
      ? join(home, ".config", "opencode")
      : null);
  return [
    ...(state ? [join(state, "opencode", "service.json")] : []),
    ...(config ? [join(config, "service.json")] : []),
  ];
}

/**
 * Finds the OpenCode lines this user has.
 *
 * @param deps The exec and file seams and the environment.
 * @returns The lines found and the evidence; the binaries are asked in parallel.
 */
export async function detectOpencode(deps: DetectDeps): Promise<Detected> {
  const path = deps.env("PATH");
  const bins = new Set<string>();
  const chosen = envText(deps.env, "MUXBRIDGE_OPENCODE_BIN");
  for (const name of [...(chosen ? [chosen] : []), "opencode", "opencode2"]) {
    const found = findOnPath(name, path, deps.files);
    if (found) bins.add(found);
  }
  const evidence = await Promise.all([...bins].map((bin) => versionOf(deps, bin)));
  for (const file of serviceFiles(deps.env)) {
    if (deps.files.stat(file)?.kind === "file") {
      evidence.push({ line: "2.x", detail: `${file} exists (OpenCode 2.x's service)` });
    }
  }
  const lines = (["1.x", "2.x"] as const).filter((l) => evidence.some((e) => e.line === l));
  return { lines, evidence };
}
