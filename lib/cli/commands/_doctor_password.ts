/**
 * `doctor`'s check that the OpenCode server in use asks for a password. OpenCode's server runs
 * commands for whoever reaches it (`POST /pty`), and without `OPENCODE_SERVER_PASSWORD` it
 * answers every local user: OpenCode 1.18.33 answered `GET /global/health` 200 without one and
 * 401 to a request without credentials once one was set (measured: `docs/opencode.md`, "The
 * server API muxbridge calls"). So the
 * check asks without credentials, and an answer means the server is open.
 *
 * @module
 */

import type { Check } from "../../backend/backend.ts";
import { isMuxError } from "../../sys/errors.ts";
import type { CliDeps } from "./_command.ts";
import { serverClient } from "./_context.ts";

/**
 * What to do about a server that answers without a password, naming the variable its line's
 * clients read (1.x: `OPENCODE_SERVER_PASSWORD`; 2.x: `OPENCODE_PASSWORD`).
 *
 * @param line The server's release line, when known.
 * @returns The hint.
 */
export function passwordHint(line: 1 | 2 | undefined): string {
  const name = line === 2 ? "OPENCODE_PASSWORD" : "OPENCODE_SERVER_PASSWORD";
  return `Set ${name} where OpenCode starts (e.g. \`export ${name}="$(openssl rand -hex 32)"\` in your shell profile) and restart OpenCode; muxbridge hands it to the panes privately. Plain \`opencode\` (no --port) with the plugin from \`muxbridge install\` needs none: its endpoint has a per-run secret`;
}

/**
 * Asks a server for its health without credentials.
 *
 * @param deps The CLI deps (fetch, clock, signal).
 * @param url The server's URL (normalised, without credentials).
 * @param name The check's name.
 * @returns `warn` when the server answers without a password, `pass` when it refuses, null
 *   when it cannot tell (the server does not answer: other checks report that).
 */
export async function serverPasswordCheck(
  deps: CliDeps,
  url: string,
  name: string,
): Promise<Check | null> {
  const client = serverClient(deps, url);
  try {
    await client.health({ signal: deps.signal });
  } catch (err) {
    if (isMuxError(err, "auth_failed")) {
      return { name, status: "pass", detail: `the server at ${url} asks for a password` };
    }
    return null;
  }
  return {
    name,
    status: "warn",
    detail:
      `the OpenCode server at ${url} answers without a password: any local user can use it, read your sessions and run commands as you`,
    hint: passwordHint(client.line?.id),
  };
}
