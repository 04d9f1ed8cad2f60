/**
 * Private to the herdr backend: how the attach command gets started in a herdr pane.
 *
 * herdr cannot start a program in a split: `pane split` opens the user's shell, and `pane run`
 * *types* text into it (docs/backends/herdr.md §8; `src/cli/pane.rs` `pane_split` has no command
 * argument; the argv-launching alternatives need an installed herdr plugin (`plugin pane open
 * --entrypoint`) or replace a whole tab's layout (`layout.apply`)). Typed text is read by the
 * user's own shell (fish, nu, zsh…), which would mangle POSIX quoting, and anything secret in it
 * would show on screen and in history.
 *
 * So nothing variable is ever typed. The command travels in the pane's environment
 * (`pane split --env MUXBRIDGE_LAUNCH=…`, argv to herdr, never a shell), as one POSIX string
 * built only by `lib/sys/shell_quote.ts`; the typed line is the constant {@linkcode LAUNCH_LINE},
 * which every common shell (sh, bash, zsh, fish, nu, elvish, tcsh) reads the same way: `exec`,
 * a path, `-c` and one single-quoted word holding no backslash or quote. `/bin/sh` then
 * expands the variable and `eval`s the string, which `exec`s the program; the pane's process
 * becomes the program (same pid as the shell herdr started).
 *
 * Credentials do not ride in `--env`: that is argv of the `herdr` client, which every user of
 * the machine can read in `/proc/<pid>/cmdline` while it runs (the contract: never on argv).
 * They go into a private file (`lib/sys/credentials_file.ts`: 0600 in the state directory's
 * private `credentials` folder); the launch command sources it, removes it and only then `exec`s the
 * program, so the program gets them in its environment and the file lives only until the
 * pane's shell runs the line.
 *
 * Limits: the user's shell starts first, so its startup files run (they see the command but no
 * credentials); a shell whose startup swallows typeahead (some direnv/devenv setups do, as
 * other herdr clients have reported) loses the line and the pane shows a prompt instead of OpenCode
 * (the credentials file then stays until muxbridge closes the pane); a shell without `exec`
 * (PowerShell) cannot run it.
 *
 * @module
 */

import { type CredentialsFile, sourceAndExec } from "../../lib/sys/credentials_file.ts";

/** The variable that carries the command into the pane. */
export const LAUNCH_VAR = "MUXBRIDGE_LAUNCH";

/**
 * The one line typed into a new pane. Constant: no session value, path or secret is ever typed.
 */
export const LAUNCH_LINE = `exec /bin/sh -c 'eval "$${LAUNCH_VAR}"'`;

/**
 * The POSIX command `/bin/sh` evaluates: it forgets its own variable, reads and removes the
 * credentials file when there is one, then `exec`s the program with every argument quoted once.
 * A missing file stops the shell (`.` is a special built-in): no program runs without them.
 *
 * @param argv The program and its arguments (no NUL).
 * @param credentials The credentials file, if any.
 * @returns The command string, the value of {@linkcode LAUNCH_VAR}.
 *
 * @example
 * ```ts
 * import { launchCommand } from "./_launch.ts";
 * launchCommand(["opencode", "attach"], { file: "/s/credentials/0a.env" });
 * // "unset MUXBRIDGE_LAUNCH; . '/s/credentials/0a.env'; rm -f -- '/s/credentials/0a.env'; exec 'opencode' 'attach'"
 * ```
 */
export function launchCommand(argv: readonly string[], credentials?: CredentialsFile): string {
  return `unset ${LAUNCH_VAR}; ${sourceAndExec(argv, credentials)}`;
}
