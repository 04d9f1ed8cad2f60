/**
 * Private to the provider backend: the JSON-RPC 2.0 client of one long-lived provider process.
 *
 * Every call is bounded (`command_timeout_ms`) and logged when it fails. What a misbehaving
 * provider gets, by what it did (docs/provider-protocol.md, "Failures"):
 * - no answer in time: the call fails `timed_out`; the provider is taken for hung and stopped;
 * - exits mid-call: the calls in flight fail `command_failed` with its exit and stderr tail;
 * - a line that is not a JSON-RPC answer to a call in flight (not JSON, not UTF-8, over 1 MiB,
 *   an unknown id): every call in flight fails `unparseable_output` at once (their answers can
 *   no longer be told apart) and the provider is stopped.
 * A stopped or crashed provider is started again by the next call, after a backoff that doubles
 * with each failure in a row (capped) and resets once a call succeeds. Nothing is ever sent
 * twice: a failed call is reported, never retried here (a spawn whose answer was lost is found by
 * its token, `lib/session/lost_spawns.ts`).
 *
 * @module
 */

import type { Clock } from "../../lib/sys/clock.ts";
import { cut, MuxError } from "../../lib/sys/errors.ts";
import type { LineProcessOpener } from "../../lib/sys/line_process.ts";
import type { Logger } from "../../lib/sys/log.ts";
import { createRestartBackoff } from "./_backoff.ts";
import { type ClientContext, sendRequest } from "./_connection.ts";
import { liveConnection, stopProvider } from "./_lifecycle.ts";
import {
  PROVIDER_METHODS,
  type ProviderMethod,
  type ProviderParams,
  type ProviderResult,
} from "./protocol.ts";

/** The initialize result, as muxbridge reads it. */
export type ProviderInfo = ProviderResult<"initialize">;

/** Options of {@linkcode createProviderClient}. */
export interface ProviderClientOptions {
  /** The provider's argv (`provider.command`). */
  argv: readonly string[];
  /** The line-process seam. */
  open: LineProcessOpener;
  /** The clock every wait runs on. */
  clock: Clock;
  /** Logs. */
  log: Logger;
  /** The most one call may take, start and handshake included (`command_timeout_ms`). */
  timeoutMs: number;
  /** muxbridge's version, for `initialize`. */
  version: string;
  /** The first restart delay after a failure; it doubles per failure in a row. @default 200 */
  backoffMs?: number;
  /** The longest restart delay. @default 5000 */
  maxBackoffMs?: number;
  /** How long a stop waits for the provider at each step (end of input, SIGTERM). @default 1000 */
  stopGraceMs?: number;
}

/** A client of one provider process. */
export interface ProviderClient {
  /**
   * Starts the provider when none runs and returns its `initialize` answer.
   *
   * @throws {MuxError} `binary_not_found`, `unsupported_version`, `timed_out`,
   *   `backend_unreachable` (restarting, within its backoff), `command_failed`.
   */
  info(signal?: AbortSignal): Promise<ProviderInfo>;
  /**
   * Calls a method and validates its result.
   *
   * @throws {MuxError} the provider's error mapped to a code (`pane_not_found`, `no_space`,
   *   `unsupported`, `invalid_argument`, `backend_unreachable`, `command_failed`), or
   *   `timed_out`, `unparseable_output`, `interrupted`, and the errors of {@linkcode info}.
   */
  call<M extends Exclude<ProviderMethod, "initialize">>(
    method: M,
    params: ProviderParams<M>,
    signal?: AbortSignal,
  ): Promise<ProviderResult<M>>;
  /** Stops the provider (end of input, then signals); later calls start it again. */
  stop(): Promise<void>;
  /** The running provider's pid, if one runs. */
  readonly pid: number | undefined;
  /** How many times a provider process was started. */
  readonly starts: number;
}

/**
 * Creates the client; the provider starts with the first call.
 *
 * @param options Argv, seams, bounds.
 * @returns The client.
 */
export function createProviderClient(options: ProviderClientOptions): ProviderClient {
  const { clock, log } = options;
  const name = options.argv[0] ?? "";
  const ctx: ClientContext = {
    argv: options.argv,
    open: options.open,
    clock,
    log,
    name,
    timeoutMs: options.timeoutMs,
    version: options.version,
    stopGraceMs: options.stopGraceMs ?? 1000,
    backoff: createRestartBackoff({
      clock,
      log,
      name,
      backoffMs: options.backoffMs ?? 200,
      maxBackoffMs: options.maxBackoffMs ?? 5000,
    }),
    state: { seq: 0, starts: 0, conn: null, starting: null, stopping: new Set() },
  };
  return {
    async info(signal) {
      const c = await liveConnection(ctx, clock.now() + ctx.timeoutMs, signal);
      return c.info!;
    },
    call: (method, params, signal) => callMethod(ctx, method, params, signal),
    stop: () => stopProvider(ctx),
    get pid() {
      return ctx.state.conn?.live ? ctx.state.conn.proc.pid : undefined;
    },
    get starts() {
      return ctx.state.starts;
    },
  };
}

/**
 * Calls a method on the live connection (started when there is none) and validates its result;
 * a valid result resets the restart backoff.
 *
 * @param ctx The client.
 * @param method The method.
 * @param params Its params.
 * @param signal Gives the call up.
 * @returns The result.
 * @throws {MuxError} what {@linkcode ProviderClient.call} throws.
 */
async function callMethod<M extends Exclude<ProviderMethod, "initialize">>(
  ctx: ClientContext,
  method: M,
  params: ProviderParams<M>,
  signal?: AbortSignal,
): Promise<ProviderResult<M>> {
  const deadline = ctx.clock.now() + ctx.timeoutMs;
  const c = await liveConnection(ctx, deadline, signal);
  const raw = await sendRequest(ctx, c, method, params, deadline, signal);
  const parsed = PROVIDER_METHODS[method].result.safeParse(raw);
  if (!parsed.success) {
    const err = new MuxError(
      "unparseable_output",
      `Cannot ${method}: the provider's result has the wrong shape: ${
        JSON.stringify(cut(JSON.stringify(raw) ?? "undefined", 200))
      }`,
      { hint: "See docs/provider-protocol.md for the result of each method" },
    );
    ctx.log.warn(`provider ${ctx.name}: ${err.message}`);
    throw err;
  }
  ctx.backoff.reset();
  return parsed.data as ProviderResult<M>;
}
