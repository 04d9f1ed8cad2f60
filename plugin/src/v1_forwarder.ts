/**
 * OpenCode 1.x, plain `opencode` (no `--port`): OpenCode then hands plugins a URL nothing
 * listens on and a client that reaches its server in process. This endpoint listens on a free
 * loopback port and forwards every request that carries a per-run secret through that client;
 * anything else gets 401 and is not forwarded.
 *
 * @module
 */

import { Buffer } from "node:buffer";
import { randomBytes, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { PluginInput } from "@opencode-ai/plugin";
import { envAuth } from "./bridge_talk.ts";
import { bag, type Log } from "./values.ts";

/** The most request body the forwarding endpoint buffers. */
const MAX_FORWARD_BODY = 64 * 1024 * 1024;
/**
 * The URL OpenCode 1.18.33 hands plugins when it listens on no port (its `serverUrl` getter's
 * fallback); its real listeners are named by `--hostname`, 127.0.0.1 by default.
 */
const UNLISTENED_URL = "http://localhost:4096/";

/** A fetch that reaches OpenCode's server in this process. */
export type InProcessFetch = (request: Request) => Promise<Response>;

/**
 * The in-process route to OpenCode's server when OpenCode listens on no port: its SDK client
 * then carries a fetch that calls the server's handler directly. Null when `serverUrl` is a
 * real listener (or the client is not what OpenCode 1.18.33 hands plugins).
 */
export function inProcessFetch(input: PluginInput, serverUrl: string): InProcessFetch | null {
  if (serverUrl !== UNLISTENED_URL) return null;
  try {
    const inner = bag(bag(input.client)._client);
    const config = typeof inner.getConfig === "function" ? bag(inner.getConfig()) : {};
    const fetch = config.fetch;
    return typeof fetch === "function" ? (request) => fetch(request) as Promise<Response> : null;
  } catch {
    return null;
  }
}

/** The forwarding endpoint: its URL and the credentials that open it. */
export interface Forwarder {
  /** `http://127.0.0.1:<port>/`. */
  url: string;
  /** What requests must carry (Basic auth). */
  auth: { username: string; password: string };
  /** Stops listening and ends open streams. */
  close(): void;
}

/** What the endpoint checks and where it forwards to. */
interface Route {
  /** The exact `authorization` header a request must carry. */
  expected: Buffer;
  /** OpenCode's own credentials for the forwarded request, if it has any. */
  upstreamAuth: string | null;
  fetchUpstream: InProcessFetch;
  log: Log;
}

/**
 * Serves `127.0.0.1:0`, forwarding every request that carries the per-run secret to
 * `fetchUpstream`; anything else gets 401 and nothing is forwarded.
 */
export async function startForwarder(fetchUpstream: InProcessFetch, log: Log): Promise<Forwarder> {
  const auth = { username: "opencode", password: randomBytes(24).toString("base64url") };
  const own = envAuth(); // OpenCode's own password, when it has one, guards its server too
  const route: Route = {
    expected: Buffer.from(basicAuth(auth.username, auth.password)),
    upstreamAuth: own ? basicAuth(own.username ?? "opencode", own.password) : null,
    fetchUpstream,
    log,
  };
  const listening = await listenLoopback(createServer((req, res) => forward(req, res, route)));
  return { ...listening, auth };
}

/** `Basic base64(username:password)`. */
function basicAuth(username: string, password: string): string {
  return `Basic ${Buffer.from(`${username}:${password}`).toString("base64")}`;
}

/** Listens on a free loopback port; neither the server nor its streams keep OpenCode alive. */
function listenLoopback(server: Server): Promise<{ url: string; close(): void }> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      server.unref(); // never keep OpenCode alive for the endpoint's sake (nor its streams)
      server.on("connection", (socket) => socket.unref?.());
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      resolve({
        url: `http://127.0.0.1:${port}/`,
        close: () => {
          server.close();
          server.closeAllConnections?.();
        },
      });
    });
  });
}

/** Answers one request: 401 without the secret, else OpenCode's response, streamed. */
function forward(req: IncomingMessage, res: ServerResponse, route: Route): void {
  let closed = false;
  res.on("close", () => (closed = true));
  if (!authorized(req, route.expected)) {
    res.writeHead(401, { "www-authenticate": 'Basic realm="muxbridge"' }).end();
    req.resume();
    return;
  }
  (async () => {
    const body = req.method === "GET" || req.method === "HEAD" ? null : await readBody(req);
    const upstream = await route.fetchUpstream(
      new Request(new URL(req.url ?? "/", UNLISTENED_URL), {
        method: req.method ?? "GET",
        headers: upstreamHeaders(req, route.upstreamAuth),
        ...(body ? { body: new Uint8Array(body) } : {}),
      }),
    );
    await relay(res, upstream, () => closed);
  })().catch((err) => {
    if (!res.headersSent) res.writeHead(502).end();
    else res.destroy();
    if (!closed) route.log(`forwarding ${req.method} ${req.url?.split("?")[0]} failed: ${err}`);
  });
}

/** Whether a request carries `Basic base64(username:password)`, compared in constant time. */
function authorized(req: IncomingMessage, expected: Buffer): boolean {
  const header = req.headers.authorization ?? "";
  const got = Buffer.from(header);
  return got.length === expected.length && timingSafeEqual(got, expected);
}

/** The headers forwarded upstream: ours removed, OpenCode's own credentials put in, if any. */
function upstreamHeaders(req: IncomingMessage, upstreamAuth: string | null): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined || name === "authorization" || name === "host") continue;
    if (name === "connection" || name === "keep-alive" || name === "transfer-encoding") continue;
    for (const v of Array.isArray(value) ? value : [value]) headers.append(name, v);
  }
  if (upstreamAuth) headers.set("authorization", upstreamAuth);
  return headers;
}

/** A request's body, at most {@linkcode MAX_FORWARD_BODY} bytes; null when empty. */
function readBody(req: IncomingMessage): Promise<Buffer | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (c: Buffer) => {
      size += c.length;
      if (size > MAX_FORWARD_BODY) {
        reject(new Error("request body too large"));
        req.destroy();
      } else chunks.push(c);
    });
    req.on("end", () => resolve(chunks.length ? Buffer.concat(chunks) : null));
    req.on("error", reject);
  });
}

/** Copies a response (streaming bodies chunk by chunk, honouring backpressure). */
async function relay(res: ServerResponse, upstream: Response, closed: () => boolean) {
  const headers: Record<string, string> = {};
  upstream.headers.forEach((v, k) => {
    if (k !== "content-length" && k !== "transfer-encoding" && k !== "connection") headers[k] = v;
  });
  res.writeHead(upstream.status, headers);
  res.flushHeaders();
  if (!upstream.body) return void res.end();
  const reader = upstream.body.getReader();
  res.on("close", () => reader.cancel().catch(() => {}));
  while (!closed()) {
    const { value, done } = await reader.read();
    if (done) break;
    if (!res.write(value)) await new Promise((r) => res.once("drain", r));
  }
  res.end();
}
