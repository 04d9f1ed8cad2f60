/**
 * Credentials for an OpenCode server and where they come from in an environment. OpenCode 1.x's
 * clients read `OPENCODE_SERVER_PASSWORD` (and `OPENCODE_SERVER_USERNAME`, default `opencode`);
 * 2.x's read `OPENCODE_PASSWORD`, then `OPENCODE_SERVER_PASSWORD`, with the user `opencode`
 * (`docs/opencode.md`). A pane gets them only through its environment, never on argv
 * ({@linkcode OpencodeLine.pane}).
 *
 * @module
 */

import type { LineId } from "./line.ts";
import { ServiceCredentials, serviceDir } from "./v2/service.ts";

/** Credentials for the OpenCode server. */
export interface Credentials {
  /** User name. */
  username: string;
  /** Password. */
  password: string;
}

/**
 * Credentials from the environment, as the given line's own clients read them (1.x when the
 * line is not known yet).
 *
 * @param env The environment lookup.
 * @param line The server's line. @default 1
 * @returns The credentials, or undefined without a password.
 *
 * @example
 * ```ts
 * import { envCredentials } from "./credentials.ts";
 * const env = new Map([["OPENCODE_PASSWORD", "pw"]]);
 * envCredentials((n) => env.get(n), 2); // { username: "opencode", password: "pw" }
 * envCredentials((n) => env.get(n)); // undefined: 1.x reads OPENCODE_SERVER_PASSWORD
 * ```
 */
export function envCredentials(
  env: (name: string) => string | undefined,
  line: LineId = 1,
): Credentials | undefined {
  if (line === 2) {
    const password = env("OPENCODE_PASSWORD") || env("OPENCODE_SERVER_PASSWORD");
    return password ? { username: "opencode", password } : undefined;
  }
  const password = env("OPENCODE_SERVER_PASSWORD");
  if (!password) return undefined;
  return { username: env("OPENCODE_SERVER_USERNAME") || "opencode", password };
}

/**
 * Every place the credentials for `url` may come from, in order: 1.x's variables, 2.x's
 * variables, then the 2.x service's own state file when it names `url`'s origin (a live object
 * that follows the service's restarts). For the commands that are given a URL without knowing
 * which line serves it (`spawn`, `bridge --url`, `doctor`).
 *
 * @param url The server URL.
 * @param env The environment lookup.
 * @returns The credentials, or undefined when nothing offers any.
 */
export function findCredentials(
  url: string,
  env: (name: string) => string | undefined,
): Credentials | undefined {
  const fromEnv = envCredentials(env, 1) ?? envCredentials(env, 2);
  if (fromEnv) return fromEnv;
  return serviceCredentialsFor(url, env);
}

/**
 * The 2.x service's credentials for `url` from its state file, as a live object whose password
 * follows the service's restarts; undefined when no private service file names that origin now.
 *
 * @param url The server URL (the 2.x plugin names the service's).
 * @param env The environment lookup (where the state file is).
 * @returns The credentials, or undefined.
 */
export function serviceCredentialsFor(
  url: string,
  env: (name: string) => string | undefined,
): Credentials | undefined {
  const dir = serviceDir(env);
  if (dir === null) return undefined;
  const live = new ServiceCredentials(url, dir);
  if (live.current() === undefined) return undefined;
  return {
    username: "opencode",
    get password() {
      return live.current()?.password ?? "";
    },
  };
}
