/**
 * Private to the kitty backend: which remote-control program runs (`kitten @` where present, else
 * `kitty @`), how every call addresses the kitty instance (`--to`), and what a failed exit means.
 * A call the socket can carry goes over kitty's Unix socket instead (`_socket.ts`), with the same
 * outcome as the `kitty @` run it stands for.
 *
 * @module
 */

import { commandFailed, runDetails } from "../../lib/backend/_command_failed.ts";
import { keepSuccess } from "../../lib/backend/_keep_success.ts";
import { type CommandRun, runCommand } from "../../lib/backend/_run_command.ts";
import { gateVersion } from "../../lib/backend/_version_gate.ts";
import type { BackendDeps } from "../../lib/backend/backend.ts";
import { isMuxError, MuxError } from "../../lib/sys/errors.ts";
import { unixRequest, type UnixRequester } from "../../lib/sys/unix_request.ts";
import { validateTarget } from "../../lib/sys/validate.ts";
import { kittyMessage, kittySocketPath, kittySocketRun } from "./_socket.ts";
import { KITTY_GATE, type KittyConfig } from "./_traits.ts";

/** What to do when remote control cannot be reached. */
export const REMOTE_CONTROL_HINT =
  "Add `allow_remote_control yes` and `listen_on unix:/tmp/kitty` to kitty.conf and restart kitty " +
  "(its windows then get KITTY_LISTEN_ON), or set kitty.listen_on to the address kitty listens on";

/** Why a kitty remote-control call failed, read from its stderr. */
export type KittyFailure = "not_found" | "unreachable" | "bad_address" | "other";

/**
 * Reads a failed `kitty @` call's stderr. Evidence (kitty 0.26.5, live): an unknown window exits
 * 1 with `No matching windows for expression: id:999` (close-window, signal-child,
 * set-window-title), an unknown anchor in `launch --match=window_id:N` a traceback ending
 * `No location specified before window_id:N`;
 * a missing socket `No listen on socket found at: unix:/tmp/x.sock`, a stale socket a Python
 * traceback ending `ConnectionRefusedError: [Errno 111] Connection refused`, a bad address
 * `Invalid listen on address: bogus`, no address outside kitty `Failed to open controlling
 * terminal` (§1). The Go `kitten` (>= 0.27) words connection failures as Go dial
 * errors (`dial unix …: connect: …`), matched loosely.
 *
 * @param stderr The program's stderr.
 * @returns The failure kind.
 */
export function classifyKittyFailure(stderr: string): KittyFailure {
  // launch --match with no matching tab falls back to a window search that does not know the
  // `window_id` field: a traceback ending "No location specified before window_id:999" (live).
  if (/No matching (windows|tabs)|No location specified before window_id:/i.test(stderr)) {
    return "not_found";
  }
  if (/Invalid listen on address/i.test(stderr)) return "bad_address";
  if (
    /No listen on socket|kitty's socket|Connection refused|ConnectionRefused|controlling terminal|dial unix|dial tcp|connect: |Remote control is disabled|timed out waiting for a response/i
      .test(stderr)
  ) return "unreachable";
  return "other";
}

/**
 * Builds the error for a failed remote-control call.
 *
 * @param action What was being done ("close window 3").
 * @param run The failed run.
 * @returns A `pane_not_found`, `backend_unreachable`, `invalid_config` or `command_failed` error.
 */
function kittyError(action: string, run: CommandRun): MuxError {
  // A Python traceback is long; its last line says what happened.
  const lines = run.stderr.trim().split("\n").filter((l) => l.trim() !== "");
  const last = lines.at(-1) ?? "";
  const details = runDetails(run);
  switch (classifyKittyFailure(run.stderr)) {
    case "not_found":
      return new MuxError("pane_not_found", `Cannot ${action}: kitty does not know it (${last})`, {
        ...details,
        hint: "The window is gone; `muxbridge list` shows what muxbridge still tracks",
      });
    case "unreachable":
      return new MuxError(
        "backend_unreachable",
        `Cannot ${action}: kitty remote control does not answer (${last})`,
        { ...details, hint: REMOTE_CONTROL_HINT },
      );
    case "bad_address":
      return new MuxError("invalid_config", `Cannot ${action}: ${last}`, {
        ...details,
        hint: "Set kitty.listen_on to an address such as unix:/tmp/kitty",
      });
    default:
      return commandFailed(action, run, last);
  }
}

/** The remote-control program found by {@linkcode KittyCommand.program}. */
export interface KittyProgram {
  /** The binary (`kitten`, `kitty` or `kitty.bin`). */
  bin: string;
  /** The version, semver. */
  version: string;
  /** The version line as printed. */
  versionText: string;
}

