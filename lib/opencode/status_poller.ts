/**
 * Status polling: while sessions are tracked, `GET /session/status` every `poll_interval_ms`
 * (one request per project directory: the status map is per instance, `docs/opencode.md`) and
 * report every tracked session as busy, idle or absent; beside it, where the client reads them,
 * the requests open for the user in that directory (`pending.ts`). Polls never overlap; with
 * nothing tracked no timer is armed and nothing is sent.
 *
 * A server that does not answer (or answers 401) produces no observations, so no decision is
 * made from it; polling backs off (doubling, capped) and says so once, and once again when the
 * server answers.
 *
 * @module
 */

import type { Clock, TimerId } from "../sys/clock.ts";
import { toMuxError } from "../sys/errors.ts";
import type { Logger } from "../sys/log.ts";
import type { OpencodeClient } from "./client.ts";
import type { ServerRequest } from "./pending.ts";

/** One session to poll (`Id`: the caller's session id type, handed back as given). */
export interface PollTarget<Id extends string = string> {
  /** The session. */
  readonly sessionId: Id;
  /** Its project directory (polls are grouped by it). */
  readonly directory: string;
}

/**
 * What a poll saw of one session: idle sessions are normally absent from the map; `running`
 * (2.x) is active without saying whether it is retrying.
 */
export type PollStatus = "busy" | "running" | "idle" | "absent";

/** What the poller is built from. */
export interface StatusPollerDeps<Id extends string = string> {
  /** The clock. */
  clock: Clock;
  /** Logs. */
  log: Logger;
  /** `poll_interval_ms` (read at each schedule, so a getter may follow a changed config). */
  intervalMs: number;
  /** Whether anything is tracked (cheap; called after every change). */
  active(): boolean;
  /** The sessions to poll now. */
  targets(): PollTarget<Id>[];
  /** The server client, or null when no server is known (then nothing is polled). */
  client(): OpencodeClient | null;
  /**
   * Receives one observation; `at` is when the request was sent (older than later events);
   * `retry`: busy, retrying (the attempt, 0 when not said).
   */
  observe(sessionId: Id, status: PollStatus, at: number, retry?: number): void;
  /**
   * Receives the requests a directory's instance has open for the user, for the sessions polled
   * there, when the client reads them (`OpencodeClient.pendingRequests`); nothing when it cannot
   * (the server keeps no such lists, or did not answer).
   */
  observePending?(
    sessionIds: readonly Id[],
    requests: readonly ServerRequest[],
    at: number,
  ): void;
  /** The longest pause after failures. @default 30000 (never below the interval) */
  maxBackoffMs?: number;
  /** The most one request may take. @default min(2000, the interval) */
  requestTimeoutMs?: number;
}

/**
 * Polls the server's status map while sessions are tracked.
 *
 * @example
 * ```ts
 * import { createRealClock } from "../sys/clock.ts";
 * import { silentLogger } from "../sys/log.ts";
 * import { createOpencodeClient } from "./client.ts";
 * import { StatusPoller } from "./status_poller.ts";
 * const clock = createRealClock();
 * const client = createOpencodeClient({ url: "http://127.0.0.1:4096", fetch, clock });
 * const poller = new StatusPoller({
 *   clock,
 *   log: silentLogger,
 *   intervalMs: 2000,
 *   active: () => true,
 *   targets: () => [{ sessionId: "ses_child", directory: "/srv/project" }],
 *   client: () => client,
 *   observe: (sessionId, status) => console.log(sessionId, status),
 * });
 * poller.update(); // after every change to what is tracked
 * poller.stop(); // at shutdown
 * ```
 */
export class StatusPoller<Id extends string = string> {
  readonly #deps: StatusPollerDeps<Id>;
  #timer: TimerId | null = null;
  #inFlight: AbortController | null = null;
  #failures = 0;
  #reachable: boolean | null = null;
  #stopped = false;

  /**
   * Creates a poller; it does nothing until {@linkcode StatusPoller.update}.
   *
   * @param deps Clock, logger, interval, what to poll and where the results go.
   */
  constructor(deps: StatusPollerDeps<Id>) {
    this.#deps = deps;
  }

  /** Whether the last poll got an answer (null before the first). */
  get reachable(): boolean | null {
    return this.#reachable;
  }

