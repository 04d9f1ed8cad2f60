/**
 * The one error type muxbridge raises for conditions a caller handles, and the one table that
 * maps its codes to CLI exit codes.
 *
 * Callers match on {@linkcode MuxError.code}, never on the message. `TypeError` and
 * `RangeError` remain for muxbridge's own bugs.
 *
 * @module
 */

/** Every condition a caller may need to tell apart. A closed union: add a code here first. */
export type ErrorCode =
  /** argv or a flag value is wrong (exit 2). */
  | "usage"
  /** A config file, environment value or hello config is invalid (exit 3). */
  | "invalid_config"
  /** No multiplexer is usable here (exit 3). */
  | "no_backend"
  /** A program to run is not installed or not executable (exit 3). */
  | "binary_not_found"
  /** A program is older than muxbridge supports (exit 3). */
  | "unsupported_version"
  /** A program did not finish within its timeout and was killed. */
  | "timed_out"
  /** The caller aborted the operation (exit 130 in CLI mode). */
  | "interrupted"
  /** A program exited with a code its caller does not accept. */
  | "command_failed"
  /** A program printed something that does not have the expected shape. */
  | "unparseable_output"
  /** The multiplexer does not know the pane. */
  | "pane_not_found"
  /** The multiplexer has no room for another pane. */
  | "no_space"
  /** A value (pane id, title, directory, session id) is unsafe or malformed. */
  | "invalid_argument"
  /** The pane is not one muxbridge opened. */
  | "not_owned"
  /** The OpenCode server does not answer. */
  | "server_unreachable"
  /** The OpenCode server refused the credentials. */
  | "auth_failed"
  /** The backend cannot pass credentials to a pane without exposing them. */
  | "auth_unsupported"
  /** The backend cannot do this operation at all. */
  | "unsupported"
  /** The multiplexer itself (its server, its socket) is not reachable. */
  | "backend_unreachable"
  /** A durable state record cannot be read. */
  | "state_corrupt"
  /** A close did not verify: the pane or its program is still there. */
  | "close_unverified"
  /** A file could not be written, renamed or removed (permissions, a read-only or full disk). */
  | "write_failed";

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

/** CLI exit codes of the contract. */
export const EXIT = { ok: 0, failed: 1, usage: 2, environment: 3, interrupted: 130 } as const;

/**
 * Maps an error code to the contract's exit code: usage 2; environment problems 3;
 * interrupted 130; everything else 1.
 *
 * @param code The error's code.
 * @returns The process exit code.
 */
export function exitCodeFor(code: ErrorCode): number {
  switch (code) {
    case "usage":
    case "invalid_argument":
      return EXIT.usage;
    case "invalid_config":
    case "no_backend":
    case "binary_not_found":
    case "unsupported_version":
      return EXIT.environment;
    case "interrupted":
      return EXIT.interrupted;
    default:
      return EXIT.failed;
  }
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
