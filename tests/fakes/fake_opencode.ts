/**
 * A fake OpenCode server, either line: the three routes muxbridge calls, shaped like the real
 * server's answers. 1.x (`/global/health`, `/session/status`, `/session/:id`): idle sessions are
 * absent from the status map, a deleted session is a 404 with a NotFoundError body, retry is
 * `{type:"retry",…}`; when a test sets them, the lists of pending requests `/permission` and
 * `/question` (bare arrays of the asked events' `properties`, as on 1.18.33). 2.x (`/api/info`, `/api/session/active`, `/api/session/{id}`, Basic auth on
 * `/api/*` only): the active map lists running sessions as `{type:"running"}`, every other path
 * answers the web UI's page (`docs/opencode.md`). A test flips it between up,
 * down (connection refused), hanging (accepted, never answered: the server before its listening
 * line) and 401, and reads every request it got. As a `fetch` it runs in-process; the same
 * handler also serves real HTTP (`tests/helpers/fake_opencode_server.ts`).
 *
 * @module
 */

import { Buffer } from "node:buffer";
import type { Fetch } from "../../lib/opencode/client.ts";

/** How the fake answers. */
export type FakeMode = "up" | "down" | "hang" | "401";

/** The fake and its controls. */
export interface FakeOpencode {
  /** A `fetch` answered by the fake, honouring abort signals. */
  fetch: Fetch;
  /** The HTTP handler (for a real loopback server). */
  handle(req: Request): Promise<Response>;
  /** How it answers now. @default "up" */
  mode: FakeMode;
  /** Which OpenCode line it plays. @default 1 */
  line: 1 | 2;
  /** 2.x: the non-builtin plugins `GET /api/plugin` lists. @default none */
  plugins: Array<Record<string, unknown>>;
  /** The version `/global/health` reports (null: the field is left out). @default "1.18.33" */
  version: string | null;
  /** Sessions `GET /session/:id` knows; every other id is a 404 (unless `knowAll`). */
  known: Set<string>;
  /** Every `ses_` id not removed is known (for end-to-end tests that invent ids). */
  knowAll: boolean;
  /** Sessions removed (404 even with `knowAll`). */
  removed: Set<string>;
  /** Busy or retrying sessions (`/session/status`); everything else is absent (idle). */
  status: Map<string, "busy" | "retry">;
  /**
   * The pending permission requests and questions (`GET /permission`, `GET /question`), as
   * OpenCode lists them; null: the route answers 404. @default null
   */
  pending: { permission: unknown[]; question: unknown[] } | null;
  /** When set, only these credentials are accepted (else 401). */
  password: string | null;
  /** Requests so far: `GET <path+query>`. */
  requests: string[];
  /** `authorization` headers seen. */
  authorizations: string[];
  /** Marks a session known and busy. */
  busy(id: string): void;
  /** Marks a session idle (absent from the status map). */
  idle(id: string): void;
  /** Forgets a session (404 from then on). */
  remove(id: string): void;
}

const json = (body: unknown, status = 200) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });

/**
 * Creates the fake.
 *
 * @returns The fake, up, knowing no session.
 */
