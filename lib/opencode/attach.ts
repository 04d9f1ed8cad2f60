/**
 * The pane command of the contract, built in one place:
 * `<opencode_bin> attach <url> --session <id> --dir <dir>`, with credentials only in the
 * pane's environment, never on argv.
 *
 * @module
 */

/** Credentials for the OpenCode server. */
export interface Credentials {
  /** User name. */
  username: string;
  /** Password. */
  password: string;
}

/**
 * The argv a pane runs.
 *
 * @param bin `opencode_bin`.
 * @param url The normalised server URL.
 * @param sessionId The validated session id.
 * @param dir The validated directory.
 * @returns The argv.
 *
 * @example
 * ```ts
 * import { attachArgv } from "./attach.ts";
 * attachArgv("opencode", "http://127.0.0.1:4096", "ses_1", "/src");
 * // ["opencode", "attach", "http://127.0.0.1:4096", "--session", "ses_1", "--dir", "/src"]
 * ```
 */
export function attachArgv(bin: string, url: string, sessionId: string, dir: string): string[] {
  return [bin, "attach", url, "--session", sessionId, "--dir", dir];
}

/**
 * The pane environment that carries credentials (`opencode attach` reads these).
 *
 * @param auth Credentials, if any.
 * @returns The variables; empty without credentials.
 */
export function attachEnv(auth: Credentials | undefined): Record<string, string> {
  return auth
    ? { OPENCODE_SERVER_USERNAME: auth.username, OPENCODE_SERVER_PASSWORD: auth.password }
    : {};
}

/**
 * Credentials from the environment (`OPENCODE_SERVER_PASSWORD`, `OPENCODE_SERVER_USERNAME`).
 *
 * @param env The environment lookup.
 * @returns The credentials, or undefined without a password.
 */
export function envCredentials(env: (name: string) => string | undefined): Credentials | undefined {
  const password = env("OPENCODE_SERVER_PASSWORD");
  if (!password) return undefined;
  return { username: env("OPENCODE_SERVER_USERNAME") || "opencode", password };
}
