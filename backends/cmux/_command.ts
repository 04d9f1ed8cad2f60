/**
 * Private to the cmux backend: how one cmux CLI call is made (socket pinned, UUID handles) and the
 * one table that says what a failure means.
 *
 * @module
 */

import { commandFailed, runDetails } from "../../lib/backend/_command_failed.ts";
import { type CommandRun, runCommand } from "../../lib/backend/_run_command.ts";
import type { BackendDeps } from "../../lib/backend/backend.ts";
import type { CmuxConfig } from "./_traits.ts";
import { type ErrorCode, MuxError } from "../../lib/sys/errors.ts";
import { validateTarget } from "../../lib/sys/validate.ts";
import { parseErrorLine } from "./_parse.ts";

/**
 * cmux v2 error codes → muxbridge codes (docs/backends/cmux.md). Codes not listed are
 * `command_failed`. "The surface is gone" is `not_found` (`Error: not_found: Surface not
 * found`, exit 1), and, from newer builds' terminal input path, `process_exited` (the terminal
 * session ended) and `surface_unavailable` (the surface is no longer available); see also
 * {@linkcode cmuxError} for 0.64.3's `invalid_params`. An `invalid_state` (e.g. "Cannot close the
 * last surface") is a real failure, never "already closed".
 */
export const CMUX_ERROR_CODES: Readonly<Record<string, ErrorCode>> = {
  not_found: "pane_not_found",
  process_exited: "pane_not_found",
  surface_unavailable: "pane_not_found",
  pane_too_small: "no_space",
  unavailable: "backend_unreachable",
  main_thread_timeout: "backend_unreachable",
  invalid_state: "command_failed",
  invalid_params: "command_failed",
  internal_error: "command_failed",
  rejected_composer_busy: "command_failed",
};

/** What to do when cmux does not answer. */
export const SOCKET_HINT =
  "Run muxbridge inside a cmux terminal (CMUX_SOCKET_PATH, CMUX_WORKSPACE_ID and CMUX_SURFACE_ID set) with cmux running, or set cmux.socket_path";

/**
 * Builds the error for a failed cmux call from {@linkcode CMUX_ERROR_CODES}; an error without a
 * code that talks about the socket is `backend_unreachable`.
 *
 * @param action What was being done ("close surface X").
 * @param run The failed run.
 * @returns The error.
 */
export function cmuxError(action: string, run: CommandRun): MuxError {
  const { code, message } = parseErrorLine(run.stderr);
  const details = runDetails(run);
  const mapped = code === null
    ? (/socket|connect|connection refused/i.test(message)
      ? "backend_unreachable"
      : "command_failed")
    : surfaceGone(code, message)
    ? "pane_not_found"
    : CMUX_ERROR_CODES[code] ?? "command_failed";
  const text = code === null ? message : `${code}: ${message}`;
  switch (mapped) {
    case "pane_not_found":
      return new MuxError("pane_not_found", `Cannot ${action}: cmux does not know it (${text})`, {
        ...details,
        hint: "The surface is gone; `muxbridge list` shows what muxbridge still tracks",
      });
    case "backend_unreachable":
      return new MuxError(
        "backend_unreachable",
        `Cannot ${action}: cmux does not answer (${text})`,
        {
          ...details,
          hint: SOCKET_HINT,
        },
      );
    case "no_space":
      return new MuxError("no_space", `Cannot ${action}: ${text}`, {
        ...details,
        hint: "Close some panes or enlarge the window",
      });
    default:
      return commandFailed(action, run, text);
  }
}

/**
 * Whether an `invalid_params` answer means the surface is gone: cmux 0.64.3 answers a
 * `send-key`/`send` to a surface id it no longer holds as a terminal with
 * `invalid_params: Surface is not a terminal` (`ws.terminalPanel(for:)` finds nothing;
 * Sources/TerminalController.swift `v2SurfaceSendKey`). muxbridge only ever names terminal
 * surfaces it opened, so for it that surface is gone. Other `invalid_params` stay failures.
 */
function surfaceGone(code: string, message: string): boolean {
  return code === "invalid_params" && /^Surface is not a terminal\b/i.test(message);
}

/** Runs cmux calls for one backend. */
export interface CmuxCommand {
  /** The binary. */
  readonly bin: string;
  /** The pinned socket. @throws {MuxError} `no_backend` when none is known. */
  socket(): string;
  /**
   * Runs `cmux --socket S [--json] --id-format uuids <args…>`; resolves for any exit code.
   *
   * @param args The command and its arguments.
   * @param json Whether to ask for `--json` output.
   */
  run(args: readonly string[], json: boolean, signal?: AbortSignal): Promise<CommandRun>;
  /** Runs and returns stdout; a non-zero exit throws {@linkcode cmuxError}. */
  must(
    action: string,
    args: readonly string[],
    json: boolean,
    signal?: AbortSignal,
  ): Promise<string>;
  /** Runs `cmux <args…>` without the socket (`--version`, `<command> --help` work without one). */
  bare(args: readonly string[], signal?: AbortSignal): Promise<CommandRun>;
}

/**
 * Creates the command runner of a cmux backend.
 *
 * @param deps The backend's deps (runner, identity, config `cmux.*`).
 * @returns The runner.
 */
export function createCmuxCommand(deps: BackendDeps<CmuxConfig>): CmuxCommand {
  const bin = deps.config.cmux.bin;
  const layer = deps.identity.layers.find((l) => l.backend === "cmux");
  const socket = () => {
    // Pinned on every call: the CLI otherwise falls back to CMUX_SOCKET_PATH or probes default
    // sockets (docs/backends/cmux.md §1), and a changed environment must not redirect a close.
    const value = deps.config.cmux.socket_path ?? layer?.socket;
    if (!value) {
      throw new MuxError("no_backend", "Cannot reach cmux: no socket (CMUX_SOCKET_PATH is unset)", {
        hint: SOCKET_HINT,
      });
    }
    return validateTarget("cmux socket path", value);
  };
  const exec = async (args: readonly string[], signal?: AbortSignal): Promise<CommandRun> =>
    await runCommand(deps, [validateTarget("cmux binary", bin), ...args], {
      signal,
      notFoundHint: "Install cmux (the CLI ships in the cmux app) or set cmux.bin to its path",
    });
  const run = (args: readonly string[], json: boolean, signal?: AbortSignal) =>
    exec(
      ["--socket", socket(), ...(json ? ["--json"] : []), "--id-format", "uuids", ...args],
      signal,
    );
  return {
    bin,
    socket,
    run,
    bare: exec,
    async must(action, args, json, signal) {
      const result = await run(args, json, signal);
      if (result.code !== 0) throw cmuxError(action, result);
      return result.stdout;
    },
  };
}
