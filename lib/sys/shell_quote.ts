/**
 * POSIX quoting for the one shell string muxbridge ever builds: the command a pane runs, where a
 * backend cannot take argv. Every value is single-quoted exactly once.
 *
 * @module
 */

/**
 * Quotes one value for a POSIX shell (`sh -c`): wrapped in single quotes, each `'` written as
 * `'\''`. Nothing inside single quotes is special to `sh`.
 *
 * @param value Any string without NUL.
 * @returns The quoted word.
 * @throws {TypeError} When the value holds NUL, which no argv can carry.
 *
 * @example
 * ```ts
 * import { quote } from "./shell_quote.ts";
 * quote("it's $(here)"); // "'it'\\''s $(here)'"
 * ```
 */
export function quote(value: string): string {
  if (value.includes("\0")) throw new TypeError("Cannot quote a value that holds NUL");
  return `'${value.replaceAll("'", "'\\''")}'`;
}

/**
 * Joins argv into one POSIX shell command, each element quoted once.
 *
 * @param argv The program and its arguments.
 * @returns A command `sh -c` runs as exactly that argv.
 *
 * @example
 * ```ts
 * import { shellCommand } from "./shell_quote.ts";
 * shellCommand(["opencode", "attach", "http://x"]); // "'opencode' 'attach' 'http://x'"
 * ```
 */
export function shellCommand(argv: readonly string[]): string {
  if (argv.length === 0) throw new TypeError("Cannot build a command from an empty argv");
  return argv.map(quote).join(" ");
}

/**
 * Wraps argv as an explicit `/bin/sh -c` invocation that `exec`s the program, for backends that
 * take one command string. Never the user's own shell.
 *
 * @param argv The program and its arguments.
 * @returns `["/bin/sh", "-c", "exec 'prog' 'arg' …"]`.
 */
export function shArgv(argv: readonly string[]): string[] {
  return ["/bin/sh", "-c", `exec ${shellCommand(argv)}`];
}
