/**
 * The few OpenCode server calls muxbridge makes: health (with the server version), the status
 * map of busy sessions, one session's lookup, and the requests open for the user. Basic auth
 * when credentials are given; every call bounded by a timeout on the injected clock; every
 * answer parsed with zod.
 *
 * Instance routes (`/session/…`) are scoped to a project directory with `?directory=`: one server
 * serves many directories, and without it the server's own cwd is used (`docs/opencode.md`, "The
 * server API muxbridge calls"). The query parameter is used rather than the
 * `x-opencode-directory` header because a header cannot carry a non-ASCII path as it is.
 *
 * @module
 */

import { Buffer } from "node:buffer";
import { z } from "zod";
import type { Clock } from "../sys/clock.ts";
import { MuxError } from "../sys/errors.ts";
import { requestsOf, type ServerRequest } from "./pending.ts";

/** A `fetch` function (injected; tests pass a fake). */
export type Fetch = (input: string, init?: RequestInit) => Promise<Response>;

/** Credentials for the server. */
export interface ServerAuth {
  /** The user name (OpenCode's default is `opencode`). */
  username: string;
  /** The password. */
  password: string;
}

/** Options of {@linkcode createOpencodeClient}. */
export interface OpencodeClientOptions {
  /** The server URL, normalised (no trailing slash, no credentials). */
  url: string;
  /** Credentials. */
  auth?: ServerAuth;
  /** Scope instance routes to this project directory unless a call names another. */
  directory?: string;
  /** The fetch function. */
  fetch: Fetch;
  /** Times requests out; without it the runtime's own timer does. */
  clock?: Clock;
  /** The most one request may take unless a call says otherwise. @default 2000 */
  timeoutMs?: number;
}

/** Per-call options. */
export interface CallOptions {
  /** Aborts the request. */
  signal?: AbortSignal;
  /** The most this request may take. */
  timeoutMs?: number;
  /** The project directory the route is scoped to (instance routes only). */
  directory?: string;
}

/** What `opencode attach` (1.x) asks first and a fresh server is slow to load. */
const WARM_ROUTES = ["/agent", "/provider", "/config/providers"] as const;
const AnySchema = z.unknown();
/** A 1.x list of pending requests: an array (its entries are read leniently by `requestsOf`). */
const PendingListSchema = z.array(z.unknown());
const HealthSchema = z.looseObject({ healthy: z.boolean(), version: z.string().optional() });
const StatusMapSchema = z.record(
  z.string(),
  z.looseObject({ type: z.string(), attempt: z.unknown().optional() }),
);

/**
 * One session in the status map: busy or idle (`retry` and unknown types count as busy, the
 * contract), with the attempt when it is retrying (0: the server did not say).
 */
export interface SessionActivity {
  /** Busy (also retrying) or idle. */
  readonly status: "busy" | "idle";
  /** Retrying a failed model request: the attempt, from 1 (0: not said). */
  readonly retry?: number;
}
const SessionSchema = z.looseObject({
  id: z.string(),
  parentID: z.string().nullish(),
  title: z.string().nullish(),
  directory: z.string().nullish(),
});

/**
 * One session, as the server describes it.
 *
 * @internal
 */
export type ServerSession = z.output<typeof SessionSchema>;

/** What `GET /global/health` says; `version` is absent when the server does not tell it. */
export interface ServerHealth {
  /** Whether the server says it is healthy. */
  healthy: boolean;
  /** The OpenCode version. */
  version?: string;
}

/** The client. */
export interface OpencodeClient {
  /** The server URL it talks to (no credentials). */
  readonly url: string;
  /**
   * `GET /global/health`. A server without the route (404) is taken as healthy with no version.
   *
   * @throws {MuxError} `server_unreachable`, `auth_failed`, `unparseable_output`.
   */
  health(options?: CallOptions): Promise<ServerHealth>;
  /**
   * `GET /session/status`: busy and retrying sessions (`retry` counts as busy); idle ones are
   * absent.
   *
   * @throws {MuxError} `server_unreachable`, `auth_failed`, `unparseable_output`.
   */
  statusMap(options?: CallOptions): Promise<Map<string, SessionActivity>>;
  /**
   * `GET /session/:id`; null when the server answers 404 (deleted or unknown).
   *
   * @throws {MuxError} `server_unreachable`, `auth_failed`, `unparseable_output`.
   */
  session(id: string, options?: CallOptions): Promise<ServerSession | null>;
  /**
   * The requests open for the user (permission requests and questions) in the directory's
   * instance: `GET /permission` and `GET /question` on the 1.x line. A line without such lists
   * leaves this out; null: the server answered 404 to both (it keeps none).
   *
   * @throws {MuxError} `server_unreachable`, `auth_failed`, `unparseable_output`.
   */
  pendingRequests?(options?: CallOptions): Promise<ServerRequest[] | null>;
  /**
   * Asks the server for what `opencode attach` asks first and a fresh server is slow to load
   * (on the 1.x line `GET /agent`, `/provider` and `/config/providers`: about ten seconds for
   * the first request of a directory on a busy machine, a tenth of a second after), so that the
   * first child's pane does not wait for it (`docs/attention.md`). The answers are dropped.
   *
   * @throws {MuxError} `server_unreachable`, `auth_failed`.
   */
  warm?(options?: CallOptions): Promise<void>;
}

