/**
 * A plugin load's settings: the environment, then the plugin's options, then what
 * `muxbridge install` recorded beside the installed plugin (`muxbridge.json`), then, for a
 * plugin OpenCode installed from npm, the binary of the platform package installed with it;
 * each read once per load. A recorded command or a package's binary is trusted only as far as
 * {@linkcode trustProblem} allows.
 *
 * @module
 */

import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { packageBinary } from "./package_binary.ts";
import { commandTrustProblem, trustProblem } from "./trust.ts";
import { bag, text } from "./values.ts";

/** The sidecar `muxbridge install` writes beside the installed plugin. */
export const SIDECAR = "muxbridge.json";

/** Plugin options (OpenCode 1.x: the second element of a `plugin` entry; 2.x: `options`). */
export interface Settings {
  /**
   * The command that runs muxbridge: env `MUXBRIDGE_BIN`, else option `bin`, else the command
   * `muxbridge install` recorded in `muxbridge.json` beside the plugin, else the binary of the
   * platform package installed with the npm package the plugin came in (`package_binary.ts`),
   * else `muxbridge` (PATH).
   */
  command: string[];
  /** Where `command` came from, for the log. */
  commandFrom: string;
  /** The version that recorded `command`, if recorded. */
  recordedVersion?: string;
  /**
   * Why nothing may run (the recorded command, its sidecar or the platform package's binary is
   * not trusted); checked again before every start of such a command.
   */
  vet: () => string | null;
  /** The log file. Env `MUXBRIDGE_PLUGIN_LOG` wins. @default the state directory's bridge.log */
  log: string;
  /** The state directory (process locks live in `plugin-locks/`). */
  stateDir: string;
  /** Loads with the same name share one bridge per process. @default "default" */
  instance: string;
  /** First restart delay; it doubles per restart. @default 1000 */
  backoffMs: number;
  /** The longest restart delay. @default 30000 */
  backoffMaxMs: number;
  /** Restarts before giving up. @default 5 */
  maxRestarts: number;
  /** A bridge that ran this long resets the restart count. @default 60000 */
  stableMs: number;
  /** The most bytes of events held while the bridge does not read. @default 1 MiB */
  queueBytes: number;
  /** How long `dispose` waits for the bridge's `bye` before SIGTERM. @default 3000 */
  stopGraceMs: number;
}

/** What `muxbridge install` recorded beside the plugin, or why it is not used. */
interface Recorded {
  command?: string[];
  version?: string;
  /** The sidecar exists but must not be believed. */
  refused?: string;
}

/** What `muxbridge install` recorded in `<here>/muxbridge.json`, or nothing. */
function recorded(here: string): Recorded {
  const path = join(here, SIDECAR);
  let raw: string;
  try {
    raw = readFileSync(path, "utf8");
  } catch {
    return {}; // not installed by `muxbridge install`
  }
  const problem = trustProblem(path);
  if (problem) return { refused: `${path} is not trusted: ${problem}` };
  try {
    const data = bag(JSON.parse(raw));
    const command = Array.isArray(data.command) &&
        data.command.length > 0 &&
        data.command.every((a) => typeof a === "string" && a !== "")
      ? data.command as string[]
      : undefined;
    const version = text(data.version);
    return { ...(command ? { command } : {}), ...(version ? { version } : {}) };
  } catch {
    return {}; // not muxbridge's sidecar
  }
}

/**
 * The settings of one load: environment, then options, then what install recorded.
 *
 * @param options The plugin's options.
 * @param here The folder of the installed plugin (where its sidecar is).
 */
export function settingsFrom(options: Record<string, unknown>, here: string): Settings {
  const env = process.env;
  const num = (key: string, fallback: number, min: number) => {
    const v = options[key];
    return typeof v === "number" && Number.isFinite(v) && v >= min ? v : fallback;
  };
  const str = (key: string) => {
    const v = options[key];
    return typeof v === "string" && v !== "" ? v : undefined;
  };
  const stateDir = env.MUXBRIDGE_STATE_DIR ||
    join(env.XDG_STATE_HOME || join(homedir(), ".local", "state"), "muxbridge");
  const rec = recorded(here);
  // Installed by OpenCode from npm: the platform package installed with this one.
  const fromPackage = rec.command || rec.refused ? null : packageBinary(here);
  const [command, commandFrom] = env.MUXBRIDGE_BIN
    ? [[env.MUXBRIDGE_BIN], "MUXBRIDGE_BIN"]
    : str("bin")
    ? [[str("bin")!], "the bin option"]
    : rec.command
    ? [rec.command, SIDECAR]
    : fromPackage
    ? [[fromPackage.path], `the ${fromPackage.name} package`]
    : [["muxbridge"], "PATH"];
  return {
    command,
    commandFrom,
    ...(rec.version ? { recordedVersion: rec.version } : {}),
    vet: commandFrom === SIDECAR || (commandFrom === "PATH" && rec.refused)
      ? vetFor(rec, command)
      : fromPackage && command[0] === fromPackage.path
      ? vetPackage(fromPackage.path)
      : () => null,
    log: env.MUXBRIDGE_PLUGIN_LOG || str("log") || join(stateDir, "bridge.log"),
    stateDir,
    instance: (str("instance") ?? "default").replace(/[^A-Za-z0-9_-]/g, "_").slice(0, 64),
    backoffMs: num("backoffMs", 1000, 1),
    backoffMaxMs: num("backoffMaxMs", 30_000, 1),
    maxRestarts: num("maxRestarts", 5, 0),
    stableMs: num("stableMs", 60_000, 0),
    queueBytes: num("queueBytes", 1024 * 1024, 1024),
    stopGraceMs: num("stopGraceMs", 3000, 0),
  };
}

/**
 * What is checked before each start of the recorded command (a command the user named, in the
 * environment or an option, is theirs): a refused sidecar refuses everything, even the PATH
 * fallback it would otherwise leave; a recorded command must pass the trust rule.
 */
function vetFor(rec: Recorded, command: readonly string[]): () => string | null {
  const advice = "; no panes will open (fix the permissions and run `muxbridge install` again, " +
    "or set MUXBRIDGE_BIN)";
  if (rec.refused) {
    const message = `not running the recorded muxbridge: ${rec.refused}${advice}`;
    return () => message;
  }
  if (!rec.command) return () => null;
  return () => {
    const problem = commandTrustProblem(command);
    return problem
      ? `not running the recorded muxbridge ${JSON.stringify(command[0])}: ${problem}${advice}`
      : null;
  };
}

/**
 * What is checked before each start of the platform package's binary: the same trust rule as
 * for a recorded command (the package manager's folders must be this user's or root's, and
 * writable by nobody else).
 */
function vetPackage(path: string): () => string | null {
  return () => {
    const problem = commandTrustProblem([path]);
    return problem
      ? `not running the muxbridge of the npm package ${JSON.stringify(path)}: ${problem}; ` +
        "no panes will open (fix the permissions, or set MUXBRIDGE_BIN)"
      : null;
  };
}