  /** Whether a poll is scheduled or in flight. */
  get running(): boolean {
    return this.#timer !== null || this.#inFlight !== null;
  }

  /** Starts polling when something is tracked and stops when nothing is. */
  update(): void {
    if (this.#stopped) return;
    if (this.#deps.active() && this.#deps.client() !== null) {
      if (this.#timer === null && this.#inFlight === null) this.#schedule(this.#deps.intervalMs);
      return;
    }
    this.#cancel();
  }

  /** Stops for good: clears the timer and aborts a poll in flight. */
  stop(): void {
    this.#stopped = true;
    this.#cancel();
  }

  #cancel(): void {
    if (this.#timer !== null) this.#deps.clock.clearTimeout(this.#timer);
    this.#timer = null;
    this.#inFlight?.abort();
    this.#inFlight = null;
  }

  #schedule(ms: number): void {
    this.#timer = this.#deps.clock.setTimeout(() => {
      this.#timer = null;
      void this.#poll();
    }, ms);
  }

  async #poll(): Promise<void> {
    const client = this.#deps.client();
    const targets = this.#deps.targets();
    if (!client || targets.length === 0 || this.#stopped) return;
    const byDir = new Map<string, Id[]>();
    for (const t of targets) {
      const ids = byDir.get(t.directory) ?? [];
      ids.push(t.sessionId);
      byDir.set(t.directory, ids);
    }
    const abort = new AbortController();
    this.#inFlight = abort;
    const at = this.#deps.clock.now();
    const timeoutMs = this.#deps.requestTimeoutMs ??
      Math.min(2000, this.#deps.intervalMs);
    const pending = this.#deps.observePending ? client.pendingRequests : undefined;
    const results = await Promise.allSettled(
      [...byDir].map(async ([directory, ids]) => {
        const call = { directory, signal: abort.signal, timeoutMs };
        // The lists beside the status map: a failure of theirs costs the status nothing.
        const [map, requests] = await Promise.all([
          client.statusMap(call),
          pending?.call(client, call).catch((err) => {
            this.#deps.log.debug(
              `cannot read the pending requests: ${(err as Error).message}`,
            );
            return null;
          }) ?? null,
        ]);
        return { ids, map, requests };
      }),
    );
    if (this.#inFlight !== abort) return; // cancelled meanwhile: nothing is tracked any more
    this.#inFlight = null;
    let answered = false;
    let failure: string | null = null;
    for (const r of results) {
      if (r.status === "rejected") {
        const e = toMuxError(r.reason);
        failure ??= `${e.message}${e.hint ? `. ${e.hint}` : ""}`;
        continue;
      }
      answered = true;
      for (const id of r.value.ids) {
        const seen = r.value.map.get(id);
        if (seen === undefined) this.#deps.observe(id, "absent", at);
        else if (seen.retry === undefined) this.#deps.observe(id, seen.status, at);
        else this.#deps.observe(id, seen.status, at, seen.retry);
      }
      if (r.value.requests) {
        this.#deps.observePending?.(r.value.ids, r.value.requests, at);
      }
    }
    this.#account(client.url, answered, failure);
    if (this.#stopped) return;
    if (this.#deps.active() && this.#timer === null && this.#inFlight === null) {
      this.#schedule(this.#delay());
    }
  }

  #account(url: string, answered: boolean, failure: string | null): void {
    if (answered) {
      if (this.#reachable === false) {
        this.#deps.log.info(`the OpenCode server at ${url} answers status polls again`);
      }
      this.#reachable = true;
      this.#failures = 0;
      return;
    }
    this.#failures++;
    if (this.#reachable !== false) {
      this.#deps.log.warn(
        `cannot poll session status: ${failure}; backing off, and no pane is closed on a poll until it answers`,
      );
    }
    this.#reachable = false;
  }

  /** The pause before the next poll: the interval, doubled per failure up to the cap. */
  #delay(): number {
    const interval = this.#deps.intervalMs;
    if (this.#failures === 0) return interval;
    const cap = Math.max(interval, this.#deps.maxBackoffMs ?? 30_000);
    return Math.min(interval * 2 ** Math.min(this.#failures, 20), cap);
  }
}
