/**
 * `doctor`'s checks of the OpenCode chain, from the user's shell: the plugin installed where
 * OpenCode loads it and of this muxbridge's version, the muxbridge command the plugin will run
 * (recorded, or on PATH) and its version, what the plugin's log says about the last OpenCode
 * run, and, when that run's panes attached to OpenCode's own port, whether that server asks for a
 * password (`_doctor_password.ts`).
 *
 * @module
 */

import { join } from "node:path";
import type { Check } from "../../backend/backend.ts";
import { detectedTitles } from "../../backend/hints.ts";
import { type Config, stateDir } from "../../config/config.ts";
import type { Files } from "../../install/files.ts";
import { findOnPath } from "../../install/find_on_path.ts";
import {
  isMuxbridgePlugin,
  pluginVersion,
  readSidecar,
  type Sidecar,
} from "../../install/install.ts";
import { parseJsonc, plain } from "../../install/jsonc.ts";
import { type OpencodeLocations, opencodeLocations } from "../../install/locations.ts";
import { v2Installed } from "../../install/install_v2.ts";
import { PLUGIN_V1, PLUGIN_V2_FILES } from "../../install/plugin_source.ts";
import { toMuxError } from "../../sys/errors.ts";
import type { CliDeps } from "./_command.ts";
import { serviceChecks } from "./_doctor_service.ts";
import { serverPasswordCheck } from "./_doctor_password.ts";

/** The most of the plugin log read for the last run. */
const LOG_TAIL = 256 * 1024;

/** Whether a config lists a muxbridge plugin file by hand. */
function listedByHand(files: Files, at: OpencodeLocations): string | null {
  for (const path of at.configFiles) {
    const text = files.read(path);
    if (text === null) continue;
    try {
      const value = plain(parseJsonc(text)) as { plugin?: unknown };
      const list = Array.isArray(value?.plugin) ? value.plugin : [];
      if (list.some((e) => /muxbridge\.(ts|js)$/.test(String(Array.isArray(e) ? e[0] : e)))) {
        return path;
      }
    } catch {
      return null; // the config check of OpenCode itself is not ours
    }
  }
  return null;
}

/** What a config's `plugin` (1.x) or `plugins` (2.x) entry names: the package, or a path. */
function entryName(entry: unknown): string {
  if (Array.isArray(entry)) return String(entry[0]);
  if (typeof entry === "object" && entry !== null) {
    return String((entry as { package?: unknown }).package ?? "");
  }
  return String(entry);
}

/**
 * The config that lists the npm package `muxbridge` (OpenCode installed it: 1.x `opencode
 * plugin muxbridge --global`, 2.x `opencode plugin add muxbridge`), or null. OpenCode then runs
 * the package's own plugin, which runs the binary of its platform package (`docs/npm.md`).
 */
function listedAsPackage(files: Files, at: OpencodeLocations): string | null {
  for (const path of at.configFiles) {
    const text = files.read(path);
    if (text === null) continue;
    try {
      const value = plain(parseJsonc(text)) as { plugin?: unknown; plugins?: unknown };
      const list = [value?.plugin, value?.plugins].flatMap((l) => Array.isArray(l) ? l : []);
      if (list.some((e) => /^muxbridge(?:@[^/\s]+)?$/.test(entryName(e)))) return path;
    } catch {
      return null; // the config check of OpenCode itself is not ours
    }
  }
  return null;
}

/** Is the plugin where OpenCode loads it, and of this muxbridge's version? */
function pluginCheck(files: Files, at: OpencodeLocations, version: string): Check {
  const name = "opencode plugin";
  const text = files.read(at.plugin);
  const byHand = listedByHand(files, at);
  if (text === null) {
    const asPackage = listedAsPackage(files, at);
    if (asPackage) {
      return {
        name,
        status: "pass",
        detail: `the npm package muxbridge, listed in ${asPackage} (OpenCode installs and loads ` +
          "it; its plugin runs the binary of its own platform package)",
      };
    }
    if (byHand) {
      return {
        name,
        status: "warn",
        detail: `listed by hand in ${byHand}, not installed in ${at.pluginDir}`,
        hint: "Run `muxbridge install`: it replaces the hand-made entry and records this binary",
      };
    }
    return {
      name,
      status: "warn",
      detail: `not installed in ${at.pluginDir}: OpenCode opens no panes`,
      hint: "Run `muxbridge install`",
    };
  }
  if (!isMuxbridgePlugin(text)) {
    return {
      name,
      status: "fail",
      detail: `${at.plugin} is not muxbridge's plugin`,
      hint: "Move it away, then run `muxbridge install`",
    };
  }
  if (text !== PLUGIN_V1) {
    return {
      name,
      status: "fail",
      detail: `${at.plugin} is muxbridge ${pluginVersion(text) ?? "(unknown)"}, this binary is ` +
        `${version}`,
      hint: "Run `muxbridge install` with the binary you use",
    };
  }
  return {
    name,
    status: byHand ? "warn" : "pass",
    detail: `${at.plugin} (muxbridge ${version})${byHand ? `; also listed in ${byHand}` : ""}`,
    ...(byHand ? { hint: "Run `muxbridge install` again to remove the hand-made entry" } : {}),
  };
}

