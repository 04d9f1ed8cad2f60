/**
 * Private to the cmux backend: the one line typed into a new cmux terminal. cmux has no way to
 * start a program by argv: `new-split --command` / `respawn-pane --command` type the text plus
 * Enter into the terminal's interactive shell (docs/backends/cmux.md §3), whatever shell the user has.
 *
 * @module
 */

import { checkProgramArgv } from "../../lib/backend/_program_argv.ts";
import { MuxError } from "../../lib/sys/errors.ts";
import { quote, shellCommand } from "../../lib/sys/shell_quote.ts";
import { hasUnsafeChars } from "../../lib/sys/validate.ts";

/**
 * Builds ` cd '<dir>' && exec '<prog>' '<arg>' …`, every value single-quoted once by
 * `lib/sys/shell_quote.ts`. `exec` replaces the shell, so the terminal closes when the program ends.
 *
 * The line is read by the user's interactive shell, not by `/bin/sh`: POSIX single quoting means
 * the same in sh, bash, zsh and fish as long as no value holds a backslash (inside single quotes
 * fish reads `\\` and `\'` as escapes), so such values are refused, as are control characters
 * (a newline would end the line early). The leading space keeps the line out of bash, zsh and fish
 * history (ignorespace / HIST_IGNORE_SPACE / fish's default).
 *
 * @param cwd The validated absolute directory.
 * @param argv The program and its arguments.
 * @returns The line, without the Enter cmux adds.
 * @throws {MuxError} `invalid_argument` for a value the line cannot carry safely.
 */
export function typedCommand(cwd: string, argv: readonly string[]): string {
  checkProgramArgv(argv);
  for (const value of [cwd, ...argv]) {
    if (value.includes("\\") || value.includes("\0") || hasUnsafeChars(value)) {
      throw new MuxError(
        "invalid_argument",
        `Cannot type ${
          JSON.stringify(value.slice(0, 80))
        } into a cmux terminal: it holds a backslash or control characters`,
        {
          hint:
            "cmux starts programs through the user's interactive shell; use a path without backslashes",
        },
      );
    }
  }
  return ` cd ${quote(cwd)} && exec ${shellCommand(argv)}`;
}
