/**
 * Private to the herdr backend: how the attach command gets started in a herdr pane.
 *
 * herdr cannot start a program in a split: `pane split` opens the user's shell, and `pane run`
 * *types* text into it (herdr.md §8; `src/cli/pane.rs` `pane_split` has no command argument;
 * the argv-launching alternatives need an installed herdr plugin (`plugin pane open
 * --entrypoint`) or replace a whole tab's layout (`layout.apply`)). Typed text is read by the
 * user's own shell (fish, nu, zsh…), which would mangle POSIX quoting, and anything secret in it
 * would show on screen and in history.
 *
 * So nothing variable is ever typed. The command travels in the pane's environment
 * (`pane split --env MUXBRIDGE_LAUNCH=…`, argv to herdr, never a shell), as one POSIX string
 * built only by `lib/shell_quote.ts`; the typed line is the constant {@linkcode LAUNCH_LINE},
 * which every common shell (sh, bash, zsh, fish, nu, elvish, tcsh) reads the same way: `exec`,
 * a path, `-c` and one single-quoted word holding no backslash or quote. `/bin/sh` then
 * expands the variable and `eval`s the string, which `exec`s the program; the pane's process
 * becomes the program (same pid as the shell herdr started). Credentials ride in `--env` too.
 *
 * Limits: the user's shell starts first, so its startup files run
 * and see the environment (credentials included); a shell whose startup swallows typeahead
 * (some direnv/devenv setups, pi-herdr-subagents' post-mortem in research peers.md) loses the
 * line and the pane shows a prompt instead of OpenCode; a shell without `exec` (PowerShell)
 * cannot run it.
 *
 * @module
 */

import { shellCommand } from "../../lib/shell_quote.ts";

/** The variable that carries the command into the pane. */
export const LAUNCH_VAR = "MUXBRIDGE_LAUNCH";

/**
 * The one line typed into a new pane. Constant: no session value, path or secret is ever typed.
 */
export const LAUNCH_LINE = `exec /bin/sh -c 'eval "$${LAUNCH_VAR}"'`;

/**
 * The POSIX command `/bin/sh` evaluates: it forgets its own variable, then `exec`s the program
 * with every argument quoted once.
 *
 * @param argv The program and its arguments (no NUL).
 * @returns The command string, the value of {@linkcode LAUNCH_VAR}.
 */
export function launchCommand(argv: readonly string[]): string {
  return `unset ${LAUNCH_VAR}; exec ${shellCommand(argv)}`;
}
