/**
 * Private to the herdr backend: which herdr binary runs, how one command is run (the socket in
 * the child's environment, `--session` first, the timeout and signal always), and the one table
 * that maps herdr's error codes to muxbridge's.
 *
 * @module
 */

import { commandFailed, runDetails } from "../../lib/backend/_command_failed.ts";
import { type CommandRun, runCommand } from "../../lib/backend/_run_command.ts";
import type { BackendDeps } from "../../lib/backend/backend.ts";
import type { HerdrConfig } from "./_traits.ts";
import {
  type ErrorCode,
  isMuxError,
  MuxError,
  type MuxErrorOptions,
} from "../../lib/sys/errors.ts";
import type { Layer } from "../../lib/backend/identity.ts";
import { validatePlainName, validateTarget } from "../../lib/sys/validate.ts";
import { type HerdrApiError, parseErrorLine } from "./_parse.ts";

/**
 * herdr's error codes muxbridge tells apart (docs/backends/herdr.md §9); every other code is
 * `command_failed`. The one place herdr codes become muxbridge codes.
 */
const ERROR_CODES: Readonly<Record<string, ErrorCode>> = {
  pane_not_found: "pane_not_found",
  server_not_running: "backend_unreachable",
  protocol_mismatch: "unsupported_version",
  // The server could not read the request: a method or parameter this herdr does not know
  // (an older herdr answers `pane.report_agent` so: docs/backends/herdr.md §16).
  invalid_request: "unsupported",
};

const HINTS: Partial<Record<ErrorCode, string>> = {
  pane_not_found: "The pane is gone; `muxbridge list` shows what muxbridge still tracks",
  backend_unreachable:
    "Start herdr, or point herdr.socket_path / herdr.session at a running herdr server",
  unsupported_version:
    "The herdr CLI and the running server speak different protocols: restart the herdr server or install the matching herdr",
  unsupported: "This herdr does not know the request: install a newer herdr",
};

/**
 * Builds the error for an API error herdr reported, through the CLI or on the socket: the one
 * place herdr's codes become muxbridge's (unknown codes are `command_failed`).
 *
 * @param action What was being done ("close pane \"w1:p3\"").
 * @param api herdr's code and message.
 * @param details The failed program's argv, exit code and stderr, when a program failed.
 * @returns The error, with the code's hint.
 */
export function apiError(
  action: string,
  api: HerdrApiError,
  details: MuxErrorOptions = {},
): MuxError {
  const code = ERROR_CODES[api.code] ?? "command_failed";
  return new MuxError(code, `Cannot ${action}: herdr ${api.code}: ${api.message}`, {
    ...details,
    ...(HINTS[code] ? { hint: HINTS[code] } : {}),
  });
}

/**
 * Builds the error for a failed herdr command. Evidence (docs/backends/herdr.md §7, `src/cli.rs`):
 * exit 1 with one JSON line on stderr is an API error (`{"error":{"code","message"},"id"}`); exit 2
 * is a usage error in plain text; anything else (a crash, a Rust `Error: …`) is a failure as is.
 *
 * @param action What was being done ("close pane \"w1:p3\"").
 * @param run The failed run.
 * @returns A `pane_not_found`, `backend_unreachable`, `unsupported_version` or
 *   `command_failed` error.
 */
export function herdrError(action: string, run: CommandRun): MuxError {
  const details = runDetails(run);
  const api = run.code === 1 ? parseErrorLine(details.stderr) : null;
  if (api) return apiError(action, api, details);
  return commandFailed(action, run);
}

/** Runs herdr commands for one backend. */
export interface HerdrCommand {
  /** The binary in use (once resolved), else the first candidate. */
  readonly bin: string;
  /** Where the commands go: the session or socket, for messages. */
  readonly target: string;
  /**
   * Runs `herdr --version` with the first binary that exists (`herdr.bin`, else
   * `$HERDR_BIN_PATH`, else `herdr` on PATH) and keeps that binary for every later command.
   *
   * @throws {MuxError} `binary_not_found` when none exists.
   */
  version(signal?: AbortSignal): Promise<CommandRun>;
  /** Runs `herdr [--session S] <args…>`; resolves for any exit code. */
  run(args: readonly string[], signal?: AbortSignal): Promise<CommandRun>;
  /** Runs and returns stdout, throwing {@linkcode herdrError} on a non-zero exit. */
  must(action: string, args: readonly string[], signal?: AbortSignal): Promise<string>;
}

/**
 * Creates the command runner of a herdr backend.
 *
 * The server: `herdr.session` → the global `--session NAME` (herdr resolves it before anything
 * else, docs/backends/herdr.md §5); `herdr.socket_path`, else the socket of the herdr muxbridge
 * runs in (`HERDR_SOCKET_PATH`) → `HERDR_SOCKET_PATH` in the child's environment.
 *
 * @param deps The backend's deps (runner, config, identity).
 * @param layer The herdr layer muxbridge runs in, if any.
 * @returns The runner.
 */
export function createHerdrCommand(
  deps: BackendDeps<HerdrConfig>,
  layer: Layer | undefined,
): HerdrCommand {
  const { bin: configured, session, socket_path } = deps.config.herdr;
  const candidates = configured !== undefined
    ? [configured]
    : [...new Set([layer?.binPath, "herdr"].filter((b): b is string => !!b))];
  let resolved: string | undefined;
  const socket = socket_path ?? layer?.socket;
  const childEnv = socket === undefined
    ? undefined
    : { HERDR_SOCKET_PATH: validateTarget("herdr socket path", socket) };
  const sessionFlags = () =>
    session === undefined ? [] : ["--session", validatePlainName("herdr.session", session)];

  // A missing binary is worded by the callers (`missing`): they know every candidate.
  const exec = async (bin: string, args: readonly string[], signal?: AbortSignal) =>
    await runCommand(deps, [validateTarget("herdr binary", bin), ...args], {
      signal,
      env: childEnv,
    });

  const missing = (err: MuxError, argv: readonly string[]) =>
    new MuxError(
      "binary_not_found",
      `Cannot run herdr: none of ${candidates.map((c) => JSON.stringify(c)).join(", ")} exists`,
      {
        argv,
        cause: err,
        hint: "Install herdr >= 0.8.2 or set herdr.bin to its path",
      },
    );

  const version = async (signal?: AbortSignal): Promise<CommandRun> => {
    let last: MuxError | undefined;
    for (const bin of resolved ? [resolved] : candidates) {
      try {
        const run = await exec(bin, ["--version"], signal);
        resolved = bin;
        return run;
      } catch (err) {
        if (!isMuxError(err, "binary_not_found")) throw err;
        last = err;
      }
    }
    throw missing(last!, [candidates[0], "--version"]);
  };

  const run = async (args: readonly string[], signal?: AbortSignal) => {
    const bin = resolved ?? candidates[0];
    try {
      return await exec(bin, [...sessionFlags(), ...args], signal);
    } catch (err) {
      if (isMuxError(err, "binary_not_found")) throw missing(err, [bin, ...args]);
      throw err;
    }
  };

  return {
    get bin() {
      return resolved ?? candidates[0];
    },
    target: session !== undefined
      ? `session "${session}"`
      : socket !== undefined
      ? `socket ${socket}`
      : "the default herdr socket",
    version,
    run,
    async must(action, args, signal) {
      const result = await run(args, signal);
      if (result.code !== 0) throw herdrError(action, result);
      return result.stdout;
    },
  };
}
