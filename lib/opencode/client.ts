/**
 * The few OpenCode server calls muxbridge makes, on either line: health (with the server's
 * version), the map of active sessions, and one session's lookup. Basic auth when credentials are
 * given; every call bounded by a timeout on the injected clock; every answer parsed with zod.
 *
 * A client knows its server's line when it is told (`line`), else it finds out on its first
 * call: a 1.x server answers `GET /global/health` with JSON; a 2.x service answers that path with
 * its web page and `GET /api/info` with its version (`docs/opencode.md`). A 1.x server pays no
 * extra request; a 2.x one pays one, once.
 *
 * @module
 */

import type { Clock } from "../sys/clock.ts";
import { isMuxError } from "../sys/errors.ts";
import {
  type Answer,
  type CallOptions,
  createHttp,
  type Fetch,
  type Http,
  type ServerAuth,
} from "./_http.ts";
import { lineById, type LineId, lineOf, type OpencodeLine } from "./line.ts";
import { V1, V1_HEALTH, v1Health } from "./v1/line.ts";
import { V2_INFO, v2Health } from "./v2/line.ts";
import type { ServerRequest } from "./pending.ts";

export type { CallOptions, Fetch, ServerAuth } from "./_http.ts";

/** Options of {@linkcode createOpencodeClient}. */
export interface OpencodeClientOptions {
  /** The server URL, normalised (no trailing slash, no credentials). */
  url: string;
  /** Credentials. */
  auth?: ServerAuth;
  /** Scope instance routes to this project directory unless a call names another (1.x). */
  directory?: string;
  /** The fetch function. */
  fetch: Fetch;
  /** Times requests out; without it the runtime's own timer does. */
  clock?: Clock;
  /** The most one request may take unless a call says otherwise. @default 2000 */
  timeoutMs?: number;
  /** The server's line, when known (a 2.x plugin says so); otherwise the first call finds it. */
  line?: LineId;
}

/**
 * One session's activity in the server's map: busy or idle (1.x: `retry` and unknown types
 * count as busy, the contract), with the attempt when it is retrying (0: the server did not
 * say); `running` (2.x) is active without saying whether it is retrying.
 */
export interface SessionActivity {
  /** Busy (also retrying), idle, or running (active; retrying or not is not said). */
  readonly status: "busy" | "idle" | "running";
  /** Retrying a failed model request: the attempt, from 1 (0: not said). */
  readonly retry?: number;
}

/** One session, as the server describes it. */
export interface ServerSession {
  /** Its id. */
  readonly id: string;
  /** Its parent, for a child. */
  readonly parentID?: string;
  /** Its title. */
  readonly title?: string;
  /** Its project directory. */
  readonly directory?: string;
}

/** What the server says of its health; `version` is absent when it does not tell it. */
export interface ServerHealth {
  /** Whether the server says it is healthy. */
  healthy: boolean;
  /** The OpenCode version. */
  version?: string;
}

/** The calls one line's server answers. */
export interface LineClient {
  /**
   * The server's health and version.
   *
   * @throws {MuxError} `server_unreachable`, `auth_failed`, `unparseable_output`.
   */
  health(options?: CallOptions): Promise<ServerHealth>;
  /**
   * The active sessions: busy, retrying (1.x) or running (2.x); idle ones are absent.
   *
   * @throws {MuxError} `server_unreachable`, `auth_failed`, `unparseable_output`.
   */
  statusMap(options?: CallOptions): Promise<Map<string, SessionActivity>>;
  /**
   * One session; null when the server answers 404 (deleted or unknown).
   *
   * @throws {MuxError} `server_unreachable`, `auth_failed`, `unparseable_output`.
   */
  session(id: string, options?: CallOptions): Promise<ServerSession | null>;
  /**
   * The requests open for the user (permission requests and questions) in the directory's
   * instance (1.x: `GET /permission` and `GET /question`, `pending.ts`). A line without such
   * lists leaves this out; null: the server answered 404 to them (it keeps none).
   *
   * @throws {MuxError} `server_unreachable`, `auth_failed`, `unparseable_output`.
   */
  pendingRequests?(options?: CallOptions): Promise<ServerRequest[] | null>;
  /**
   * Asks the server for what the line's pane program asks first and a fresh server is slow to
   * load (1.x `opencode attach`: `GET /agent`, `/provider` and `/config/providers`, about ten
   * seconds for the first request of a directory on a busy machine, a tenth of a second after),
   * so that the first child's pane does not wait for it (`docs/attention.md`). The answers are
   * dropped; a line with nothing to warm leaves this out.
   *
   * @throws {MuxError} `server_unreachable`, `auth_failed`.
   */
  warm?(options?: CallOptions): Promise<void>;
}

