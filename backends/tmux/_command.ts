/**
 * Private to the tmux backend: how tmux commands are sent and what a failure means.
 *
 * Three ways, chosen per call:
 * 1. the control-mode channel (`_control.ts`): a write to a pipe, no process start; used when
 *    `tmux.control_mode` is on and a channel seam is given;
 * 2. a tmux process per call with the commands on its argv (server flags first, timeout and
 *    signal always) — the fallback when the channel cannot start or died twice;
 * 3. for commands carrying a pane's environment (`-e NAME=value`, credentials): a tmux process
 *    running `source-file -` with the commands on its stdin, so the values never appear on any
 *    process's argv (`ps` shows every argv on the machine).
 *
 * Paths 1 and 3 write tmux's command language, quoted by {@linkcode quoteArgument}.
 *
 * @module
 */

import {
  type BackendDeps,
  commandFailed,
  type CommandRun,
  runCommand,
  runDetails,
} from "../../lib/backend.ts";
import { isMuxError, MuxError } from "../../lib/sys/errors.ts";
import { describeArgv } from "../../lib/sys/exec.ts";
import { validateTarget } from "../../lib/validate.ts";
import type { TimerId } from "../../lib/sys/clock.ts";
import { connectControl, type ControlClient } from "./_control.ts";

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
 * Quotes one argument for tmux's command language (control mode, `source-file`), so the parser
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

/** Commands that must not run twice: each opens a pane (a lost answer is not retried). */
const OPENS = new Set(["split-window", "splitw", "new-window", "neww"]);

/** Why a tmux command failed, read from its stderr. */
export type TmuxFailure = "not_found" | "unreachable" | "no_space" | "conflict" | "other";

/**
 * Reads tmux's stderr. Evidence (tmux 3.3a, research §1.6 and live): an unknown pane, window or
 * session exits 1 with `can't find pane: %99` / `can't find window: @9` / `can't find session`;
 * no socket file gives `error connecting to <path> (No such file or directory)`, a stale socket
 * `no server running on <path>`, and a server that dies during a command `server exited
 * unexpectedly` or `lost server`; a full window gives `no space for new pane` (or, in other
 * versions, `create pane failed: pane too small`); a window index already taken
 * `create window failed: index 3 in use`.
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
function serverFlags(deps: BackendDeps): string[] {
  const { socket_path, socket_name } = deps.config.tmux;
  if (socket_path) return ["-S", validateTarget("tmux socket path", socket_path)];
  if (socket_name) return ["-L", validateTarget("tmux socket name", socket_name)];
  const socket = deps.identity.layers.find((l) => l.backend === "tmux")?.socket;
  return socket ? ["-S", validateTarget("tmux socket path", socket)] : [];
}

/** How the last command was sent (for `doctor`, benchmarks and tests). */
export type TmuxTransport = "control" | "cli";

/** Runs tmux command lines for one backend. */
export interface TmuxCommand {
  /** The binary. */
  readonly bin: string;
  /** Runs `tmux <server flags> <commands…>`; resolves for any exit code. */
  run(
    commands: readonly TmuxArgs[],
    signal?: AbortSignal,
    options?: TmuxRunOptions,
  ): Promise<CommandRun>;
  /** Runs `tmux -V` (no server flags: it needs no server). */
  version(signal?: AbortSignal): Promise<CommandRun>;
  /** Runs and returns stdout, throwing {@linkcode tmuxError} on a non-zero exit. */
  must(action: string, commands: readonly TmuxArgs[], signal?: AbortSignal): Promise<string>;
  /** How commands go now: `control` while a channel is connected, else `cli`. */
  transport(): TmuxTransport;
  /** Ends the control channel, if any. Never throws. */
  close(): Promise<void>;
}

/** Options of {@linkcode createTmuxCommand}. */
export interface TmuxCommandOptions {
  /**
   * The pane, window or session the control client attaches next to (its session is resolved
   * to a `$N` id first: attaching to a pane or window target would select it and move the
   * user's focus, observed live on 3.3a). Undefined: no channel for now.
   */
  attachTarget?: () => string | undefined;
}

/** A channel may fail (not start, or die) this many times before processes are used for good. */
const CHANNEL_STARTS = 2;

/** An idle channel is detached after this long, so a control client is attached only in bursts. */
const CHANNEL_IDLE_MS = 1000;