/** Runs kitty remote-control calls for one backend. */
export interface KittyCommand {
  /** The remote-control address (`--to`). @throws {MuxError} `backend_unreachable` when none. */
  address(): string;
  /** Finds the program and reads its version, once (a failure is retried next time). */
  program(signal?: AbortSignal): Promise<KittyProgram>;
  /**
   * Runs `<bin> @ --to <address> <args…>` (over the socket where it can); resolves for any exit
   * code.
   */
  rc(args: readonly string[], signal?: AbortSignal): Promise<CommandRun>;
  /** Runs and returns stdout, throwing {@linkcode kittyError} on a non-zero exit. */
  must(action: string, args: readonly string[], signal?: AbortSignal): Promise<string>;
}

const ADDRESS = /^(unix|tcp|tcp6|fd):./;

/**
 * Creates the command runner of a kitty backend.
 *
 * @param deps The backend's deps (runner, env, identity, config `kitty.*`).
 * @param send The Unix socket seam. @default `unixRequest` (lib/sys/unix_request.ts)
 * @returns The runner.
 */
export function createKittyCommand(
  deps: BackendDeps<KittyConfig>,
  send: UnixRequester = unixRequest,
): KittyCommand {
  const layer = deps.identity.layers.find((l) => l.backend === "kitty");

  const address = (): string => {
    const configured = deps.config.kitty.listen_on;
    const env = deps.env("KITTY_LISTEN_ON");
    const value = configured ?? layer?.socket ?? (env ? env : undefined);
    if (value === undefined) {
      // Without an address, `kitty @` talks through the controlling tty, which a bridge spawned
      // by OpenCode does not have (§1: it dies with "Failed to open controlling
      // terminal"). Refuse up front with the fix.
      throw new MuxError(
        "backend_unreachable",
        "Cannot reach kitty: no remote-control address (KITTY_LISTEN_ON is unset)",
        { hint: REMOTE_CONTROL_HINT },
      );
    }
    validateTarget("kitty listen_on address", value);
    if (!ADDRESS.test(value)) {
      throw new MuxError("invalid_config", `Cannot use kitty address ${JSON.stringify(value)}`, {
        hint: "kitty.listen_on is unix:/path, unix:@name or tcp:host:port, as kitty's listen_on",
      });
    }
    return value;
  };

  const versionOf = async (bin: string, signal?: AbortSignal): Promise<KittyProgram> => {
    // A missing binary is worded by `resolve`: it knows every candidate.
    const run = await runCommand(deps, [validateTarget("kitty binary", bin), "--version"], {
      signal,
    });
    const text = run.stdout.trim().split("\n")[0] ?? "";
    if (run.code !== 0) throw kittyError("read the kitty version", run);
    const version = gateVersion(KITTY_GATE, text, { argv: run.argv }).semver;
    return { bin, version, versionText: text };
  };

  const resolve = async (signal?: AbortSignal): Promise<KittyProgram> => {
    const configured = deps.config.kitty.bin;
    const candidates = configured ? [configured] : ["kitten", "kitty"];
    let missing: unknown;
    for (const bin of candidates) {
      try {
        return await versionOf(bin, signal);
      } catch (err) {
        // `kitten` exists from 0.27 on; Debian 12's kitty 0.26.5 has only `kitty @` (§1), so a
        // missing kitten falls back to kitty.
        if (!isMuxError(err, "binary_not_found")) throw err;
        missing = err;
      }
    }
    throw new MuxError(
      "binary_not_found",
      configured
        ? `Cannot run kitty.bin "${configured}": program not found`
        : "Cannot find kitten or kitty on PATH",
      {
        cause: missing,
        hint: "Install kitty >= 0.26 (e.g. apt install kitty) or set kitty.bin to kitten's path",
      },
    );
  };

  const program = keepSuccess(resolve);

  const rc = async (args: readonly string[], signal?: AbortSignal) => {
    const { bin, version } = await program(signal);
    const to = address();
    const argv = [bin, "@", "--to", to, ...args];
    const path = kittySocketPath(to);
    const message = path === undefined ? undefined : kittyMessage(args);
    if (path !== undefined && message !== undefined) {
      const run = await kittySocketRun(send, path, message, version, {
        timeoutMs: deps.config.command_timeout_ms,
        clock: deps.clock,
        shown: argv,
        ...(signal ? { signal } : {}),
      });
      if (run !== undefined) return run;
    }
    return runCommand(deps, argv, { signal });
  };

  return {
    address,
    program,
    rc,
    async must(action, args, signal) {
      const run = await rc(args, signal);
      if (run.code !== 0) throw kittyError(action, run);
      return run.stdout;
    },
  };
}
