/**
 * Private to backends: one run of a backend's program, the way every backend runs one.
 *
 * @module
 */

import { isMuxError, MuxError } from "../sys/errors.ts";
import type { RunResult } from "../sys/exec.ts";
import type { BackendDeps } from "./backend.ts";

/** One run of a backend's program, with its argv for messages. */
export interface CommandRun extends RunResult {
  /** The argv that ran, as messages show it. */
  argv: readonly string[];
}

/** Options of {@linkcode runCommand}. */
export interface RunCommandOptions {
  /** Aborts the run. */
  signal?: AbortSignal;
  /** Variables for the program (see `RunOptions.env`). */
  env?: Readonly<Record<string, string>>;
  /** Text for the program's stdin (see `RunOptions.stdin`). */
  stdin?: string;
  /** The argv messages show, when it must differ from the one run. @default argv */
  shown?: readonly string[];
  /**
   * The backend's hint for a missing program: a `binary_not_found` from the seam is thrown again
   * with it (and with `shown`). Absent: that error passes as it is, for the caller to word.
   */
  notFoundHint?: string;
}

/**
 * Runs one program of a backend the way every backend does: through `deps.run`, bounded by
 * `config.command_timeout_ms`. Validating `argv` stays with the caller.
 *
 * @param deps The backend's deps (runner, config).
 * @param argv The program and its arguments.
 * @param options Signal, environment, stdin, the argv shown, the hint for a missing program.
 * @returns The result, for any exit code, with the shown argv.
 * @throws {MuxError} `binary_not_found`, `timed_out` or `interrupted`, as the seam does.
 */
export async function runCommand(
  deps: BackendDeps,
  argv: readonly string[],
  options: RunCommandOptions = {},
): Promise<CommandRun> {
  const shown = options.shown ?? argv;
  try {
    const result = await deps.run(argv, {
      timeoutMs: deps.config.command_timeout_ms,
      signal: options.signal,
      ...(options.env !== undefined ? { env: options.env } : {}),
      ...(options.stdin !== undefined ? { stdin: options.stdin } : {}),
    });
    return { ...result, argv: shown };
  } catch (err) {
    if (options.notFoundHint !== undefined && isMuxError(err, "binary_not_found")) {
      throw new MuxError("binary_not_found", err.message, {
        argv: shown,
        cause: err,
        hint: options.notFoundHint,
      });
    }
    throw err;
  }
}
