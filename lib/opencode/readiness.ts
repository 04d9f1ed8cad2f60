/**
 * Readiness: before a pane opens, wait until the OpenCode server answers, runs a version
 * muxbridge supports (on either line), and knows the child session (its session route answers
 * 200). A pane that attaches earlier lands on a session picker or exits at once (the peers'
 * "blank pane" complaint), and requests sent before the server listens hang, so every request is
 * short and the whole wait is bounded (`docs/opencode.md`, "The server API muxbridge calls").
 *
 * @module
 */

import { type Clock, sleep } from "../sys/clock.ts";
import { toMuxError } from "../sys/errors.ts";
import type { OpencodeClient } from "./client.ts";
import { lineOf, type OpencodeLine } from "./line.ts";
import { V1 } from "./v1/line.ts";

/** Why a child cannot have a pane (a `pane.skipped` reason). */
export type NotReadyReason =
  | "server_unreachable"
  | "auth_failed"
  | "unsupported_version"
  | "session_not_found";

/** The outcome of {@linkcode waitUntilReady}. */
export type Readiness =
  | {
    readonly ok: true;
    readonly waitedMs: number;
    readonly version: string | null;
    /** The server's line: what the pane runs and how it is closed. */
    readonly line: OpencodeLine;
  }
  | {
    readonly ok: false;
    readonly reason: NotReadyReason;
    readonly message: string;
    readonly hint: string;
  };

/** Options of {@linkcode waitUntilReady}. */
export interface ReadinessOptions {
  /** The server client. */
  client: OpencodeClient;
  /** The child session. */
  sessionId: string;
  /** The child's project directory (scopes the lookup). */
  directory: string;
  /** The clock. */
  clock: Clock;
  /** The longest wait, in ms (`readiness_timeout_ms`). */
  timeoutMs: number;
  /** Ends the wait early (a delete or shutdown); the result is then not to be used. */
  signal?: AbortSignal;
  /**
   * Server versions already read, by server URL (null: the server did not say). Filled here and
   * cleared for a server that stops answering (it may come back as another version).
   */
  versions?: Map<string, string | null>;
  /** The longest single request. @default 1000 */
  requestTimeoutMs?: number;
}

/**
 * Waits until the server knows the child, or says why it cannot have a pane.
 *
 * Retries (10 ms doubling to 500 ms between attempts) while the server does not answer or does
 * not know the session yet; stops at once on 401/403 (`auth_failed`), on an answer that is not an
 * OpenCode server's, and on a version no supported range covers (`unsupported_version`).
 *
 * @param options Client, session, directory, clock, bound and abort signal.
 * @returns Ready (with how long it took), or the skip reason with a message and a hint.
 *
 * @example
 * ```ts
 * import { createRealClock } from "../sys/clock.ts";
 * import { createOpencodeClient } from "./client.ts";
 * import { waitUntilReady } from "./readiness.ts";
 * const clock = createRealClock();
 * const client = createOpencodeClient({ url: "http://127.0.0.1:4096", fetch, clock });
 * const r = await waitUntilReady({
 *   client,
 *   sessionId: "ses_child",
 *   directory: "/srv/project",
 *   clock,
 *   timeoutMs: 5000,
 * });
 * if (!r.ok) console.log(`no pane: ${r.reason}: ${r.hint}`);
 * ```
 */
export async function waitUntilReady(options: ReadinessOptions): Promise<Readiness> {
  const { client, clock, signal } = options;
  const versions = options.versions ?? new Map<string, string | null>();
  const start = clock.now();
  const deadline = start + options.timeoutMs;
  const maxRequest = options.requestTimeoutMs ?? 1000;
  let interval = 10;
  let lastUnreachable: { message: string; hint?: string } | null = null;
  while (true) {
    const left = deadline - clock.now();
    const call = {
      timeoutMs: Math.max(50, Math.min(maxRequest, left)),
      directory: options.directory,
      ...(signal ? { signal } : {}),
    };
    try {
      if (!versions.has(client.url)) {
        versions.set(client.url, (await client.health(call)).version ?? null);
      }
      const verdict = lineOf(versions.get(client.url));
      if (verdict.supported === false) {
        return {
          ok: false,
          reason: "unsupported_version",
          message: `The OpenCode server at ${client.url} runs ${verdict.version}`,
          hint: verdict.hint,
        };
      }
      if ((await client.session(options.sessionId, call)) !== null) {
        // An unknown version is the line the client found (1.x when the server said nothing).
        const line = verdict.supported ? verdict.line : client.line ?? V1;
        return { ok: true, waitedMs: clock.now() - start, version: verdict.version, line };
      }
      lastUnreachable = null;
    } catch (err) {
      const e = toMuxError(err);
      switch (e.code) {
        case "interrupted":
          break;
        case "auth_failed":
          return {
            ok: false,
            reason: "auth_failed",
            message: e.message,
            hint: e.hint ?? "Set OPENCODE_SERVER_PASSWORD to the server's password",
          };
        case "unparseable_output":
          return {
            ok: false,
            reason: "server_unreachable",
            message: e.message,
            hint: e.hint ?? "Check that the URL is the OpenCode server's",
          };
        default:
          // A server that went away may come back as another version.
          versions.delete(client.url);
          lastUnreachable = { message: e.message, ...(e.hint ? { hint: e.hint } : {}) };
      }
    }
    if (signal?.aborted) break;
    const remaining = deadline - clock.now();
    if (remaining <= 0) break;
    if (!await sleep(clock, Math.min(interval, remaining), signal)) break;
    interval = Math.min(interval * 2, 500);
  }
  const waited = clock.now() - start;
  if (lastUnreachable || signal?.aborted) {
    return {
      ok: false,
      reason: "server_unreachable",
      message: lastUnreachable?.message ?? "Aborted",
      hint: `${
        lastUnreachable?.hint ?? "Check the server URL"
      } (no answer from ${client.url} within ${waited} ms)`,
    };
  }
  return {
    ok: false,
    reason: "session_not_found",
    message:
      `The OpenCode server at ${client.url} did not know ${options.sessionId} within ${waited} ms`,
    hint:
      "Check that bridge.hello's serverUrl is the server running this session, or raise readiness_timeout_ms",
  };
}