/**
 * Creates a client.
 *
 * @param options URL, auth, directory, fetch, clock and timeout.
 * @returns The client. Its calls throw `MuxError` coded `server_unreachable` (no answer in time,
 *   5xx, an unexpected status), `auth_failed` (401/403) or `unparseable_output` (not JSON of the
 *   expected shape); an aborted call throws `interrupted`.
 *
 * @example
 * ```ts
 * import { createOpencodeClient } from "./client.ts";
 * const client = createOpencodeClient({ url: "http://127.0.0.1:4096", fetch });
 * (await client.health()).version; // "1.18.33"
 * ```
 */
export function createOpencodeClient(options: OpencodeClientOptions): OpencodeClient {
  const headers: Record<string, string> = { accept: "application/json" };
  if (options.auth) {
    headers.authorization = `Basic ${
      Buffer.from(`${options.auth.username}:${options.auth.password}`).toString("base64")
    }`;
  }
  const defaultTimeout = options.timeoutMs ?? 2000;

  const scoped = (path: string, call: CallOptions | undefined) => {
    const directory = call?.directory ?? options.directory;
    return directory ? `${path}?directory=${encodeURIComponent(directory)}` : path;
  };

  async function get<T>(
    path: string,
    schema: z.ZodType<T>,
    call: CallOptions | undefined,
    on404?: () => T,
  ): Promise<T> {
    const url = `${options.url}${path}`;
    const timeoutMs = call?.timeoutMs ?? defaultTimeout;
    const timer = new AbortController();
    // Requests sent before the server listens are accepted and never answered
    // (docs/opencode.md): every request has a deadline on the injected clock.
    const timerId = options.clock?.setTimeout(() => timer.abort(), timeoutMs);
    const timeout = options.clock ? timer.signal : AbortSignal.timeout(timeoutMs);
    const signal = call?.signal ? AbortSignal.any([call.signal, timeout]) : timeout;
    try {
      let response: Response;
      try {
        response = await options.fetch(url, { headers, signal });
      } catch (err) {
        if (call?.signal?.aborted) {
          throw new MuxError("interrupted", `Cannot finish GET ${path}: aborted`, { cause: err });
        }
        const why = timeout.aborted ? `no answer within ${timeoutMs} ms` : (err as Error).message;
        throw new MuxError(
          "server_unreachable",
          `Cannot reach the OpenCode server at ${options.url}: ${why}`,
          {
            cause: err,
            hint:
              "Is OpenCode running? The plugin from `muxbridge install` reaches plain `opencode`; without it, start OpenCode with --port 0 so it listens on the URL plugins are given",
          },
        );
      }
      if (response.status === 401 || response.status === 403) {
        await response.body?.cancel();
        throw new MuxError(
          "auth_failed",
          `Cannot use the OpenCode server at ${options.url}: it answered ${response.status}`,
          {
            hint:
              "Set OPENCODE_SERVER_PASSWORD (and OPENCODE_SERVER_USERNAME) to the server's credentials",
          },
        );
      }
      if (on404 && response.status === 404) {
        await response.body?.cancel();
        return on404();
      }
      const text = await response.text().catch(() => "");
      if (!response.ok) {
        throw new MuxError(
          "server_unreachable",
          `Cannot use the OpenCode server at ${options.url}: GET ${path} answered ${response.status}`,
          { hint: "Check that the URL is the OpenCode server's" },
        );
      }
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        throw new MuxError(
          "unparseable_output",
          `Cannot parse GET ${path} from ${options.url}: ${JSON.stringify(text.slice(0, 200))}`,
          { hint: "Is this URL an OpenCode server?" },
        );
      }
      const parsed = schema.safeParse(json);
      if (!parsed.success) {
        throw new MuxError(
          "unparseable_output",
          `Cannot use GET ${path} from ${options.url}: unexpected shape ${
            JSON.stringify(text.slice(0, 200))
          }`,
          { hint: "Is this URL an OpenCode server?" },
        );
      }
      return parsed.data;
    } finally {
      if (timerId !== undefined) options.clock?.clearTimeout(timerId);
    }
  }

  return {
    url: options.url,
    async health(call) {
      return await get<ServerHealth>(
        "/global/health",
        HealthSchema,
        call,
        () => ({ healthy: true }),
      );
    },
    async statusMap(call) {
      const map = await get(scoped("/session/status", call), StatusMapSchema, call);
      const out = new Map<string, SessionActivity>();
      // `retry` and unknown types count as activity (contract).
      for (const [id, { type, attempt }] of Object.entries(map)) {
        out.set(
          id,
          type === "idle"
            ? { status: "idle" }
            : type === "retry"
            ? { status: "busy", retry: retryAttempt(attempt) }
            : { status: "busy" },
        );
      }
      return out;
    },
    async session(id, call) {
      return await get<ServerSession | null>(
        scoped(`/session/${encodeURIComponent(id)}`, call),
        SessionSchema,
        call,
        () => null,
      );
    },
    async pendingRequests(call) {
      const [permissions, questions] = await Promise.all(
        (["permission", "question"] as const).map((kind) =>
          get<unknown[] | null>(
            scoped(`/${kind}`, call),
            PendingListSchema,
            call,
            () => null,
          )
        ),
      );
      if (permissions === null && questions === null) return null;
      return [
        ...requestsOf(permissions ?? [], "permission"),
        ...requestsOf(questions ?? [], "question"),
      ];
    },
    async warm(call) {
      await Promise.all(
        WARM_ROUTES.map((route) => get(scoped(route, call), AnySchema, call, () => null)),
      );
    },
  };
}

/** A retry's attempt (1 or more), or 0 when the server gives none that can be used. */
function retryAttempt(attempt: unknown): number {
  return typeof attempt === "number" && Number.isSafeInteger(attempt) && attempt >= 1
    ? Math.min(attempt, 1_000_000)
    : 0;
}
