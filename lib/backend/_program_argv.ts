/**
 * Private to backends: the one check of the program a pane runs, before any backend turns it into
 * its multiplexer's argv, so that every backend refuses the same commands with the same error.
 *
 * @module
 */

import { MuxError } from "../sys/errors.ts";
import { describeArgv } from "../sys/exec.ts";

/**
 * Checks a pane's program argv: a program name to run, and no NUL in any element (no argv can
 * carry one to `execve`, and a multiplexer would cut the element there).
 *
 * @param argv The program and its arguments.
 * @throws {MuxError} `invalid_argument` for an empty argv or program name, or a NUL.
 *
 * @example
 * ```ts
 * import { checkProgramArgv } from "./_program_argv.ts";
 * checkProgramArgv(["opencode", "attach", "http://127.0.0.1:4096"]); // fine
 * // checkProgramArgv([]) and checkProgramArgv(["sh", "a\0b"]) throw invalid_argument
 * ```
 */
export function checkProgramArgv(argv: readonly string[]): void {
  if (argv.length === 0 || argv[0] === "" || argv.some((a) => a.includes("\0"))) {
    throw new MuxError("invalid_argument", `Cannot run ${describeArgv(argv)} in a pane`, {
      hint: "The pane command needs a program and no NUL characters",
    });
  }
}