/**
 * Is OpenCode 2.x's plugin folder (`plugins/muxbridge`) muxbridge's current one? Null when it is
 * not installed. Whether the service loaded it is not checked here.
 */
function v2PluginCheck(files: Files, at: OpencodeLocations, version: string): Check | null {
  if (!v2Installed(files, at)) return null;
  const name = "opencode 2.x plugin";
  const stale = Object.entries(PLUGIN_V2_FILES).some(([file, text]) =>
    files.read(join(at.v2Link, file)) !== text
  );
  if (stale) {
    const was = pluginVersion(files.read(join(at.v2Link, "tui.js")) ?? "") ?? "(unknown)";
    return {
      name,
      status: "fail",
      detail: `${at.v2Link} is muxbridge ${was}, this binary is ${version}`,
      hint: "Run `muxbridge install` with the binary you use",
    };
  }
  return { name, status: "pass", detail: `${at.v2Link} (muxbridge ${version})` };
}

/** The command the plugin will run, the way the plugin picks it. */
function pluginCommand(
  deps: CliDeps,
  files: Files,
  sidecar: Sidecar | null,
): { argv: string[] | null; from: string } {
  const env = deps.env("MUXBRIDGE_BIN");
  if (env) {
    return { argv: findOnPath(env, deps.env("PATH"), files) ? [env] : null, from: "MUXBRIDGE_BIN" };
  }
  if (sidecar) {
    return {
      argv: files.isExecutable(sidecar.command[0]) ? sidecar.command : null,
      from: "muxbridge.json",
    };
  }
  const found = findOnPath("muxbridge", deps.env("PATH"), files);
  return { argv: found ? [found] : null, from: "PATH" };
}

/** Can the plugin start muxbridge, and is it this version? */
async function binaryCheck(deps: CliDeps, files: Files, sidecarPath: string): Promise<Check> {
  const name = "muxbridge for the plugin";
  const sidecar = readSidecar(files.read(sidecarPath));
  const { argv, from } = pluginCommand(deps, files, sidecar);
  if (argv === null) {
    return {
      name,
      status: "fail",
      detail: from === "muxbridge.json"
        ? `the recorded command ${sidecar?.command[0]} is missing or not executable`
        : `no muxbridge found (${from})`,
      hint: "Run `muxbridge install` with the binary you use (it records its path)",
    };
  }
  try {
    const r = await deps.run([...argv, "version", "--json"], {
      timeoutMs: 15_000,
      signal: deps.signal,
    });
    const reported = /"version":\s*"([^"]+)"/.exec(r.stdout)?.[1];
    if (r.code !== 0 || !reported) {
      return {
        name,
        status: "fail",
        detail: `${argv.join(" ")} version exited ${r.code}`,
        hint: "Run `muxbridge install` with a working binary",
      };
    }
    if (reported !== deps.version) {
      return {
        name,
        status: "fail",
        detail: `${argv.join(" ")} (from ${from}) is muxbridge ${reported}, this one is ` +
          `${deps.version}`,
        hint: "Run `muxbridge install` with the binary you use",
      };
    }
    return { name, status: "pass", detail: `${argv.join(" ")} (from ${from}), ${reported}` };
  } catch (err) {
    return {
      name,
      status: "fail",
      detail: toMuxError(err).message,
      hint: "Run `muxbridge install` with the binary you use",
    };
  }
}

/** Where the plugin logs, and its lines from the last run's start (null: no run logged). */
function lastRunLog(
  deps: CliDeps,
  files: Files,
  config: Config,
): { log: string; run: string | null } {
  const log = deps.env("MUXBRIDGE_PLUGIN_LOG") || join(stateDir(config, deps.env), "bridge.log");
  const text = (files.read(log) ?? "").slice(-LOG_TAIL);
  const start = Math.max(text.lastIndexOf("] starting "), text.lastIndexOf("] cannot start "));
  return { log, run: start < 0 ? null : text.slice(text.lastIndexOf("\n", start) + 1) };
}

