/**
 * Private to the tmux backend: how tmux commands are sent and what a failure means.
 *
 * One tmux process per call, with every command of the call in it (`;`-separated: tmux runs
 * them in order and stops at the first failure), `-u` (see {@linkcode UTF8_FLAG}) and the server
 * flags first, a timeout and the caller's signal always. Two ways:
 * 1. the commands on its argv;
 * 2. for commands carrying a pane's environment (`-e NAME=value`, credentials): `source-file -`
 *    with the commands on its stdin, so the values never appear on any process's argv (`ps`
 *    shows every argv on the machine).
 *
 * Path 2, and a block of commands one command runs (`if-shell … "<commands>"`), are written in
 * tmux's command language, quoted by {@linkcode quoteArgument}.
 *
 * @module
 */

import { commandFailed, runDetails } from "../../lib/backend/_command_failed.ts";
import { type CommandRun, runCommand } from "../../lib/backend/_run_command.ts";
import type { BackendDeps } from "../../lib/backend/backend.ts";
import type { TmuxConfig } from "./_traits.ts";
import { MuxError } from "../../lib/sys/errors.ts";
import { validatePlainName, validateTarget } from "../../lib/sys/validate.ts";

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

/** Arguments written bare in the command language: command names, flags and plain words. */
const BARE = /^(?:[A-Za-z0-9][A-Za-z0-9_-]*|-[A-Za-z0-9]+|--)$/;

/** The escapes tmux's parser knows inside double quotes (man tmux, PARSING SYNTAX). */
const NAMED: Record<string, string> = {
  "\\": "\\\\",
  '"': '\\"',
  "$": "\\$",
  "~": "\\~",
  "\n": "\\n",
  "\r": "\\r",
  "\t": "\\t",
  "\x1b": "\\e",
};

/**
 * Quotes one argument for tmux's command language (`source-file`, command blocks), so the parser
 * turns it back into exactly `arg`. Inside double quotes tmux expands `$VAR`, a leading `~` and
 * `\` escapes (man tmux, PARSING SYNTAX, 3.3a); each of those is escaped, line breaks and other
 * control characters become `\n`, `\r`, `\t`, `\e` or three-digit octal escapes, so the result
 * is always one line. Everything else (UTF-8, `#`, `;`, `'`, `{`, `}`, `%`) is literal inside
 * double quotes. Format expansion (`#{…}`) is a later, per-option step (`escapeFormat`).
 *
 * @param arg A literal argument.
 * @returns The argument, bare when it is a plain word, else double-quoted.
 * @throws {MuxError} `invalid_argument` for a NUL or a lone surrogate (tmux strings are C
 *   strings of UTF-8; neither can arrive intact).
 *
 * @example
 * ```ts
 * import { quoteArgument } from "./_command.ts";
 * quoteArgument("a $(b) \"c\"\n"); // "\"a \\$(b) \\\"c\\\"\\n\""
 * ```
 */
export function quoteArgument(arg: string): string {
  if (BARE.test(arg)) return arg;
  if (arg.includes("\0") || !arg.isWellFormed()) {
    throw new MuxError(
      "invalid_argument",
      `Cannot send ${JSON.stringify(arg.slice(0, 80))} to tmux: it holds a NUL or a lone surrogate`,
    );
  }
  let out = '"';
  for (const ch of arg) {
    const named = NAMED[ch];
    if (named !== undefined) out += named;
    else if (ch < " " || ch === "\x7f") {
      out += `\\${ch.charCodeAt(0).toString(8).padStart(3, "0")}`;
    } else out += ch;
  }
  return `${out}"`;
}

/**
 * Writes commands as one line of tmux's command language, joined by ` ; ` (a failing command
 * ends the sequence, as on argv).
 *
 * @param commands The commands, unescaped.
 * @returns The line, without a newline.
 * @throws {MuxError} `invalid_argument` from {@linkcode quoteArgument}.
 */
export function commandLine(commands: readonly TmuxArgs[]): string {
  return commands.map((c) => c.map(quoteArgument).join(" ")).join(" ; ");
}

/**
 * The commands as shown in messages and logs: each `-e NAME=value` value replaced, so a
 * credential never reaches a log line, `pane.failed` or an error's argv.
 *
 * @param args Arguments.
 * @returns The arguments with environment values hidden.
 */
export function redactArgs(args: readonly string[]): string[] {
  return args.map((a, i) => (i > 0 && args[i - 1] === "-e" ? a.replace(/=.*$/s, "=…") : a));
}

/** Whether the commands pass an environment to a pane (`-e`), hence must stay off argv. */
function carriesEnv(commands: readonly TmuxArgs[]): boolean {
  return commands.some((c) => c.includes("-e"));
}