/**
 * Commands that make panes end. tmux 3.3a's server crashes (SIGSEGV, every session lost) when a
 * control client is attached and a window is destroyed right after its active pane changed: the
 * deferred `%window-pane-changed` notification dereferences the window's NULL active pane
 * (`control_notify_window_pane_changed`, control-notify.c, no NULL check in 3.3a; newer code
 * checks it). Observed live: 3 of 6 shutdowns of 50 panes with the channel attached crashed the
 * server (bench/burst.ts; dmesg "tmux: server … segfault at 0", the faulting code reads
 * `w->active->id`). So the channel is detached before any of these run, and stays detached
 * until the next command that opens a pane.
 */
const ENDS_PANES = new Set([
  "send-keys",
  "send",
  "kill-pane",
  "killp",
  "kill-window",
  "killw",
  "kill-session",
  "kill-server",
  "respawn-pane",
  "respawnp",
  "respawn-window",
  "respawnw",
]);

/**
 * Creates the command runner of a tmux backend.
 *
 * @param deps The backend's deps (runner, channel seam, clock, config, log).
 * @param options Where a control channel attaches.
 * @returns The runner.
 */
export function createTmuxCommand(
  deps: BackendDeps,
  options: TmuxCommandOptions = {},
): TmuxCommand {
  const bin = deps.config.tmux.bin;
  const timeoutMs = deps.config.command_timeout_ms;
  const exec = async (
    args: readonly string[],
    server: boolean,
    signal?: AbortSignal,
    stdin?: string,
    shown: readonly string[] = args,
  ): Promise<CommandRun> => {
    const head = [validateTarget("tmux binary", bin), ...(server ? serverFlags(deps) : [])];
    return await runCommand(deps, [...head, ...args], {
      signal,
      stdin,
      shown: [...head, ...shown],
      notFoundHint: `Install tmux >= 3.0 (e.g. apt install tmux) or set tmux.bin to its path`,
    });
  };

  /** One tmux process: argv, or `source-file -` on stdin when a pane environment is passed. */
  const cli = (
    commands: readonly TmuxArgs[],
    signal: AbortSignal | undefined,
    options: TmuxRunOptions,
  ): Promise<CommandRun> => {
    const shown = joinCommands(options.shown ?? commands.map(redactArgs));
    if (options.secret || carriesEnv(commands)) {
      return exec(["source-file", "-"], true, signal, `${commandLine(commands)}\n`, shown);
    }
    return exec(joinCommands(commands), true, signal, undefined, shown);
  };

  // ------------------------------------------------------------ the control channel
  let client: ControlClient | null = null;
  let connecting: Promise<ControlClient | null> | null = null;
  let failures = 0;
  let closed = false;
  // Parked: no channel until the next command that opens a pane (see ENDS_PANES).
  let parked = false;
  let idleTimer: TimerId | null = null;
  const sessions = new Map<string, string>();
  const wanted = () =>
    deps.config.tmux.control_mode && deps.openChannel !== undefined && !closed && !parked;

  /** The attach target's session id, asked of tmux once per target. */
  const sessionOf = async (target: string, signal?: AbortSignal): Promise<string | null> => {
    const known = sessions.get(target);
    if (known) return known;
    const result = await exec(
      [
        "display-message",
        "-p",
        "-t",
        validateTarget("tmux attach target", target),
        "#{session_id}",
      ],
      true,
      signal,
    );
    const id = result.stdout.trim();
    // display-message exits 0 with empty output for an unknown pane (research §1.6).
    if (result.code !== 0 || !/^\$\d+$/.test(id)) return null;
    sessions.set(target, id);
    return id;
  };

  const failed = (why: string) => {
    failures++;
    deps.log.warn(
      failures < CHANNEL_STARTS
        ? `tmux control channel: ${why}; trying once more on a later command`
        : `tmux control channel: ${why}; using one tmux process per command from now on`,
    );
  };

  const connect = async (signal?: AbortSignal): Promise<ControlClient | null> => {
    let target: string | undefined;
    try {
      target = options.attachTarget?.();
    } catch {
      target = undefined;
    }
    if (target === undefined) return null;
    try {
      const session = await sessionOf(target, signal);
      if (session === null) throw new Error(`no tmux session holds "${target}"`);
      const argv = [
        validateTarget("tmux binary", bin),
        ...serverFlags(deps),
        "-C",
        // -E: do not copy muxbridge's environment into the session (update-environment);
        // no-output: no %output notifications for every pane; ignore-size: the client never
        // changes window sizes (man tmux, attach-session; tmux >= 3.2, older ones refuse -f).
        "attach-session",
        "-E",
        "-f",
        "no-output,ignore-size",
        "-t",
        session,
      ];
      const opened = await connectControl({
        argv,
        open: deps.openChannel!,
        clock: deps.clock,
        timeoutMs,
        log: deps.log,
        onDeath: (why) => {
          if (client === opened) client = null;
          failed(`ended (${why})`);
        },
      });
      deps.log.debug(`tmux control channel attached to ${session} (pid ${opened.pid})`);
      return opened;
    } catch (err) {
      sessions.delete(target);
      failed(`cannot start (${(err as Error).message})`);
      return null;
    }
  };

  // Requests in flight on the channel; a release waits for them (their answers would be lost).
  let inflight = 0;
  const drained: Array<() => void> = [];

  /** Detaches the channel on purpose (not a failure), after the requests in flight. */
  const release = async () => {
    if (idleTimer !== null) deps.clock.clearTimeout(idleTimer);
    idleTimer = null;
    const pending = connecting;
    const c = client ?? (pending ? await pending : null);
    if (client === c) client = null;
    if (inflight > 0) await new Promise<void>((resolve) => drained.push(resolve));
    if (idleTimer !== null && client === null) deps.clock.clearTimeout(idleTimer);
    if (client === null) idleTimer = null;
    await c?.close();
  };

  /** Detaches the channel after CHANNEL_IDLE_MS without a command. */
  const touch = () => {
    if (idleTimer !== null) deps.clock.clearTimeout(idleTimer);
    idleTimer = null;
    if (closed || client === null) return;
    idleTimer = deps.clock.setTimeout(() => {
      idleTimer = null;
      if (inflight === 0) void release();
    }, CHANNEL_IDLE_MS);
  };

  const channel = async (signal?: AbortSignal): Promise<ControlClient | null> => {
    if (!wanted()) return null;
    if (client?.alive) return client;
    if (connecting) return await connecting;
    if (failures >= CHANNEL_STARTS) return null;
    connecting = connect(signal).then((c) => {
      connecting = null;
      if (c && (closed || parked)) {
        void c.close();
        return null;
      }
      client = c;
      return c;
    });
    return await connecting;
  };

  const run = async (
    commands: readonly TmuxArgs[],
    signal?: AbortSignal,
    options: TmuxRunOptions = {},
  ): Promise<CommandRun> => {
    const shown = joinCommands(options.shown ?? commands.map(redactArgs));
    // Commands can sit inside a block (`if-shell … "kill-pane …"`): look at every word.
    const words = commands.flatMap((cmd) => cmd.flatMap((a) => a.split(/[\s;"]+/)));
    if (words.some((w) => OPENS.has(w))) parked = false;
    if (words.some((w) => ENDS_PANES.has(w))) {
      // No control client may be attached while panes end (see ENDS_PANES).
      parked = true;
      await release();
    }
    const c = await channel(signal);
    if (c) {
      const line = commandLine(commands);
      let answer;
      inflight++;
      try {
        answer = await c.request(line, signal);
      } catch (err) {
        if (isMuxError(err, "timed_out") && client === c) client = null;
        if (isMuxError(err)) {
          throw new MuxError(
            err.code,
            `Cannot finish ${describeArgv([bin, ...shown])}: ${
              err.code === "timed_out" ? `no answer within ${timeoutMs} ms` : "interrupted"
            }`,
            { argv: [bin, ...shown], ...(err.hint ? { hint: err.hint } : {}) },
          );
        }
        throw err;
      } finally {
        if (--inflight === 0) {
          for (const resolve of drained.splice(0)) resolve();
          touch();
        }
      }
      if (answer) {
        return {
          code: answer.ok ? 0 : 1,
          stdout: answer.stdout,
          stderr: answer.stderr === "" ? "" : `${answer.stderr}\n`,
          argv: [bin, ...shown],
        };
      }
      // The channel ended before answering. A command that opens a pane may have run: running
      // it again could open a second pane, so that one fails; the others are safe to repeat.
      if (words.some((w) => OPENS.has(w))) {
        throw new MuxError(
          "command_failed",
          `Cannot finish ${describeArgv([bin, ...shown])}: the tmux control channel ended first`,
          {
            argv: [bin, ...shown],
            hint: "tmux may have opened the pane anyway; check for a stray pane",
          },
        );
      }
      return await run(commands, signal, options);
    }
    return await cli(commands, signal, options);
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
    transport: () => (client?.alive ? "control" : "cli"),
    async close() {
      closed = true;
      await release();
    },
  };
}
