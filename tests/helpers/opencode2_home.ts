/**
 * The isolated home of a real OpenCode 2.x (npm `@opencode/cli`, pinned in
 * `tools/opencode2/package.json`) in tests: HOME and the XDG folders inside a temporary directory,
 * OpenCode's config naming only a loopback mock model, the per-user service's settings
 * (`$XDG_CONFIG_HOME/opencode/service.json`: a port of the test's own and a password the test
 * chose), a `bin/` folder with `opencode` for PATH, and a git project.
 *
 * OpenCode 2.x keeps one background service per user, found through two files
 * (docs/opencode.md, "OpenCode 2.x"): the *config* `service.json` says which port (and
 * password) to use; the *state* `$XDG_STATE_HOME/opencode/service.json` is written by the
 * running service (`{id, version, url, pid, password}`) and read by every client. A home here
 * owns both, so a test's service and TUIs never meet the user's (default port 49374) or another
 * test's. 2.1.2 installs nothing on first use (seen live: it spawns only `git`), so unlike 1.x
 * there is nothing to stub; the update check is switched off and npm is pointed at a dead port
 * anyway.
 *
 * @module
 */

import { readFileSync, statSync } from "node:fs";
import { arch, platform } from "node:os";
import { mockModelConfig } from "./opencode_home.ts";

/** The `@opencode/cli` version tools/opencode2/package.json pins. */
export const OPENCODE2_VERSION = "2.1.2";

/** The repository root (with a trailing slash). */
const ROOT = new URL("../../", import.meta.url).pathname;

/** Where scripts/setup.sh installs OpenCode 2.x (its own prefix: its `opencode` bin clashes). */
export const OPENCODE2_PREFIX = `${ROOT}tools/opencode2`;

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

function hasAvx2(): boolean {
  try {
    return /(^|\s)avx2(\s|$)/.test(readFileSync("/proc/cpuinfo", "utf8"));
  } catch {
    return false;
  }
}

/**
 * The platform packages that may hold this machine's binary, best first: `@opencode/cli`'s
 * postinstall picks the same way (baseline builds for x64 CPUs without AVX2, musl builds last).
 */
function platformPackages(): string[] {
  const os = platform() === "win32" ? "windows" : platform();
  const base = `@opencode/cli-${os}-${arch()}`;
  if (arch() !== "x64") return [base, `${base}-musl`];
  const order = hasAvx2() ? [base, `${base}-baseline`] : [`${base}-baseline`, base];
  return [...order, `${base}-musl`, `${base}-baseline-musl`];
}

/**
 * The real OpenCode 2.x binary: `OPENCODE2_TEST_BIN` when set (null if it names no file), else
 * the platform package's binary under tools/opencode2, else null when it is not installed.
 *
 * Never `node_modules/.bin/opencode`: npm installs `@opencode/cli` with `--ignore-scripts`
 * here, and without its postinstall that bin is a stub script that prints "postinstall script
 * was not run" and exits 1 (seen with 2.1.2). The postinstall only hard-links the platform
 * package's `bin/opencode` into place, so that file is the real program.
 *
 * @returns The binary, or null.
 */
export function opencode2Bin(): string | null {
  const named = Deno.env.get("OPENCODE2_TEST_BIN");
  if (named) return isFile(named) ? named : null;
  for (const pkg of platformPackages()) {
    const path = `${OPENCODE2_PREFIX}/node_modules/${pkg}/bin/opencode`;
    if (isFile(path)) return path;
  }
  return null;
}

/**
 * A TCP port on 127.0.0.1 that was free a moment ago (the OS picks it; the listener is closed
 * again). For a 2.x service, whose port must be written into its config before it starts.
 *
 * @returns The port.
 */
export function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr as Deno.NetAddr;
  listener.close();
  return port;
}

/** Options of {@linkcode prepareOpencode2Home}. */
export interface Opencode2HomeOptions {
  /** The mock model's base URL (`startMockModel().baseUrl`). */
  mockUrl: string;
  /** Whether the mock model may call tools (a TUI's parent turn calls `subagent`). */
  toolCall: boolean;
  /** The service's port. @default {@linkcode freePort} */
  port?: number;
  /** The service's password. @default a random one */
  password?: string;
  /** More top-level keys of OpenCode's config (e.g. `permission`). @default none */
  config?: Record<string, unknown>;
}

/** A prepared 2.x home. */
export interface Opencode2Home {
  /** The temporary directory holding it all. */
  base: string;
  /**
   * The environment every 2.x process of the test runs with: PATH (`<base>/bin` with `opencode`,
   * then /usr/bin:/bin for git), HOME, the XDG folders, the offline switches.
   */
  env: Record<string, string>;
  /** `$XDG_CONFIG_HOME/opencode`: config, service settings, the `plugins/` folder. */
  configDir: string;
  /** The running service's registration (`$XDG_STATE_HOME/opencode/service.json`). */
  stateFile: string;
  /** The git project OpenCode runs in. */
  project: string;
  /** The service's port (in the config service.json). */
  port: number;
  /** The service's password (in the config service.json). */
  password: string;
  /** The 2.x binary (`<base>/bin/opencode` links to it). */
  bin: string;
}