/** Options of {@linkcode TmuxCommand.run}. */
export interface TmuxRunOptions {
  /**
   * The commands hold a secret inside an argument (a command block with `-e NAME=value`), so
   * they go on stdin (`source-file -`), never on argv. Top-level `-e` flags are found anyway.
   */
  secret?: boolean;
  /** The commands as messages and logs show them (secrets replaced). @default redacted commands */
  shown?: readonly TmuxArgs[];
}

/** Why a tmux command failed, read from its stderr. */
export type TmuxFailure = "not_found" | "unreachable" | "no_space" | "conflict" | "other";

/**
 * Reads tmux's stderr. Evidence (tmux 3.3a, live; docs/backends/tmux.md §3): an unknown pane,
 * window or session exits 1 with `can't find pane: %99` / `can't find window: @9` / `can't find
 * session`; no socket file gives `error connecting to <path> (No such file or directory)`, a stale
 * socket `no server running on <path>`, and a server that dies during a command `server exited
 * unexpectedly` or `lost server`; a full window gives `no space for new pane` (or, in other
 * versions, `create pane failed: pane too small`); a window index already taken `create window
 * failed: index 3 in use`.
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
  // new-window -t S:N when another window took index N first (tmux 3.3a, observed live).
  if (/index \d+ in use/.test(stderr)) return "conflict";
  return "other";
}

/**
 * Builds the error for a failed tmux command.
 *
 * @param action What was being done, for the message ("close pane \"%3\"").
 * @param run The failed run.
 * @returns A `pane_not_found`, `backend_unreachable`, `no_space` or `command_failed` error.
 */
export function tmuxError(action: string, run: CommandRun): MuxError {
  const details = runDetails(run);
  const stderr = details.stderr;
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
      return commandFailed(action, run);
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
function serverFlags(deps: BackendDeps<TmuxConfig>): string[] {
  const { socket_path, socket_name } = deps.config.tmux;
  if (socket_path) return ["-S", validateTarget("tmux socket path", socket_path)];
  // A name, never a path: tmux joins it onto its own directory (/tmp/tmux-<uid>/NAME).
  if (socket_name) return ["-L", validatePlainName("tmux.socket_name", socket_name)];
  const socket = deps.identity.layers.find((l) => l.backend === "tmux")?.socket;
  return socket ? ["-S", validateTarget("tmux socket path", socket)] : [];
}

/**
 * `-u`: the client takes its output as UTF-8 whatever the locale. Without it, a client whose
 * `LC_ALL`, `LC_CTYPE` and `LANG` (the first one set) do not say UTF-8 gets every printed line
 * through `utf8_sanitize` (`cmdq_print`, tmux 3.3a `cmd-queue.c`), which turns each control
 * character and each non-ASCII character into `_`: the `\x1f` separators of muxbridge's formats
 * (and tabs, and a title's UTF-8) arrive as `_` and nothing parses (observed live on 3.3a under
 * `env -i`). The flag changes nothing else: no environment reaches the server or its panes.
 */
const UTF8_FLAG = ["-u"] as const;

/** Runs tmux command lines for one backend. */
export interface TmuxCommand {
  /** The binary. */
  readonly bin: string;
  /** Runs `tmux -u <server flags> <commands…>` in one process; resolves for any exit code. */
  run(
    commands: readonly TmuxArgs[],
    signal?: AbortSignal,
    options?: TmuxRunOptions,
  ): Promise<CommandRun>;
  /** Runs `tmux -u -V` (no server flags: it needs no server). */
  version(signal?: AbortSignal): Promise<CommandRun>;
  /** Runs and returns stdout, throwing {@linkcode tmuxError} on a non-zero exit. */
  must(action: string, commands: readonly TmuxArgs[], signal?: AbortSignal): Promise<string>;
}

/**
 * Creates the command runner of a tmux backend.
 *
 * @param deps The backend's deps (runner, config).
 * @returns The runner.
 */
export function createTmuxCommand(deps: BackendDeps<TmuxConfig>): TmuxCommand {
  const bin = deps.config.tmux.bin;
  const exec = async (
    args: readonly string[],
    server: boolean,
    signal?: AbortSignal,
    stdin?: string,
    shown: readonly string[] = args,
  ): Promise<CommandRun> => {
    const head = [
      validateTarget("tmux binary", bin),
      ...UTF8_FLAG,
      ...(server ? serverFlags(deps) : []),
    ];
    return await runCommand(deps, [...head, ...args], {
      signal,
      stdin,
      shown: [...head, ...shown],
      notFoundHint: `Install tmux >= 3.0 (e.g. apt install tmux) or set tmux.bin to its path`,
    });
  };

  const run = (
    commands: readonly TmuxArgs[],
    signal?: AbortSignal,
    options: TmuxRunOptions = {},
  ): Promise<CommandRun> => {
    const shown = joinCommands(options.shown ?? commands.map(redactArgs));
    if (options.secret || carriesEnv(commands)) {
      return exec(["source-file", "-"], true, signal, `${commandLine(commands)}\n`, shown);
    }
    return exec(joinCommands(commands), true, signal, undefined, shown);
  };

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
