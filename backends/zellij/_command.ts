/**
 * Private to the zellij backend: how one zellij command is run (the session flag first, the
 * timeout and signal always) and what a failed exit means.
 *
 * @module
 */

import { commandFailed, runDetails } from "../../lib/backend/_command_failed.ts";
import { type CommandRun, runCommand } from "../../lib/backend/_run_command.ts";
import type { BackendDeps } from "../../lib/backend/backend.ts";
import type { ZellijConfig } from "./_traits.ts";
import { MuxError } from "../../lib/sys/errors.ts";
import { validatePlainName, validateTarget } from "../../lib/sys/validate.ts";

/**
 * Tells a session problem from any other failure. Evidence (§1, zellij
 * `commands.rs`): with no session running the CLI exits 1 with `There is no active session!`;
 * an unknown `--session` exits 1 with `Session 'x' not found. The following sessions are
 * active:`; several sessions and no name exits 1 with `Please specify the session name…`; a
 * server that does not answer a listing within 1 s gives `Timeout listing panes` (§3).
 *
 * @param stderr zellij's stderr.
 * @returns Whether the session (the server) is what failed.
 */
function isSessionFailure(stderr: string): boolean {
  return /There is no active session|Session '.*' not found|Please specify the session name|Timeout listing panes|No such file or directory|Connection refused/
    .test(stderr);
}

/**
 * Builds the error for a failed zellij command. Exit 2 is clap's usage error (a malformed pane
 * id, an unknown flag of this version: §1); exit 1 is the session or the server.
 *
 * @param action What was being done ("close pane \"terminal_3\"").
 * @param run The failed run.
 * @returns A `backend_unreachable` or `command_failed` error.
 */
export function zellijError(action: string, run: CommandRun): MuxError {
  const details = runDetails(run);
  if (run.code === 1 && isSessionFailure(details.stderr)) {
    // One line: the session list zellij prints on the following lines is kept, joined.
    const text = details.stderr.replace(/\s*\n\s*/g, " ");
    return new MuxError("backend_unreachable", `Cannot ${action}: ${text}`, {
      ...details,
      hint:
        "Run inside zellij, or set zellij.session to a running session (`zellij list-sessions`)",
    });
  }
  return commandFailed(action, run);
}

/** Runs zellij commands for one backend. */
export interface ZellijCommand {
  /** The binary. */
  readonly bin: string;
  /** The session muxbridge addresses, when known. */
  readonly session: string | undefined;
  /** Runs `zellij [--session S] action <args…>`; resolves for any exit code. */
  action(args: readonly string[], signal?: AbortSignal): Promise<CommandRun>;
  /** Runs `zellij --version` (needs no session). */
  version(signal?: AbortSignal): Promise<CommandRun>;
  /** Runs an action and returns stdout, throwing {@linkcode zellijError} on a non-zero exit. */
  must(what: string, args: readonly string[], signal?: AbortSignal): Promise<string>;
}

/**
 * Creates the command runner of a zellij backend. The session is `zellij.session`, else the
 * session muxbridge runs in (`ZELLIJ_SESSION_NAME`); it is always passed as the global
 * `--session` flag before `action` (§1), so a changed environment cannot redirect a
 * command to another session.
 *
 * @param deps The backend's deps (runner, config, identity).
 * @returns The runner.
 */
export function createZellijCommand(deps: BackendDeps<ZellijConfig>): ZellijCommand {
  const bin = deps.config.zellij.bin;
  const layer = deps.identity.layers.find((l) => l.backend === "zellij");
  const session = deps.config.zellij.session ?? layer?.session;
  // zellij joins the name onto its socket directory: a name from the environment is checked
  // like the config's (the config's schema checked that one already), and named as it came.
  const sessionFrom = deps.config.zellij.session !== undefined
    ? "zellij.session"
    : "ZELLIJ_SESSION_NAME";
  const exec = async (args: readonly string[], signal?: AbortSignal): Promise<CommandRun> =>
    await runCommand(deps, [validateTarget("zellij binary", bin), ...args], {
      signal,
      notFoundHint: "Install zellij >= 0.44.1 or set zellij.bin to its path",
    });
  const sessionFlags = () =>
    session === undefined ? [] : ["--session", validatePlainName(sessionFrom, session)];
  const action = (args: readonly string[], signal?: AbortSignal) =>
    exec([...sessionFlags(), "action", ...args], signal);
  return {
    bin,
    session,
    action,
    version: (signal) => exec(["--version"], signal),
    async must(what, args, signal) {
      const result = await action(args, signal);
      if (result.code !== 0) throw zellijError(what, result);
      return result.stdout;
    },
  };
}