async function git(cwd: string, args: string[]): Promise<void> {
  const out = await new Deno.Command("git", {
    args,
    cwd,
    stdin: "null",
    stdout: "null",
    stderr: "piped",
    env: { GIT_CONFIG_NOSYSTEM: "1", HOME: cwd },
  }).output();
  if (!out.success) {
    throw new Error(`git ${args.join(" ")}: ${new TextDecoder().decode(out.stderr)}`);
  }
}

/**
 * Writes the isolated home under `base`: OpenCode's config (the mock model only), the service
 * settings (port and password), `bin/opencode`, and a git project (`<base>/project`).
 *
 * @param base The temporary directory (the caller removes it).
 * @param options The mock model, whether it calls tools, the service's port and password.
 * @returns The home.
 * @throws {Error} When OpenCode 2.x is not installed.
 */
export async function prepareOpencode2Home(
  base: string,
  options: Opencode2HomeOptions,
): Promise<Opencode2Home> {
  const bin = opencode2Bin();
  if (!bin) {
    throw new Error("OpenCode 2.x is not installed: run scripts/setup.sh (tools/opencode2)");
  }
  const dirs = {
    HOME: `${base}/home`,
    XDG_CONFIG_HOME: `${base}/config`,
    XDG_DATA_HOME: `${base}/data`,
    XDG_CACHE_HOME: `${base}/cache`,
    XDG_STATE_HOME: `${base}/state`,
  };
  const configDir = `${dirs.XDG_CONFIG_HOME}/opencode`;
  const project = `${base}/project`;
  for (const d of [...Object.values(dirs), configDir, project, `${base}/bin`]) {
    await Deno.mkdir(d, { recursive: true });
  }
  await Deno.symlink(bin, `${base}/bin/opencode`);
  // The 1.x file name and shape: 2.x reads `opencode.json` and migrates `provider` itself,
  // which is also what a user moving from 1.x has (seen working with 2.1.2).
  await Deno.writeTextFile(
    `${configDir}/opencode.json`,
    JSON.stringify(mockModelConfig(options.mockUrl, options.toolCall, options.config)),
  );
  const port = options.port ?? freePort();
  const password = options.password ??
    btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(24))))
      .replace(/[+/=]/g, "");
  // The service takes its port and password from here; without a password it would generate
  // one and write it into this file itself (seen with 2.1.2).
  await Deno.writeTextFile(`${configDir}/service.json`, JSON.stringify({ port, password }), {
    mode: 0o600,
  });
  await git(project, ["init", "-q", "."]);
  await git(project, [
    "-c",
    "user.email=t@t",
    "-c",
    "user.name=t",
    "commit",
    "-q",
    "--allow-empty",
    "-m",
    "init",
  ]);
  return {
    base,
    env: {
      PATH: `${base}/bin:/usr/bin:/bin`,
      ...dirs,
      OPENCODE_DISABLE_AUTOUPDATE: "1",
      OPENCODE_DISABLE_MODELS_FETCH: "1",
      OPENCODE_DISABLE_CLAUDE_CODE: "1",
      // Should anything still run npm, it fails at once instead of fetching.
      npm_config_offline: "true",
      npm_config_registry: "http://127.0.0.1:9/",
    },
    configDir,
    stateFile: `${dirs.XDG_STATE_HOME}/opencode/service.json`,
    project,
    port,
    password,
    bin,
  };
}

/** The running service's registration (`$XDG_STATE_HOME/opencode/service.json`). */
export interface ServiceState {
  /** A new id per start. */
  id: string;
  /** `2.1.2`. */
  version: string;
  /** `http://127.0.0.1:<port>`. */
  url: string;
  /** The service's pid. */
  pid: number;
  /** Its Basic-auth password (user `opencode`). */
  password: string;
}

/**
 * Reads the service's registration.
 *
 * @param stateFile {@linkcode Opencode2Home.stateFile}.
 * @returns The registration, or null while there is none (no service, or it stopped) or it is
 *   not a complete one.
 */
export function readServiceState(stateFile: string): ServiceState | null {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(stateFile, "utf8"));
  } catch {
    return null;
  }
  const s = raw as Partial<ServiceState> | null;
  if (
    typeof s?.url !== "string" || typeof s.password !== "string" ||
    !Number.isInteger(s.pid) || typeof s.id !== "string" || typeof s.version !== "string"
  ) return null;
  return s as ServiceState;
}
