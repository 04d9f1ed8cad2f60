/**
 * The spawn token: a random value a backend puts on a new pane in the very command that creates
 * it, so that a pane whose spawn answer was lost (the call timed out, its output was unreadable,
 * muxbridge was killed mid-spawn) can still be found and closed. The durable pending record
 * written before the spawn holds the token (`lib/session/lost_spawns.ts`); the record is what
 * makes such a pane muxbridge's, never the token alone.
 *
 * Where a backend has no per-pane place muxbridge can set at creation, the token rides in the
 * pane's start command: {@linkcode tokenArgv} runs the program through `/bin/sh -c 'exec "$@"'`
 * with the marker as `$0`, which `exec` replaces at once (the program keeps its pid and exact
 * argv), while the multiplexer keeps showing the command the pane was started with.
 *
 * @module
 */

/** What a spawn token looks like: 32 lower-case hex digits (128 random bits). */
export const SPAWN_TOKEN: RegExp = /^[0-9a-f]{32}$/;

/** The environment variable that carries the token where a backend passes one to the pane. */
export const SPAWN_TOKEN_VAR = "MUXBRIDGE_SPAWN_TOKEN";

/**
 * A fresh spawn token.
 *
 * @returns 32 hex digits from the platform's secure random source.
 *
 * @example
 * ```ts
 * import { newSpawnToken, SPAWN_TOKEN } from "./spawn_token.ts";
 * SPAWN_TOKEN.test(newSpawnToken()); // true
 * ```
 */
export function newSpawnToken(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * The marker a token leaves in a pane's start command: `muxbridge-spawn=<token>`.
 *
 * @param token The spawn token.
 * @returns The marker.
 * @throws {RangeError} for a value that is not a spawn token (a bug of the caller).
 */
export function tokenMarker(token: string): string {
  if (!SPAWN_TOKEN.test(token)) throw new RangeError(`Cannot use spawn token "${token}"`);
  return `muxbridge-spawn=${token}`;
}

/**
 * The argv that runs `argv` with the token in the start command:
 * `/bin/sh -c 'exec "$@"' muxbridge-spawn=<token> <argv…>`. No value is ever parsed by the
 * shell: they arrive as positional parameters, and `exec` replaces the shell with the program
 * (same pid, exactly `argv`).
 *
 * @param argv The program and its arguments.
 * @param token The spawn token; undefined: `argv` unchanged.
 * @returns The argv to start.
 *
 * @example
 * ```ts
 * import { tokenArgv } from "./spawn_token.ts";
 * tokenArgv(["opencode", "attach"], "0123456789abcdef0123456789abcdef");
 * // ["/bin/sh", "-c", 'exec "$@"', "muxbridge-spawn=0123456789abcdef0123456789abcdef", "opencode", "attach"]
 * ```
 */
export function tokenArgv(argv: readonly string[], token: string | undefined): string[] {
  if (token === undefined) return [...argv];
  return ["/bin/sh", "-c", 'exec "$@"', tokenMarker(token), ...argv];
}

/**
 * Whether a pane's start command (as the multiplexer shows it) carries the token.
 *
 * @param command The start command text.
 * @param token The spawn token.
 * @returns Whether the marker is in it, as a whole word.
 */
export function carriesToken(command: string | undefined, token: string): boolean {
  if (command === undefined) return false;
  const marker = tokenMarker(token);
  const at = command.indexOf(marker);
  // The token is fixed-length hex: a longer run of hex after it would be another value.
  return at >= 0 && !/[0-9a-f]/.test(command.charAt(at + marker.length));
}

/**
 * The spawn token a pane's start command (as the multiplexer shows it) carries, if any.
 *
 * @param command The start command text; undefined: not shown.
 * @returns The token, null when the command carries none, undefined when there is no command.
 *
 * @example
 * ```ts
 * import { tokenIn } from "./spawn_token.ts";
 * tokenIn("/bin/sh -c exec \"$@\" muxbridge-spawn=0123456789abcdef0123456789abcdef opencode");
 * // "0123456789abcdef0123456789abcdef"
 * tokenIn("bash"); // null
 * ```
 */
export function tokenIn(command: string | undefined): string | null | undefined {
  if (command === undefined) return undefined;
  const m = /(?:^|[^0-9a-z-])muxbridge-spawn=([0-9a-f]{32})(?![0-9a-f])/.exec(command);
  return m ? m[1] : null;
}
