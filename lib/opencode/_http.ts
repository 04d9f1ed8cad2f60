/**
 * One bounded GET to an OpenCode server, shared by both lines' clients: Basic auth when
 * credentials are given, a deadline on the injected clock for every request (a request sent
 * before the server listens is accepted and never answered: `docs/opencode.md`), and every
 * failure mapped to one `MuxError` code with a hint.
 *
 * @module
 */

import { Buffer } from "node:buffer";
import type { z } from "zod";
import type { Clock } from "../sys/clock.ts";
import { MuxError } from "../sys/errors.ts";

/** A `fetch` function (injected; tests pass a fake). */
export type Fetch = (input: string, init?: RequestInit) => Promise<Response>;

/** Credentials for the server. */
export interface ServerAuth {
  /** The user name (OpenCode's default is `opencode`). */
  username: string;
  /** The password. */
  password: string;
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

/** What the transport is built from. */
export interface HttpOptions {
  /** The server URL, normalised (no trailing slash, no credentials). */
  url: string;
  /** Credentials. */
  auth?: ServerAuth;
  /** The fetch function. */
  fetch: Fetch;
  /** Times requests out; without it the runtime's own timer does. */
  clock?: Clock;
  /** The most one request may take unless a call says otherwise. */
  timeoutMs: number;
  /** What to tell a user whose request was refused (401/403). */
  authHint: string;
}

/** An answer as it came: status, media type and body text. */
export interface Answer {
  /** The HTTP status. */
  status: number;
  /** The `content-type` header, lower case ("" when absent). */
  contentType: string;
  /** The body. */
  text: string;
}

/**
 * The transport a client is built on.
 *
 * @internal
 */
export interface Http {
  /** The server URL. */
  readonly url: string;
  /**
   * `GET path` answered with any status but 401/403.
   *
   * @throws {MuxError} `server_unreachable` (no answer in time, refused), `auth_failed`,
   *   `interrupted` (the call's signal).
   */
  answer(path: string, call?: CallOptions): Promise<Answer>;
  /**
   * `GET path` parsed as JSON of `schema`'s shape; 404 gives `on404()` when given.
   *
   * @throws {MuxError} as {@linkcode Http.answer}, plus `server_unreachable` for any other
   *   non-2xx status and `unparseable_output` for a body of another shape.
   */
  json<T>(path: string, schema: z.ZodType<T>, call?: CallOptions, on404?: () => T): Promise<T>;
  /**
   * An answer of `GET path` parsed as JSON of `schema`'s shape (what {@linkcode Http.json} does
   * after the request).
   *
   * @throws {MuxError} `server_unreachable` for a non-2xx status (404 gives `on404()` when
   *   given), `unparseable_output` for a body of another shape.
   */
  parse<T>(got: Answer, path: string, schema: z.ZodType<T>, on404?: () => T): T;
}

/**
 * Creates the transport.
 *
 * @param options URL, auth, fetch, clock, timeout and the auth hint.
 * @returns The transport.
 */
export function createHttp(options: HttpOptions): Http {
  const headers: Record<string, string> = { accept: "application/json" };
  if (options.auth) {
    headers.authorization = `Basic ${
      Buffer.from(`${options.auth.username}:${options.auth.password}`).toString("base64")
    }`;
  }

  async function answer(path: string, call?: CallOptions): Promise<Answer> {
    const url = `${options.url}${path}`;
    const timeoutMs = call?.timeoutMs ?? options.timeoutMs;
    const timer = new AbortController();
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
              "Check that OpenCode is running and serves this URL; for plain `opencode` (no --port), run `muxbridge install`: its plugin serves the panes an endpoint guarded by a per-run secret",
          },
        );
      }
      if (response.status === 401 || response.status === 403) {
        await response.body?.cancel();
        throw new MuxError(
          "auth_failed",
          `Cannot use the OpenCode server at ${options.url}: it answered ${response.status}`,
          { hint: options.authHint },
        );
      }
      let text: string;
      try {
        text = await response.text();
      } catch (err) {
        if (call?.signal?.aborted) {
          throw new MuxError("interrupted", `Cannot finish GET ${path}: aborted`, { cause: err });
        }
        throw new MuxError(
          "server_unreachable",
          `Cannot read GET ${path} from ${options.url}: ${(err as Error).message}`,
          { cause: err, hint: "Check that the URL is the OpenCode server's" },
        );
      }
      return {
        status: response.status,
        contentType: (response.headers.get("content-type") ?? "").toLowerCase(),
        text,
      };
    } finally {
      if (timerId !== undefined) options.clock?.clearTimeout(timerId);
    }
  }

  function parse<T>(got: Answer, path: string, schema: z.ZodType<T>, on404?: () => T): T {
    if (on404 && got.status === 404) return on404();
    if (got.status < 200 || got.status > 299) {
      throw new MuxError(
        "server_unreachable",
        `Cannot use the OpenCode server at ${options.url}: GET ${path} answered ${got.status}`,
        { hint: "Check that the URL is the OpenCode server's" },
      );
    }
    let value: unknown;
    try {
      value = JSON.parse(got.text);
    } catch {
      throw new MuxError(
        "unparseable_output",
        `Cannot parse GET ${path} from ${options.url}: ${JSON.stringify(got.text.slice(0, 200))}`,
        { hint: "Is this URL an OpenCode server?" },
      );
    }
    const parsed = schema.safeParse(value);
    if (!parsed.success) {
      throw new MuxError(
        "unparseable_output",
        `Cannot use GET ${path} from ${options.url}: unexpected shape ${
          JSON.stringify(got.text.slice(0, 200))
        }`,
        { hint: "Is this URL an OpenCode server?" },
      );
    }
    return parsed.data;
  }

  async function json<T>(
    path: string,
    schema: z.ZodType<T>,
    call?: CallOptions,
    on404?: () => T,
  ): Promise<T> {
    return parse(await answer(path, call), path, schema, on404);
  }

  return { url: options.url, answer, json, parse };
}
