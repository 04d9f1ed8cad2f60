/**
 * Private to the tmux backend: how one tmux command line is run (server flags first, timeout and
 * signal always) and what a failed exit means.
 *
 * @module
 */

import type { BackendDeps } from "../../lib/backend.ts";
import { isMuxError, MuxError } from "../../lib/errors.ts";
import type { RunResult } from "../../lib/exec.ts";
import { describeArgv } from "../../lib/exec.ts";
import { validateTarget } from "../../lib/validate.ts";

/** One tmux command: its name and arguments, unescaped. */
export type TmuxArgs = readonly string[];

/**
 * Escapes one argument for tmux's argv parser. tmux reads any argument that *ends* in `;` as the
 * end of a command (the `;` is dropped) unless it ends in `\;`, which becomes `;`
 * (`cmd_parse_from_arguments`, tmux 3.3a). Live: `-- sh -c … 'a;' 'b\;'` ended the split at
 * `a` and ran `b;` as a command ("unknown command: b;"); `'a\;'` arrived as `a;`,
 * `'b\\;'` as `b\;` and `'\;'` as `;`. Nothing else in an argument is special (`{`, `}`, `~`,
 * `$HOME`, `%if`, quotes and empty arguments arrived intact).
 *
 * @param arg A literal argument.
 * @returns The argument tmux turns back into `arg`.
 */
export function escapeArgument(arg: string): string {
  return arg.endsWith(";") ? `${arg.slice(0, -1)}\\;` : arg;
}

/**
 * Joins commands into one tmux argv: arguments escaped, commands separated by a `;` argument of
 * its own (argv, not shell syntax: tmux runs the commands in order and stops at the first
 * failure, saving a fork per command).
 *
 * @param commands The commands.
 * @returns The argv after the server flags.
 */
export function joinCommands(commands: readonly TmuxArgs[]): string[] {
  return commands.flatMap((c, i) => [...(i === 0 ? [] : [";"]), ...c.map(escapeArgument)]);
}

/** Why a tmux command failed, read from its stderr. */
export type TmuxFailure = "not_found" | "unreachable" | "no_space" | "other";

/**
 * Reads tmux's stderr. Evidence (tmux 3.3a, research §1.6 and live): an unknown pane, window or
 * session exits 1 with `can't find pane: %99` / `can't find window: @9` / `can't find session`;
 * no socket file gives `error connecting to <path> (No such file or directory)`, a stale socket
 * `no server running on <path>`, and a server that dies during a command `server exited
 * unexpectedly` or `lost server`; a full window gives `no space for new pane` (or, in other
 * versions, `create pane failed: pane too small`).
 *
 * @param stderr tmux's stderr.
 * @returns The failure kind.
 */
export function classifyFailure(stderr: string): TmuxFailure {
  if (/can't find (pane|window|session)/.test(stderr)) return "not_found";
  if (/no server running|error connecting to|server exited unexpectedly|lost server/.test(stderr)) {
    return "unreachable";
  }
  if (/no space for new pane|pane too small/.test(stderr)) return "no_space";
  return "other";
}

/** A run of one tmux command line, with the full argv for messages. */
export interface TmuxRun extends RunResult {
  /** The argv that ran. */
  argv: readonly string[];
}

/**
 * Builds the error for a failed tmux command.
 *
 * @param action What was being done, for the message ("close pane \"%3\"").
 * @param run The failed run.
 * @returns A `pane_not_found`, `backend_unreachable`, `no_space` or `command_failed` error.
 */
export function tmuxError(action: string, run: TmuxRun): MuxError {
  const stderr = run.stderr.trim();
  const details = { argv: run.argv, exitCode: run.code, stderr };
  switch (classifyFailure(stderr)) {
    case "not_found":
      return new MuxError("pane_not_found", `Cannot ${action}: tmux does not know it (${stderr})`, {
        ...details,
        hint: "The pane or window is gone; `muxbridge list` shows what muxbridge still tracks",
      });
    case "unreachable":
      return new MuxError("backend_unreachable", `Cannot ${action}: no tmux server (${stderr})`, {
        ...details,
        hint:
          "Start tmux, or point tmux.socket_name / tmux.socket_path at the server muxbridge should use",
      });
    case "no_space":
      return new MuxError("no_space", `Cannot ${action}: ${stderr}`, {
        ...details,
        hint: "Close some panes or enlarge the window",
      });
    default:
      return new MuxError(
        "command_failed",
        `Cannot ${action}: ${describeArgv(run.argv)} exited ${run.code}: ${stderr}`,
        details,
      );
  }
}

/**
 * The server flags: `tmux.socket_path` → `-S`, `tmux.socket_name` → `-L`, else the socket of
 * the tmux muxbridge runs inside (from `$TMUX`) → `-S`, so a changed environment in a child
 * process cannot redirect commands to another server; else none (tmux's default server).
 *
 * @param deps The backend's deps.
 * @returns The flags, each value validated.
 * @throws {MuxError} `invalid_argument` for an unsafe value.
 */
export function serverFlags(deps: BackendDeps): string[] {
  const { socket_path, socket_name } = deps.config.tmux;
  if (socket_path) return ["-S", validateTarget("tmux socket path", socket_path)];
  if (socket_name) return ["-L", validateTarget("tmux socket name", socket_name)];
  const socket = deps.identity.layers.find((l) => l.backend === "tmux")?.socket;
  return socket ? ["-S", validateTarget("tmux socket path", socket)] : [];
}

/** Runs tmux command lines for one backend. */
export interface TmuxCommand {
  /** The binary. */
  readonly bin: string;
  /** Runs `tmux <server flags> <commands…>`; resolves for any exit code. */
  run(commands: readonly TmuxArgs[], signal?: AbortSignal): Promise<TmuxRun>;
  /** Runs `tmux -V` (no server flags: it needs no server). */
  version(signal?: AbortSignal): Promise<TmuxRun>;
  /** Runs and returns stdout, throwing {@linkcode tmuxError} on a non-zero exit. */
  must(action: string, commands: readonly TmuxArgs[], signal?: AbortSignal): Promise<string>;
}

/**
 * Creates the command runner of a tmux backend.
 *
 * @param deps The backend's deps (runner, config).
 * @returns The runner.
 */
export function createTmuxCommand(deps: BackendDeps): TmuxCommand {
  const bin = deps.config.tmux.bin;
  const exec = async (args: readonly string[], server: boolean, signal?: AbortSignal) => {
    const argv = [
      validateTarget("tmux binary", bin),
      ...(server ? serverFlags(deps) : []),
      ...args,
    ];
    try {
      const result = await deps.run(argv, { timeoutMs: deps.config.command_timeout_ms, signal });
      return { ...result, argv } as TmuxRun;
    } catch (err) {
      if (isMuxError(err, "binary_not_found")) {
        throw new MuxError("binary_not_found", err.message, {
          argv,
          cause: err,
          hint: `Install tmux >= 3.0 (e.g. apt install tmux) or set tmux.bin to its path`,
        });
      }
      throw err;
    }
  };
  const run = (commands: readonly TmuxArgs[], signal?: AbortSignal) =>
    exec(joinCommands(commands), true, signal);
  return {
    bin,
    run,
    version: (signal) => exec(["-V"], false, signal),
    async must(action, commands, signal) {
      const result = await run(commands, signal);
      if (result.code !== 0) throw tmuxError(action, result);
      return result.stdout;
    },
  };
}
