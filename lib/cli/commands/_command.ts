/**
 * What every CLI command is and what it is given. Commands take `(invocation, deps)`, return a
 * result, and write only through `deps`; `main.ts` alone turns results and errors into output
 * and exit codes.
 *
 * @module
 */

import type { BackendModule } from "../../backend/backend.ts";
import type { BridgeIO } from "../../bridge/bridge.ts";
import type { Clock } from "../../sys/clock.ts";
import type { Runner } from "../../sys/exec.ts";
import type { EnvLookup } from "../../sys/env.ts";
import type { Logger } from "../../sys/log.ts";
import type { Fetch } from "../../opencode/client.ts";
import type { Processes } from "../../sys/processes.ts";
import type { Files } from "../../install/files.ts";
import type { MuxError } from "../../sys/errors.ts";

/** Everything a command may touch. */
export interface CliDeps {
  /** The environment. */
  env: EnvLookup;
  /** The exec seam. */
  run: Runner;
  /** The clock. */
  clock: Clock;
  /** The process seam. */
  processes: Processes;
  /** HTTP. */
  fetch: Fetch;
  /** Reads a text file; null when it does not exist. */
  readText(path: string): string | null;
  /** Writes to stdout. */
  stdout(text: string): void;
  /** Logs (stderr or the log file). */
  log: Logger;
  /** The working directory. */
  cwd: string;
  /** muxbridge's version. */
  version: string;
  /** The runtime ("deno 2.9.6", "bun 1.3.x"). */
  runtime: string;
  /** Aborted on SIGINT in CLI mode. */
  signal: AbortSignal;
  /** The bridge's stdin/stdout/signals. */
  bridgeIO(): BridgeIO;
  /** The backends (the registry, `backends/mod.ts`): config, detection and selection read it. */
  backends: readonly BackendModule[];
  /** The file seam of install, uninstall and doctor's plugin checks. */
  files?: Files;
  /** The command that runs this muxbridge (what install records for the plugin). */
  self?: readonly string[];
}

/** Flags every command accepts. */
export interface GlobalFlags {
  /** `--config FILE`. */
  config?: string;
  /** `--backend NAME`. */
  backend?: string;
  /** `--log-level`. */
  logLevel?: string;
  /** `--log-file`. */
  logFile?: string;
  /** `--json`. */
  json: boolean;
}

/** A parsed command line. */
export interface Invocation {
  /** The command's own flag values. */
  values: Record<string, string | boolean | undefined>;
  /** Positional arguments after the command name. */
  positionals: string[];
  /** The global flags. */
  global: GlobalFlags;
}

/** What a command produced. */
export interface CommandResult {
  /** The `--json` output. */
  json?: unknown;
  /** The plain output (may be empty). */
  text: string;
  /** The exit code. @default 0 */
  exitCode?: number;
  /**
   * With a non-zero exit code: the one stderr line that says what failed (without the
   * `muxbridge: ` prefix), as every failure has one.
   */
  failure?: string;
}

/** A flag of a command. */
export interface FlagSpec {
  /** `string` takes a value; `boolean` does not. */
  type: "string" | "boolean";
  /** What it does (for `--help`). */
  help: string;
}

/** One CLI command. */
export interface Command {
  /** Its name on the command line. */
  name: string;
  /** One line for the command list. */
  summary: string;
  /** The usage line. */
  usage: string;
  /** More help text, with an example. */
  help: string;
  /** Its own flags. */
  flags: Record<string, FlagSpec>;
  /** How many positionals it takes, [min, max]. */
  positionals: [number, number];
  /** Whether it has `--json` output. */
  json: boolean;
  /** Runs it. */
  run(invocation: Invocation, deps: CliDeps): Promise<CommandResult>;
  /**
   * What the command writes on stdout when it cannot start (its argv or config is refused, or
   * `run` throws a {@linkcode MuxError} before it has written anything), next to the stderr line
   * every failure gets. Absent: nothing (stdout stays empty). The bridge writes an `error` line
   * and `bye`, so a plugin reading its stdout learns why.
   */
  failureOutput?(error: MuxError): string;
}
