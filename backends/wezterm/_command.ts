/**
 * Private to the wezterm backend: the argv of every `wezterm cli` call, how a call reaches the
 * right WezTerm, and what a failed exit means.
 *
 * Every call is `wezterm cli --no-auto-start <sub> …`: without `--no-auto-start` a call made
 * where no WezTerm answers would quietly start a headless mux server (§4). The WezTerm is the
 * one `wezterm.socket_path` names, passed as `WEZTERM_UNIX_SOCKET` (which the CLI reads before
 * anything else, §4), else the one muxbridge runs in (its `WEZTERM_UNIX_SOCKET`, inherited).
 *
 * @module
 */

import { commandFailed, runDetails } from "../../lib/backend/_command_failed.ts";
import { type CommandRun, runCommand } from "../../lib/backend/_run_command.ts";
import type { BackendDeps } from "../../lib/backend/backend.ts";
import type { WeztermConfig } from "./_traits.ts";
import { type CredentialsFile, loadCredentials } from "../../lib/sys/credentials_file.ts";
import { MuxError } from "../../lib/sys/errors.ts";
import { SPAWN_TOKEN_VAR, tokenMarker } from "../../lib/backend/spawn_token.ts";
import { validateTarget } from "../../lib/sys/validate.ts";
import { classifyWeztermFailure, weztermMessage } from "./_parse.ts";

/** What to do when there is no pane to split. */
export const ANCHOR_HINT =
  "Run muxbridge in the WezTerm pane new panes should open next to (WEZTERM_PANE), or set wezterm.pane_id";

/** What to do when no WezTerm answers. */
export const SOCKET_HINT =
  "Run muxbridge inside WezTerm (its panes set WEZTERM_UNIX_SOCKET), or set wezterm.socket_path to the GUI's or mux server's socket";

/**
 * The error for a failed `wezterm cli` call.
 *
 * @param action What was being done ("close pane 3").
 * @param run The failed run.
 * @returns `pane_not_found`, `backend_unreachable`, `no_space` or `command_failed`.
 */
export function weztermError(action: string, run: CommandRun): MuxError {
  const message = weztermMessage(run.stderr);
  const details = runDetails(run);
  switch (classifyWeztermFailure(run.stderr)) {
    case "not_found":
      return new MuxError("pane_not_found", `Cannot ${action}: ${message}`, {
        ...details,
        hint: "The pane is gone; `muxbridge list` shows what muxbridge still tracks",
      });
    case "unreachable":
      return new MuxError("backend_unreachable", `Cannot ${action}: ${message}`, {
        ...details,
        hint: SOCKET_HINT,
      });
    case "no_space":
      return new MuxError("no_space", `Cannot ${action}: ${message}`, {
        ...details,
        hint: "Close some panes or enlarge the window",
      });
    default:
      return commandFailed(action, run, message);
  }
}

/** Runs `wezterm` for one backend. */
export interface WeztermCommand {
  /** The program (`wezterm.bin`). */
  readonly bin: string;
  /** The socket the calls reach, when muxbridge knows it (config, else its environment). */
  readonly socket: string | undefined;
  /** Runs `wezterm --version`; resolves for any exit code. */
  version(signal?: AbortSignal): Promise<CommandRun>;
  /** Runs `wezterm cli --no-auto-start <args…>`; resolves for any exit code. */
  cli(args: readonly string[], signal?: AbortSignal): Promise<CommandRun>;
  /** Runs a cli call and returns stdout, throwing {@linkcode weztermError} on a non-zero exit. */
  must(action: string, args: readonly string[], signal?: AbortSignal): Promise<string>;
}

/**
 * Creates the command runner of a wezterm backend.
 *
 * @param deps The backend's deps (runner, env, config `wezterm.*`).
 * @returns The runner.
 */
export function createWeztermCommand(deps: BackendDeps<WeztermConfig>): WeztermCommand {
  const bin = validateTarget("wezterm binary", deps.config.wezterm.bin);
  const configured = deps.config.wezterm.socket_path;
  const inherited = deps.env("WEZTERM_UNIX_SOCKET");
  const socket = configured ?? (inherited ? inherited : undefined);
  const env = configured !== undefined ? { WEZTERM_UNIX_SOCKET: configured } : undefined;
  const notFoundHint =
    "Install WezTerm (its `wezterm` program must be on PATH) or set wezterm.bin to its path";
  const cli = (args: readonly string[], signal?: AbortSignal) =>
    runCommand(deps, [bin, "cli", "--no-auto-start", ...args], {
      signal,
      notFoundHint,
      ...(env ? { env } : {}),
    });
  return {
    bin,
    socket,
    version: (signal) => runCommand(deps, [bin, "--version"], { signal, notFoundHint }),
    cli,
    async must(action, args, signal) {
      const run = await cli(args, signal);
      if (run.code !== 0) throw weztermError(action, run);
      return run.stdout;
    },
  };
}

/** Where and how a new pane splits. */
export interface SplitPlan {
  /** The pane to split. */
  target: string;
  /** The side the new pane goes. */
  side: "right" | "bottom";
  /** The new pane's share of the split pane, percent. */
  percent: number;
  /** The new pane's working directory. */
  cwd: string;
  /** What the new pane runs (argv: `split-pane` runs it without a shell). */
  program: readonly string[];
}

/**
 * `split-pane --pane-id <target> --right|--bottom --percent <n> --cwd <dir> -- <program…>`
 * (§1): the new pane's id is printed, focus moves to it (no flag keeps it).
 *
 * @param plan The split.
 * @returns The argv after `wezterm cli --no-auto-start`.
 */
export function splitArgs(plan: SplitPlan): string[] {
  return [
    "split-pane",
    "--pane-id",
    plan.target,
    `--${plan.side}`,
    "--percent",
    String(plan.percent),
    `--cwd=${plan.cwd}`,
    "--",
    ...plan.program,
  ];
}

/**
 * The program a new pane runs. The argv as it is when there is nothing to add; else an explicit
 * `/bin/sh -c` that sources the credentials file (then removes it) and exports the spawn token,
 * then `exec`s the argv, passed as positional parameters (never parsed by the shell):
 * `/bin/sh -c '. <file>; rm -f -- <file>; export MUXBRIDGE_SPAWN_TOKEN=<token>; exec "$@"'
 * muxbridge <argv…>`. `split-pane` has no environment flag (§1), and a variable in the CLI's
 * own environment reaching the pane is undocumented and overridden by the user's
 * `set_environment_variables`, so neither credentials nor the token ride there.
 *
 * @param argv The program and its arguments.
 * @param extra The credentials file and the spawn token, either optional.
 * @returns The argv for `split-pane`.
 */
export function programArgv(
  argv: readonly string[],
  extra: { credentials?: CredentialsFile; token?: string },
): string[] {
  const steps: string[] = [];
  if (extra.credentials) steps.push(loadCredentials(extra.credentials));
  if (extra.token !== undefined) {
    tokenMarker(extra.token); // throws for anything but a token
    steps.push(`export ${SPAWN_TOKEN_VAR}=${extra.token}`);
  }
  if (steps.length === 0) return [...argv];
  return ["/bin/sh", "-c", `${steps.join("; ")}; exec "$@"`, "muxbridge", ...argv];
}