/** The client: one server's calls, on whichever line it runs. */
export interface OpencodeClient extends LineClient {
  /** The server URL it talks to (no credentials). */
  readonly url: string;
  /** The server's line, once known (after the first answered call, or as it was told). */
  readonly line: OpencodeLine | null;
}

/**
 * Creates a client.
 *
 * @param options URL, auth, directory, fetch, clock, timeout and, when known, the line.
 * @returns The client. Its calls throw `MuxError` coded `server_unreachable` (no answer in time,
 *   5xx, an unexpected status), `auth_failed` (401/403) or `unparseable_output` (not JSON of the
 *   expected shape, or not an OpenCode server); an aborted call throws `interrupted`.
 *
 * @example
 * ```ts
 * import { createOpencodeClient } from "./client.ts";
 * const client = createOpencodeClient({ url: "http://127.0.0.1:4096", fetch });
 * (await client.health()).version; // "1.18.33"
 * client.line?.id; // 1
 * ```
 */
export function createOpencodeClient(options: OpencodeClientOptions): OpencodeClient {
  const told = options.line === undefined ? null : lineById(options.line);
  const http = createHttp({
    url: options.url,
    ...(options.auth ? { auth: options.auth } : {}),
    fetch: options.fetch,
    ...(options.clock ? { clock: options.clock } : {}),
    timeoutMs: options.timeoutMs ?? 2000,
    authHint: told?.authHint ?? `${V1.authHint}; for OpenCode 2.x, OPENCODE_PASSWORD`,
  });
  const scope = (call: CallOptions | undefined): CallOptions | undefined =>
    call?.directory || !options.directory ? call : { ...call, directory: options.directory };
  let line: OpencodeLine | null = told;
  let routes: LineClient | null = told ? told.client(http) : null;
  const v1 = V1.client(http);
  // The first answer tells the line; a health read on the way is kept for the caller.
  let probing: Promise<() => ServerHealth> | null = null;

  function probe(call?: CallOptions): Promise<() => ServerHealth> {
    probing ??= detect(http, call).then(({ found, health }) => {
      line = found;
      routes = found.client(http);
      return health;
    }).finally(() => (probing = null));
    return probing;
  }

  /**
   * Runs a call on the server's routes. While the line is unknown it tries 1.x's first (a 1.x
   * server pays no extra request): only JSON answers them, and a 2.x service answers those paths
   * with its web page, which is `unparseable_output`; then the line is found and the call made
   * again on its routes.
   */
  async function onLine<T>(call: CallOptions | undefined, op: (r: LineClient) => Promise<T>) {
    if (routes) return await op(routes);
    try {
      const out = await op(v1);
      line ??= V1;
      routes ??= v1;
      return out;
    } catch (err) {
      if (!isMuxError(err, "unparseable_output")) throw err;
      await probe(call);
      if (line === V1) throw err;
      return await op(routes!);
    }
  }

  return {
    url: options.url,
    get line() {
      return line;
    },
    async health(call) {
      if (routes) return await routes.health(call);
      return (await probe(call))();
    },
    async statusMap(call) {
      return await onLine(call, (r) => r.statusMap(scope(call)));
    },
    async session(id, call) {
      return await onLine(call, (r) => r.session(id, scope(call)));
    },
    async pendingRequests(call) {
      return await onLine(call, (r) => r.pendingRequests?.(scope(call)) ?? Promise.resolve(null));
    },
    async warm(call) {
      await onLine(call, (r) => r.warm?.(scope(call)) ?? Promise.resolve());
    },
  };
}

/**
 * Finds a server's line from its answers: 1.x's JSON health, else 2.x's `/api/info`.
 *
 * @throws {MuxError} as the client's calls; `unparseable_output` when neither line answers.
 */
async function detect(
  http: Http,
  call: CallOptions | undefined,
): Promise<{ found: OpencodeLine; health: () => ServerHealth }> {
  const first = await http.answer(V1_HEALTH, call);
  if (isJsonObject(first)) return { found: V1, health: () => v1Health(http, first) };
  const info = await http.answer(V2_INFO, call);
  if (isJsonObject(info)) {
    const health = v2Health(http, info);
    const verdict = lineOf(health.version);
    // A version of no line is reported by the caller (readiness, doctor); its routes are 2.x's.
    return { found: verdict.supported === true ? verdict.line : lineById(2), health: () => health };
  }
  // Neither line's JSON: read it as 1.x did (no route: healthy with no version; a page or
  // another shape: unparseable_output naming what came back).
  return { found: V1, health: () => v1Health(http, first) };
}

/** A 2xx answer whose body is a JSON object (an OpenCode route, not the 2.x web page). */
function isJsonObject(got: Answer): boolean {
  if (got.status < 200 || got.status > 299) return false;
  try {
    const value = JSON.parse(got.text);
    return typeof value === "object" && value !== null && !Array.isArray(value);
  } catch {
    return false;
  }
}