export function createFakeOpencode(): FakeOpencode {
  const fake: FakeOpencode = {
    mode: "up",
    line: 1,
    plugins: [],
    version: "1.18.33",
    known: new Set(),
    knowAll: false,
    removed: new Set(),
    status: new Map(),
    pending: null,
    password: null,
    requests: [],
    authorizations: [],
    busy(id) {
      fake.known.add(id);
      fake.status.set(id, "busy");
    },
    idle(id) {
      fake.status.delete(id);
    },
    remove(id) {
      fake.known.delete(id);
      fake.removed.add(id);
      fake.status.delete(id);
    },
    handle(req) {
      const url = new URL(req.url);
      fake.requests.push(`${req.method} ${url.pathname}${url.search}`);
      const auth = req.headers.get("authorization");
      if (auth) fake.authorizations.push(auth);
      if (fake.mode === "hang") {
        return new Promise((_, reject) => {
          const fail = () => reject(new DOMException("The signal has been aborted", "AbortError"));
          if (req.signal.aborted) fail();
          req.signal.addEventListener("abort", fail, { once: true });
        });
      }
      if (fake.line === 2) return Promise.resolve(v2(fake, url, auth));
      if (fake.mode === "401" || (fake.password !== null && !accepts(auth, fake.password))) {
        return Promise.resolve(new Response("Unauthorized", { status: 401 }));
      }
      if (url.pathname === "/global/health") {
        return Promise.resolve(
          json(
            fake.version === null ? { healthy: true } : { healthy: true, version: fake.version },
          ),
        );
      }
      if (url.pathname === "/session/status") {
        const map: Record<string, unknown> = {};
        for (const [id, s] of fake.status) {
          map[id] = s === "busy"
            ? { type: "busy" }
            : { type: "retry", attempt: 1, message: "mock failure 500", next: 0 };
        }
        return Promise.resolve(json(map));
      }
      if ((url.pathname === "/permission" || url.pathname === "/question") && fake.pending) {
        return Promise.resolve(
          json(fake.pending[url.pathname === "/permission" ? "permission" : "question"]),
        );
      }
      const m = /^\/session\/([^/]+)$/.exec(url.pathname);
      if (m) {
        const id = decodeURIComponent(m[1]);
        return Promise.resolve(
          !fake.removed.has(id) && (fake.known.has(id) || (fake.knowAll && id.startsWith("ses_")))
            ? json({ id, title: "child", directory: url.searchParams.get("directory") ?? "/" })
            : json({ name: "NotFoundError", data: { message: `Session not found: ${id}` } }, 404),
        );
      }
      return Promise.resolve(json({ name: "NotFoundError" }, 404));
    },
    fetch(input, init) {
      if (fake.mode === "down") {
        return Promise.reject(new TypeError("error sending request: Connection refused"));
      }
      const req = new Request(input, init);
      if (init?.signal?.aborted) {
        return Promise.reject(new DOMException("The signal has been aborted", "AbortError"));
      }
      return fake.handle(req);
    },
  };
  return fake;
}

/** The 2.x service's page, served on every path that is not `/api/…`, without auth. */
const WEB_PAGE = '<!doctype html>\n<html lang="en"><head><title>OpenCode</title></head></html>';

function v2(fake: FakeOpencode, url: URL, auth: string | null): Response {
  if (!url.pathname.startsWith("/api/")) {
    return new Response(WEB_PAGE, { headers: { "content-type": "text/html" } });
  }
  if (fake.mode === "401" || (fake.password !== null && !accepts(auth, fake.password))) {
    return json({ _tag: "UnauthorizedError", message: "Authentication required" }, 401);
  }
  if (url.pathname === "/api/info") {
    return json({ version: fake.version ?? "2.1.2", pid: 4242, urls: [url.origin] });
  }
  if (
    (url.pathname === "/api/permission/request" || url.pathname === "/api/form") && fake.pending
  ) {
    const directory = url.searchParams.get("location[directory]") ?? "/";
    const list = fake.pending[url.pathname === "/api/form" ? "question" : "permission"];
    return json({ location: { directory }, data: list });
  }
  if (url.pathname === "/api/plugin") {
    return json({ location: { directory: "/" }, data: fake.plugins });
  }
  if (url.pathname === "/api/session/active") {
    const data: Record<string, unknown> = {};
    for (const id of fake.status.keys()) data[id] = { type: "running" };
    return json({ data });
  }
  const m = /^\/api\/session\/([^/]+)$/.exec(url.pathname);
  if (m) {
    const id = decodeURIComponent(m[1]);
    return !fake.removed.has(id) && (fake.known.has(id) || (fake.knowAll && id.startsWith("ses_")))
      ? json({ data: { id, title: "child", location: { directory: "/" } } })
      : json({ _tag: "SessionNotFoundError", sessionID: id }, 404);
  }
  return json({ _tag: "NotFound" }, 404);
}

function accepts(header: string | null, password: string): boolean {
  if (!header?.startsWith("Basic ")) return false;
  const decoded = Buffer.from(header.slice(6), "base64").toString();
  return decoded.slice(decoded.indexOf(":") + 1) === password;
}
