/**
 * A stub of the few OpenCode server routes muxbridge calls (health, the status map, one
 * session's lookup), on 127.0.0.1 and a free port, for end-to-end tests that are not about the
 * server. Answers have the real server's shapes (`../shared/research/opencode-peer.md`).
 *
 * @module
 */

/** A running stub. */
export interface StubServer {
  /** The URL to give the bridge (`http://127.0.0.1:<port>`). */
  url: string;
  /** Session ids the server knows (lookups of others answer 404, as for a deleted session). */
  sessions: Set<string>;
  /** The status map: busy sessions (idle ones are absent, as on the real server). */
  busy: Set<string>;
  /** Stops it. */
  close(): Promise<void>;
}

/**
 * Starts the stub.
 *
 * @returns The stub; always `close()` it.
 */
export function startStubServer(): StubServer {
  const sessions = new Set<string>();
  const busy = new Set<string>();
  const json = (body: unknown, status = 200) =>
    new Response(JSON.stringify(body), {
      status,
      headers: { "content-type": "application/json" },
    });
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
    const path = new URL(req.url).pathname;
    if (path === "/global/health") return json({ healthy: true, version: "1.18.33" });
    if (path === "/session/status") {
      return json(Object.fromEntries([...busy].map((id) => [id, { type: "busy" }])));
    }
    const m = /^\/session\/([^/]+)$/.exec(path);
    if (m && sessions.has(m[1])) return json({ id: m[1], title: m[1], directory: "/" });
    return json({ name: "NotFoundError", data: { message: `${path} not found` } }, 404);
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    sessions,
    busy,
    close: () => server.shutdown(),
  };
}
