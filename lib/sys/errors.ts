/**
 * The one error type muxbridge raises for conditions a caller handles, and the one table that
 * maps its codes to CLI exit codes.
 *
 * Callers match on {@linkcode MuxError.code}, never on the message. `TypeError` and
 * `RangeError` remain for muxbridge's own bugs.
 *
 * @module
 */

/** CLI exit codes of the contract. */
export const EXIT = { ok: 0, failed: 1, usage: 2, environment: 3, interrupted: 130 } as const;

/**
 * Every error code, with its CLI exit code and what it means: the one table that maps codes to
 * exit codes (README "Exit codes" shows it, generated from here). Usage errors are 2,
 * environment problems 3, an interruption 130, every other failure 1.
 */
export const ERROR_CODES = {
  usage: { exit: EXIT.usage, meaning: "argv is wrong: unknown command or flag, a missing value" },
  invalid_argument: {
    exit: EXIT.usage,
    meaning: "a value (pane id, session id, directory, URL) is unsafe or malformed",
  },
  invalid_config: {
    exit: EXIT.environment,
    meaning:
      "a config file, environment value or hello config is invalid, or a named file is missing",
  },
  no_backend: { exit: EXIT.environment, meaning: "no multiplexer is usable here" },
  binary_not_found: {
    exit: EXIT.environment,
    meaning: "a program to run is not installed or not executable",
  },
  unsupported_version: {
    exit: EXIT.environment,
    meaning: "a program (multiplexer, OpenCode) is a version muxbridge does not support",
  },
  interrupted: { exit: EXIT.interrupted, meaning: "Ctrl+C (SIGINT) ended the command" },
  timed_out: { exit: EXIT.failed, meaning: "a program did not finish within its timeout" },
  command_failed: { exit: EXIT.failed, meaning: "a program exited with a code its caller refuses" },
  unparseable_output: {
    exit: EXIT.failed,
    meaning: "a program printed something without the expected shape",
  },
  pane_not_found: {
    exit: EXIT.failed,
    meaning: "a pane the operation needs (such as the one to split next to) does not exist",
  },
  no_space: { exit: EXIT.failed, meaning: "the multiplexer has no room for another pane" },
  not_owned: { exit: EXIT.failed, meaning: "the pane is not one muxbridge opened" },
  server_unreachable: { exit: EXIT.failed, meaning: "the OpenCode server does not answer" },
  auth_failed: { exit: EXIT.failed, meaning: "the OpenCode server refused the credentials" },
  auth_unsupported: {
    exit: EXIT.failed,
    meaning: "the backend cannot pass credentials to a pane without exposing them",
  },
  session_not_found: {
    exit: EXIT.failed,
    meaning: "the OpenCode server does not know the session",
  },
  unsupported: { exit: EXIT.failed, meaning: "the backend cannot do this operation at all" },
  backend_unreachable: {
    exit: EXIT.failed,
    meaning: "the multiplexer itself (its server, its socket) does not answer",
  },
  state_corrupt: { exit: EXIT.failed, meaning: "a durable state record cannot be read" },
  close_unverified: {
    exit: EXIT.failed,
    meaning: "a close did not verify: the pane or its program is still there",
  },
} as const satisfies Record<string, { exit: number; meaning: string }>;

/** Every condition a caller may need to tell apart: a closed union, the keys of
 * {@linkcode ERROR_CODES} (add a code there first). */
export type ErrorCode = keyof typeof ERROR_CODES;

/** Options of {@linkcode MuxError}. */
export interface MuxErrorOptions {
  /** What the user can do about it, one sentence. */
  hint?: string;
  /** The underlying failure. */
  cause?: unknown;
  /** The argv of the program that failed, when the failure is a program's. */
  argv?: readonly string[];
  /** The program's exit code, when it exited. */
  exitCode?: number;
  /** The program's stderr, cut to {@linkcode MAX_STDERR} bytes. */
  stderr?: string;
}

/** The most stderr text an error keeps. */
export const MAX_STDERR = 512;

/**
 * A failure a caller can act on, identified by {@linkcode ErrorCode}.
 *
 * @example Match by code
 * ```ts
 * import { MuxError } from "./errors.ts";
 * const err = new MuxError("pane_not_found", 'Cannot close pane "%9": tmux does not know it');
 * if (err.code === "pane_not_found") console.log("already gone");
 * ```
 */
export class MuxError extends Error {
  /** What went wrong, as a closed code. */
  readonly code: ErrorCode;
  /** What the user can do about it. */
  readonly hint?: string;
  /** The argv of the program that failed. */
  readonly argv?: readonly string[];
  /** The program's exit code. */
  readonly exitCode?: number;
  /** The program's stderr, cut short. */
  readonly stderr?: string;

  /**
   * Creates an error.
   *
   * @param code What went wrong.
   * @param message Sentence case, no final period, the failed action first ("Cannot …").
   * @param options Hint, cause and the failed program's details.
   */
  constructor(code: ErrorCode, message: string, options: MuxErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "MuxError";
    this.code = code;
    if (options.hint !== undefined) this.hint = options.hint;
    if (options.argv !== undefined) this.argv = options.argv;
    if (options.exitCode !== undefined) this.exitCode = options.exitCode;
    if (options.stderr !== undefined) this.stderr = cut(options.stderr, MAX_STDERR);
  }
}

/**
 * Tells whether a value is a {@linkcode MuxError}, optionally with one of the given codes.
 *
 * @param err Anything thrown.
 * @param codes Codes to accept; any code when empty.
 * @returns Whether `err` is such an error.
 */
export function isMuxError(err: unknown, ...codes: ErrorCode[]): err is MuxError {
  return err instanceof MuxError && (codes.length === 0 || codes.includes(err.code));
}

/**
 * Turns anything thrown into a {@linkcode MuxError}, keeping a MuxError as it is.
 *
 * @param err Anything thrown.
 * @param code The code for a foreign error.
 * @returns A MuxError.
 */
export function toMuxError(err: unknown, code: ErrorCode = "command_failed"): MuxError {
  if (err instanceof MuxError) return err;
  const message = err instanceof Error ? err.message : String(err);
  return new MuxError(code, message, { cause: err });
}

/**
 * Maps an error code to the contract's exit code ({@linkcode ERROR_CODES}).
 *
 * @param code The error's code.
 * @returns The process exit code.
 *
 * @example
 * ```ts
 * import { exitCodeFor } from "./errors.ts";
 * exitCodeFor("usage"); // 2
 * ```
 */
export function exitCodeFor(code: ErrorCode): number {
  return ERROR_CODES[code].exit;
}

/**
 * Cuts text to at most `max` UTF-16 units, marking the cut.
 *
 * @param text The text.
 * @param max The most characters to keep.
 * @returns The text, cut with a trailing "…" when it was longer.
 */
export function cut(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}…`;
}