/**
 * The server the last run's panes attached to when it was OpenCode's own port (`opencode
 * --port`), not the plugin's forwarding endpoint: the plugin's start line names it.
 */
function lastRunServer(run: string | null): string | undefined {
  const startLine = run?.slice(0, run.indexOf("\n") >>> 0) ?? "";
  if (startLine.includes("for the forwarding endpoint")) return undefined;
  return / for (https?:\/\/\S+) in /.exec(startLine)?.[1];
}

/** What the plugin's log says about the last OpenCode run. */
function lastRunCheck(deps: CliDeps, log: string, run: string | null): Check {
  const name = "last opencode run";
  if (run === null) {
    return {
      name,
      status: "warn",
      detail: `nothing logged in ${log} yet`,
      hint: "Start OpenCode inside your multiplexer (plain `opencode` is fine), then run doctor",
    };
  }
  const at = run.slice(0, 24);
  if (/\] cannot start /.test(run)) {
    return {
      name,
      status: "warn",
      detail: `${at}: the plugin could not start muxbridge`,
      hint: "Run `muxbridge install` with the binary you use, then restart OpenCode",
    };
  }
  const ready = /"type":"ready"[^\n]*"backend":(null|"[a-z]+")/.exec(run);
  const startLine = run.slice(0, run.indexOf("\n") >>> 0);
  const via = startLine.includes("for the forwarding endpoint")
    ? "plain opencode, through the plugin's forwarding endpoint"
    : "OpenCode's own port";
  if (!ready) {
    return {
      name,
      status: "warn",
      detail: `${at}: the bridge never said ready (see ${log})`,
      hint: "Restart OpenCode; if it repeats, run `muxbridge bridge` by hand to see why",
    };
  }
  const skipped = /"reason":"(server_unreachable|auth_failed|auth_unsupported)"/.exec(run)?.[1];
  if (ready[1] === "null" || skipped) {
    return {
      name,
      status: "warn",
      detail: `${at}: ${
        ready[1] === "null" ? "no multiplexer was found" : `children were skipped (${skipped})`
      }`,
      hint: ready[1] === "null"
        ? `Start OpenCode inside ${detectedTitles(deps.backends)}`
        : skipped === "auth_unsupported"
        ? "This multiplexer could not hand a pane the server password privately (a WezTerm pane of a remote domain, or a pane provider without `env`): run OpenCode in a local pane, or use a provider that promises `env`"
        : "Run `muxbridge install` again and restart OpenCode",
    };
  }
  return {
    name,
    status: "pass",
    detail: `${at}: bridge ready on ${ready[1].slice(1, -1)} (${via})`,
  };
}

/**
 * The OpenCode chain's checks.
 *
 * @param deps The CLI deps (`files` is needed; without it there are no checks).
 * @param config The resolved config (for the state directory).
 * @returns The checks.
 */
export async function chainChecks(deps: CliDeps, config: Config): Promise<Check[]> {
  const files = deps.files;
  if (!files) return [];
  let at: OpencodeLocations;
  try {
    at = opencodeLocations(deps.env);
  } catch (err) {
    const e = toMuxError(err);
    return [{ name: "opencode plugin", status: "fail", detail: e.message, hint: e.hint ?? "" }];
  }
  const v1 = files.read(at.plugin) !== null;
  const v2 = v2PluginCheck(files, at, deps.version);
  // Only OpenCode 2.x's plugin installed: no 1.x finding (its file would be noise there).
  const checks = v2 && !v1 && !listedByHand(files, at)
    ? []
    : [pluginCheck(files, at, deps.version)];
  if (v2) checks.push(v2);
  checks.push(...await serviceChecks(deps, v2 !== null || listedAsPackage(files, at) !== null));
  if (v1 || v2) {
    const sidecar = v1 ? at.sidecar : join(at.v2Link, "muxbridge.json");
    checks.push(await binaryCheck(deps, files, sidecar));
  }
  const { log, run } = lastRunLog(deps, files, config);
  checks.push(lastRunCheck(deps, log, run));
  const server = lastRunServer(run);
  if (server) {
    // A server without a password serves every local user, the panes' attach among them.
    const password = await serverPasswordCheck(deps, server, "last run's server password");
    if (password) checks.push(password);
  }
  return checks;
}
