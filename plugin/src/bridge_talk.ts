/**
 * What the bridge is told (its hello, the TUI's view) and what it says (read only for the log).
 *
 * @module
 */

import type { Buffer } from "node:buffer";
import process from "node:process";
import { type Bag, bag, type Log, PLUGIN_VERSION, text } from "./values.ts";

/** The longest stdout line kept from the bridge (it is only logged). */
const MAX_STDOUT_LINE = 64 * 1024;

/** Where the bridge reaches OpenCode's server. */
export interface Upstream {
  url: string;
  auth?: { username: string; password: string };
}

/**
 * OpenCode's server URL as the bridge gets it: credentials in it (`user:pass@`) are removed, so
 * they never reach the bridge's argv or a log line (the bridge refuses such URLs; it takes
 * credentials from `OPENCODE_SERVER_PASSWORD`). An unparseable URL is dropped for the same
 * reason: nothing tells where its credentials would end.
 */
export function plainServerUrl(raw: unknown): { url?: string; hadCredentials: boolean } {
  const href = raw instanceof URL ? raw.href : typeof raw === "string" ? raw : undefined;
  if (href === undefined) return { hadCredentials: false };
  let url: URL;
  try {
    url = new URL(href);
  } catch {
    return { hadCredentials: false };
  }
  if (!url.username && !url.password) return { url: href, hadCredentials: false };
  url.username = "";
  url.password = "";
  return { url: url.href, hadCredentials: true };
}

/** Credentials from OpenCode 1.x's environment, for a real listener. */
export function envAuth(): { username?: string; password: string } | undefined {
  const password = process.env.OPENCODE_SERVER_PASSWORD;
  if (!password) return undefined;
  const username = process.env.OPENCODE_SERVER_USERNAME;
  return { ...(username ? { username } : {}), password };
}

/**
 * The `bridge.hello` line every start sends on OpenCode 1.x: the URL, the directory and the
 * credentials (the endpoint's secret, else OpenCode's own, read now).
 */
export function helloLine(upstream: Upstream, directory: string): string {
  const auth = upstream.auth ?? envAuth();
  const hello = { type: "bridge.hello", serverUrl: upstream.url, directory };
  return `${JSON.stringify({ ...hello, ...(auth ? { auth } : {}) })}\n`;
}

/** What an OpenCode 2.x TUI tells the bridge about itself. */
export interface TuiHello {
  /** The server the TUI talks to (the first of `server.info().urls`). */
  serverUrl: string;
  /** The TUI's directory. */
  directory: string;
  /** OpenCode's version (`ctx.app.version`); left out when the TUI does not say. */
  opencode?: string;
  /** A token the TUI's server gave by pairing: the bridge and its panes use it as the password. */
  token?: string;
}

/**
 * The `bridge.hello` line of an OpenCode 2.x TUI. Its credentials, when there are any, are a
 * token the TUI's own server handed out by pairing: the password never passes through the
 * plugin. Without one the bridge finds the password itself (`OPENCODE_PASSWORD` /
 * `OPENCODE_SERVER_PASSWORD` in the environment it inherits from the TUI, or the service's
 * state file).
 */
export function tuiHelloLine(h: TuiHello): string {
  const { serverUrl, directory, opencode, token } = h;
  const hello = {
    type: "bridge.hello",
    serverUrl,
    directory,
    ...(opencode ? { opencode } : {}),
    ...(token ? { auth: { username: "opencode", password: token } } : {}),
  };
  return `${JSON.stringify({ ...hello, scope: "tui" })}\n`;
}

/** A `bridge.view` line: the TUI now shows this session. */
export function viewLine(sessionID: string): string {
  return `${JSON.stringify({ type: "bridge.view", sessionID })}\n`;
}

/**
 * Reads the bridge's stdout, only for the log: what the bridge says is its own business, the
 * plugin acts on none of it, except to say once when the bridge is another version.
 */
export function bridgeOutput(log: Log): (chunk: Buffer | string) => void {
  let buf = "";
  let versionNoted = false;
  const note = (line: string) => {
    let msg: Bag;
    try {
      msg = bag(JSON.parse(line));
    } catch {
      return log(`bridge wrote a line that is not JSON: ${line.slice(0, 200)}`);
    }
    if (msg.type !== "pong") log(`bridge: ${line.slice(0, 500)}`);
    if (msg.type === "ready" && !versionNoted && text(msg.version) !== PLUGIN_VERSION) {
      versionNoted = true;
      log(
        `version mismatch: this plugin is muxbridge ${PLUGIN_VERSION}, the bridge is ` +
          `${text(msg.version) ?? "unknown"}; run \`muxbridge install\` with the binary you use`,
      );
    }
  };
  return (chunk) => {
    buf += chunk.toString();
    let nl;
    while ((nl = buf.indexOf("\n")) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      note(line);
    }
    if (buf.length > MAX_STDOUT_LINE) buf = ""; // not a protocol line; forget it
  };
}
