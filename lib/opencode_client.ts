/**
 * The few OpenCode server calls muxbridge makes: health (with the server version), the status
 * map of busy sessions, and one session's lookup. Basic auth when credentials are given; every
 * call bounded by a timeout; every answer parsed with zod.
 *
 * @module
 */

import { Buffer } from "node:buffer";
import { z } from "zod";
import { MuxError } from "./errors.ts";

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
  /** The server URL, normalised (no trailing slash). */
  url: string;
  /** Credentials. */
  auth?: ServerAuth;
  /** Scope instance routes to this project directory (`?directory=`). */
  directory?: string;
  /** The fetch function. */
  fetch: Fetch;
  /** The most one request may take. @default 2000 */
  timeoutMs?: number;
}

const HealthSchema = z.looseObject({ healthy: z.boolean(), version: z.string().optional() });
const StatusMapSchema = z.record(z.string(), z.looseObject({ type: z.string() }));
const SessionSchema = z.looseObject({
  id: z.string(),
  parentID: z.string().nullish(),
  title: z.string().nullish(),
  directory: z.string().nullish(),
});

/** A session's status as the server reports it: idle sessions are absent from the map. */
export type ServerStatus = "busy" | "idle" | "absent";

/**
 * One session, as the server describes it.
 *
 * @internal
 */
export type ServerSession = z.output<typeof SessionSchema>;

/** The client. */
export interface OpencodeClient {
  /** `GET /global/health`. */
  health(signal?: AbortSignal): Promise<{ healthy: boolean; version?: string }>;
  /** `GET /session/status`: busy and retrying sessions; idle ones are absent. */
  statusMap(signal?: AbortSignal): Promise<Map<string, "busy" | "idle">>;
  /** `GET /session/:id`; null when the server says 404. */
  session(id: string, signal?: AbortSignal): Promise<ServerSession | null>;
}

/**
 * Creates a client.
 *
 * @param options URL, auth, directory, fetch and timeout.
 * @returns The client. Its calls throw `MuxError` coded `server_unreachable` (no answer, a
 *   non-JSON answer, 5xx), `auth_failed` (401/403) or `unparseable_output`.
 */
export function createOpencodeClient(options: OpencodeClientOptions): OpencodeClient {
  const headers: Record<string, string> = { accept: "application/json" };
  if (options.auth) {
    headers.authorization = `Basic ${
      Buffer.from(`${options.auth.username}:${options.auth.password}`).toString("base64")
    }`;
  }
  if (options.directory) headers["x-opencode-directory"] = options.directory;
  const timeoutMs = options.timeoutMs ?? 2000;

  async function get<T>(
    path: string,
    schema: z.ZodType<T>,
    signal?: AbortSignal,
    allow404 = false,
  ): Promise<T | null> {
    const url = `${options.url}${path}`;
    const timeout = AbortSignal.timeout(timeoutMs);
    let response: Response;
    try {
      response = await options.fetch(url, {
        headers,
        signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
      });
    } catch (err) {
      throw new MuxError(
        "server_unreachable",
        `Cannot reach the OpenCode server at ${options.url}: ${(err as Error).message}`,
        {
          cause: err,
          hint:
            "Start OpenCode with --port 0 (or a fixed --port) so it listens on the URL plugins are given",
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
    if (allow404 && response.status === 404) {
      await response.body?.cancel();
      return null;
    }
    const text = await response.text().catch(() => "");
    if (!response.ok) {
      throw new MuxError(
        "server_unreachable",
        `Cannot use the OpenCode server at ${options.url}: GET ${path} answered ${response.status}`,
      );
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new MuxError(
        "unparseable_output",
        `Cannot parse GET ${path} from ${options.url}: ${JSON.stringify(text.slice(0, 200))}`,
        {
          hint: "Is this URL an OpenCode server?",
        },
      );
    }
    const parsed = schema.safeParse(json);
    if (!parsed.success) {
      throw new MuxError(
        "unparseable_output",
        `Cannot use GET ${path} from ${options.url}: unexpected shape ${
          JSON.stringify(text.slice(0, 200))
        }`,
      );
    }
    return parsed.data;
  }

  return {
    async health(signal) {
      return (await get("/global/health", HealthSchema, signal))!;
    },
    async statusMap(signal) {
      const query = options.directory ? `?directory=${encodeURIComponent(options.directory)}` : "";
      const map = (await get(`/session/status${query}`, StatusMapSchema, signal))!;
      const out = new Map<string, "busy" | "idle">();
      // `retry` and unknown types count as activity (contract).
      for (const [id, status] of Object.entries(map)) {
        out.set(id, status.type === "idle" ? "idle" : "busy");
      }
      return out;
    },
    async session(id, signal) {
      const query = options.directory ? `?directory=${encodeURIComponent(options.directory)}` : "";
      return await get(`/session/${encodeURIComponent(id)}${query}`, SessionSchema, signal, true);
    },
  };
}
