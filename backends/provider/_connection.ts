/**
 * Private to the provider backend: one connection to a provider process, the calls in flight on
 * it, sending a request and ending the connection. What the client shares with these functions
 * (seams, bounds, its backoff and its one state object) is a {@linkcode ClientContext}.
 *
 * @module
 */

import type { Clock, TimerId } from "../../lib/sys/clock.ts";
import { MuxError } from "../../lib/sys/errors.ts";
import type { LineProcess, LineProcessOpener } from "../../lib/sys/line_process.ts";
import type { Logger } from "../../lib/sys/log.ts";
import type { RestartBackoff } from "./_backoff.ts";
import type { ProviderResult } from "./protocol.ts";

/** A call in flight: what settles it, and its timeout. */
export interface Pending {
  /** The method called, for messages. */
  method: string;
  /** Settles the call with the provider's result. */
  resolve(value: unknown): void;
  /** Fails the call. */
  reject(err: MuxError): void;
  /** The call's timeout. */
  timer: TimerId;
}

/** One provider process and the calls in flight on it. */
export interface Connection {
  /** The process. */
  proc: LineProcess;
  /** The calls in flight, by request id. */
  pending: Map<number, Pending>;
  /** Ids of calls given up (aborted): their late answers are dropped quietly. */
  abandoned: Set<number>;
  /** False once the connection is dropped or stopped. */
  live: boolean;
  /** The `initialize` answer, once the handshake is done. */
  info?: ProviderResult<"initialize">;
}

/** The client's mutable state, one object shared by the functions that run it. */
export interface ClientState {
  /** The last request id sent. */
  seq: number;
  /** How many times a provider process was started. */
  starts: number;
  /** The live connection, if any. */
  conn: Connection | null;
  /** The start under way, shared by concurrent callers. */
  starting: Promise<Connection> | null;
  /** Stops of dropped connections still under way (awaited by `stop()`). */
  stopping: Set<Promise<void>>;
}

/** What the functions running one client share: its seams, bounds, backoff and state. */
export interface ClientContext {
  /** The provider's argv (`provider.command`). */
  readonly argv: readonly string[];
  /** The line-process seam. */
  readonly open: LineProcessOpener;
  /** The clock every wait runs on. */
  readonly clock: Clock;
  /** Logs. */
  readonly log: Logger;
  /** The provider, as logs name it (`argv[0]`). */
  readonly name: string;
  /** The most one call may take, start and handshake included. */
  readonly timeoutMs: number;
  /** muxbridge's version, for `initialize`. */
  readonly version: string;
  /** How long a stop waits for the provider at each step. */
  readonly stopGraceMs: number;
  /** The restart backoff. */
  readonly backoff: RestartBackoff;
  /** The client's state. */
  readonly state: ClientState;
}

/**
 * Ends a connection: every call in flight fails with `err(call)`, the process is stopped (the
 * stop is kept in `state.stopping` until it is done).
 *
 * @param ctx The client.
 * @param c The connection; nothing happens when it is no longer live.
 * @param err The error of each call in flight.
 */
export function dropConnection(
  ctx: ClientContext,
  c: Connection,
  err: (p: Pending) => MuxError,
): void {
  const { clock, log, name, state } = ctx;
  if (!c.live) return;
  c.live = false;
  if (state.conn === c) state.conn = null;
  for (const p of c.pending.values()) {
    clock.clearTimeout(p.timer);
    p.reject(err(p));
  }
  c.pending.clear();
  const stopped = c.proc.stop(clock, ctx.stopGraceMs).then((exit) => {
    if (exit === null) log.error(`provider ${name}: pid ${c.proc.pid} outlived SIGKILL`);
  });
  state.stopping.add(stopped);
  stopped.finally(() => state.stopping.delete(stopped));
}

/**
 * Ends a connection on a line that is not an answer to a call in flight: nothing it says can be
 * trusted, so every call in flight fails `unparseable_output`.
 *
 * @param ctx The client.
 * @param c The connection; nothing happens when it is no longer live.
 * @param why What the provider sent ("a line that is not JSON: …").
 */
export function protocolViolation(ctx: ClientContext, c: Connection, why: string): void {
  if (!c.live) return;
  ctx.log.error(
    `provider ${ctx.name}: ${why}; stopping it (the protocol allows only JSON-RPC lines)`,
  );
  ctx.backoff.fail(`protocol violation: ${why}`);
  dropConnection(
    ctx,
    c,
    (p) =>
      new MuxError("unparseable_output", `Cannot ${p.method}: the provider sent ${why}`, {
        hint: "Fix the provider: its stdout carries only JSON-RPC 2.0 answers, one per line",
      }),
  );
}

/**
 * Sends one request on a connection; settles with its answer, a timeout or the drop. A timeout
 * takes the provider for hung: it counts a failure and drops the connection.
 *
 * @param ctx The client.
 * @param c The connection.
 * @param method The method.
 * @param params Its params, sent as they are.
 * @param deadline When the call must be answered (clock time).
 * @param signal Gives the call up: its late answer is dropped quietly.
 * @returns The raw result.
 * @throws {MuxError} `interrupted`, `timed_out`, `command_failed` (stdin closed), or what the
 *   answer or the drop fails the call with.
 */
export function sendRequest(
  ctx: ClientContext,
  c: Connection,
  method: string,
  params: unknown,
  deadline: number,
  signal?: AbortSignal,
): Promise<unknown> {
  const { clock } = ctx;
  if (signal?.aborted) {
    return Promise.reject(new MuxError("interrupted", `Cannot ${method}: interrupted`));
  }
  const id = ++ctx.state.seq;
  return new Promise<unknown>((resolve, reject) => {
    const onAbort = () => {
      if (!c.pending.delete(id)) return;
      clock.clearTimeout(timer);
      c.abandoned.add(id);
      reject(new MuxError("interrupted", `Cannot ${method}: interrupted`));
    };
    const settle = <T>(fn: (v: T) => void) => (v: T) => {
      signal?.removeEventListener("abort", onAbort);
      fn(v);
    };
    const timer = clock.setTimeout(() => {
      if (!c.pending.has(id)) return;
      c.pending.delete(id);
      signal?.removeEventListener("abort", onAbort);
      const err = new MuxError(
        "timed_out",
        `Cannot ${method}: the provider did not answer within ${ctx.timeoutMs} ms`,
        { hint: "The provider seems hung; it is restarted with the next call" },
      );
      reject(err);
      ctx.backoff.fail(`no answer to ${method} within ${ctx.timeoutMs} ms; stopping it`);
      dropConnection(
        ctx,
        c,
        (p) =>
          new MuxError("command_failed", `Cannot ${p.method}: the provider was stopped (hung)`),
      );
    }, Math.max(0, deadline - clock.now()));
    c.pending.set(id, { method, resolve: settle(resolve), reject: settle(reject), timer });
    signal?.addEventListener("abort", onAbort, { once: true });
    const line = `${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`;
    if (!c.proc.write(line)) {
      c.pending.delete(id);
      clock.clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      reject(new MuxError("command_failed", `Cannot ${method}: the provider's stdin is closed`));
    }
  });
}
