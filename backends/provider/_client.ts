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

import type { Clock, TimerId } from "../../lib/sys/clock.ts";
import { sleep } from "../../lib/sys/clock.ts";
import { cut, type ErrorCode, MuxError } from "../../lib/sys/errors.ts";
import type { LineItem } from "../../lib/sys/line_reader.ts";
import type {
  LineProcess,
  LineProcessExit,
  LineProcessOpener,
} from "../../lib/sys/line_process.ts";
import type { Logger } from "../../lib/sys/log.ts";
import {
  MAX_PROVIDER_LINE,
  PROVIDER_ERRORS,
  PROVIDER_METHODS,
  PROVIDER_PROTOCOL_VERSION,
  ProviderMessageSchema,
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

interface Pending {
  method: string;
  resolve(value: unknown): void;
  reject(err: MuxError): void;
  timer: TimerId;
}

interface Connection {
  proc: LineProcess;
  pending: Map<number, Pending>;
  /** Ids of calls given up (aborted): their late answers are dropped quietly. */
  abandoned: Set<number>;
  live: boolean;
  info?: ProviderInfo;
}

const RPC_TO_CODE: ReadonlyMap<number, ErrorCode> = new Map<number, ErrorCode>([
  [PROVIDER_ERRORS.paneNotFound, "pane_not_found"],
  [PROVIDER_ERRORS.noSpace, "no_space"],
  [PROVIDER_ERRORS.unsupported, "unsupported"],
  [PROVIDER_ERRORS.unavailable, "backend_unreachable"],
  [-32601, "unsupported"],
  [-32602, "invalid_argument"],
]);

/**
 * Creates the client; the provider starts with the first call.
 *
 * @param options Argv, seams, bounds.
 * @returns The client.
 */
export function createProviderClient(options: ProviderClientOptions): ProviderClient {
  const { clock, log } = options;
  const name = options.argv[0] ?? "";
  const backoffMs = options.backoffMs ?? 200;
  const maxBackoffMs = options.maxBackoffMs ?? 5000;
  const stopGraceMs = options.stopGraceMs ?? 1000;
  let seq = 0;
  let starts = 0;
  let conn: Connection | null = null;
  let starting: Promise<Connection> | null = null;
  let failures = 0;
  let retryAt = 0;
  /** Stops of dropped connections still under way (awaited by `stop()`). */
  const stopping = new Set<Promise<void>>();

  const fail = (why: string) => {
    failures++;
    retryAt = clock.now() + Math.min(backoffMs * 2 ** (failures - 1), maxBackoffMs);
    log.warn(`provider ${name}: ${why}`);
  };

  /** Ends a connection: every call in flight fails with `err(call)`, the process is stopped. */
  const drop = (c: Connection, err: (p: Pending) => MuxError) => {
    if (!c.live) return;
    c.live = false;
    if (conn === c) conn = null;
    for (const p of c.pending.values()) {
      clock.clearTimeout(p.timer);
      p.reject(err(p));
    }
    c.pending.clear();
    const stopped = c.proc.stop(clock, stopGraceMs).then((exit) => {
      if (exit === null) log.error(`provider ${name}: pid ${c.proc.pid} outlived SIGKILL`);
    });
    stopping.add(stopped);
    stopped.finally(() => stopping.delete(stopped));
  };

  /** A line that is not an answer to a call in flight: nothing it says can be trusted. */
  const violation = (c: Connection, why: string) => {
    if (!c.live) return;
    log.error(`provider ${name}: ${why}; stopping it (the protocol allows only JSON-RPC lines)`);
    fail(`protocol violation: ${why}`);
    drop(
      c,
      (p) =>
        new MuxError("unparseable_output", `Cannot ${p.method}: the provider sent ${why}`, {
          hint: "Fix the provider: its stdout carries only JSON-RPC 2.0 answers, one per line",
        }),
    );
  };

  const onItem = (c: Connection, item: LineItem) => {
    if (item.kind === "too_long") {
      return violation(c, `a line of ${item.bytes} bytes (the limit is ${MAX_PROVIDER_LINE})`);
    }
    if (item.kind === "bad_utf8") return violation(c, `line ${item.lineNo}, which is not UTF-8`);
    if (item.line.trim() === "") return;
    let json: unknown;
    try {
      json = JSON.parse(item.line);
    } catch {
      return violation(c, `a line that is not JSON: ${JSON.stringify(cut(item.line, 200))}`);
    }
    const parsed = ProviderMessageSchema.safeParse(json);
    if (!parsed.success) {
      return violation(
        c,
        `a line that is not JSON-RPC 2.0: ${JSON.stringify(cut(item.line, 200))}`,
      );
    }
    const message = parsed.data;
    if ("method" in message) {
      log.debug(`provider ${name}: notification ${cut(message.method, 100)} ignored`);
      return;
    }
    const id = message.id;
    const pending = typeof id === "number" ? c.pending.get(id) : undefined;
    if (!pending) {
      if (typeof id === "number" && c.abandoned.delete(id)) return;
      if ("error" in message && id === null) {
        return violation(
          c,
          `an error for a request it could not read: ${cut(message.error.message, 200)}`,
        );
      }
      return violation(c, `an answer to id ${JSON.stringify(id)}, which no call in flight has`);
    }
    c.pending.delete(id as number);
    clock.clearTimeout(pending.timer);
    if ("error" in message) {
      const code = RPC_TO_CODE.get(message.error.code) ?? "command_failed";
      const err = new MuxError(
        code,
        `Cannot ${pending.method}: the provider answered ${message.error.code} ${
          JSON.stringify(cut(message.error.message, 300))
        }`,
      );
      if (code === "command_failed") log.warn(`provider ${name}: ${err.message}`);
      pending.reject(err);
      return;
    }
    if (!("result" in message)) {
      return violation(c, `an answer to id ${id} without a result`);
    }
    pending.resolve(message.result);
  };

  const onExit = (c: Connection, exit: LineProcessExit) => {
    if (!c.live) return;
    const how = exit.startError !== undefined
      ? `could not start (${exit.startError})`
      : exit.signal !== null
      ? `was killed by ${exit.signal}`
      : `exited ${exit.code}`;
    const tail = exit.stderr.trim().split("\n").at(-1) ?? "";
    fail(`${how}${tail ? `: ${cut(tail, 300)}` : ""}`);
    const notFound = exit.startError === "ENOENT" || exit.startError === "EACCES";
    drop(c, (p) =>
      new MuxError(
        notFound ? "binary_not_found" : "command_failed",
        `Cannot ${p.method}: the provider ${how}${tail ? `: ${cut(tail, 300)}` : ""}`,
        {
          hint: notFound
            ? `Check provider.command: ${JSON.stringify(name)} must be an executable program`
            : "Check the provider's stderr (muxbridge logs it at debug level)",
        },
      ));
  };

  /** Sends one request on a connection; settles with its answer, a timeout or the drop. */
  const send = (
    c: Connection,
    method: string,
    params: unknown,
    deadline: number,
    signal?: AbortSignal,
  ): Promise<unknown> => {
    if (signal?.aborted) {
      return Promise.reject(new MuxError("interrupted", `Cannot ${method}: interrupted`));
    }
    const id = ++seq;
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
          `Cannot ${method}: the provider did not answer within ${options.timeoutMs} ms`,
          { hint: "The provider seems hung; it is restarted with the next call" },
        );
        reject(err);
        fail(`no answer to ${method} within ${options.timeoutMs} ms; stopping it`);
        drop(
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
  };

  const start = async (deadline: number, signal?: AbortSignal): Promise<Connection> => {
    const wait = retryAt - clock.now();
    if (wait > 0) {
      if (clock.now() + wait >= deadline) {
        throw new MuxError(
          "backend_unreachable",
          `Cannot reach the provider: it failed ${failures} time(s) in a row and restarts in ${wait} ms`,
          { hint: "Check `muxbridge doctor` and the provider's stderr (debug log)" },
        );
      }
      await sleep(clock, wait, signal);
    }
    starts++;
    const c: Connection = {
      proc: undefined!,
      pending: new Map(),
      abandoned: new Set(),
      live: true,
    };
    c.proc = options.open(options.argv, {
      maxLineBytes: MAX_PROVIDER_LINE,
      onItem: (item) => onItem(c, item),
      onStderr: (line) => log.debug(`provider ${name} stderr: ${cut(line, 500)}`),
      onExit: (exit) => onExit(c, exit),
    });
    const raw = await send(
      c,
      "initialize",
      {
        protocolVersion: PROVIDER_PROTOCOL_VERSION,
        client: { name: "muxbridge", version: options.version },
      },
      deadline,
      signal,
    );
    const parsed = PROVIDER_METHODS.initialize.result.safeParse(raw);
    if (!parsed.success) {
      violation(c, `an initialize answer of the wrong shape: ${cut(JSON.stringify(raw), 200)}`);
      throw new MuxError(
        "unparseable_output",
        "Cannot start the provider: its initialize answer has the wrong shape",
        {
          hint: "See docs/provider-protocol.md for the initialize result",
        },
      );
    }
    if (parsed.data.protocolVersion !== PROVIDER_PROTOCOL_VERSION) {
      fail(`speaks protocol ${parsed.data.protocolVersion}`);
      drop(c, (p) => new MuxError("unsupported_version", `Cannot ${p.method}: wrong protocol`));
      throw new MuxError(
        "unsupported_version",
        `The provider speaks protocol ${
          JSON.stringify(cut(parsed.data.protocolVersion, 20))
        }, muxbridge speaks ${PROVIDER_PROTOCOL_VERSION}`,
        { hint: "Update the provider or muxbridge so both speak the same protocol version" },
      );
    }
    c.info = parsed.data;
    log.debug(
      `provider ${name}: ${parsed.data.provider.name} ${parsed.data.provider.version} (pid ${c.proc.pid})`,
    );
    return c;
  };

  /** The live connection, started (once, shared by concurrent callers) when there is none. */
  const connection = async (deadline: number, signal?: AbortSignal): Promise<Connection> => {
    if (conn?.live && conn.info) return conn;
    if (!starting) {
      starting = start(deadline, signal).then((c) => {
        if (!c.live) {
          throw new MuxError("command_failed", "Cannot start the provider: it ended at once");
        }
        conn = c;
        return c;
      }).finally(() => starting = null);
    }
    return await starting;
  };

  return {
    async info(signal) {
      const c = await connection(clock.now() + options.timeoutMs, signal);
      return c.info!;
    },
    async call(method, params, signal) {
      const deadline = clock.now() + options.timeoutMs;
      const c = await connection(deadline, signal);
      const raw = await send(c, method, params, deadline, signal);
      const parsed = PROVIDER_METHODS[method].result.safeParse(raw);
      if (!parsed.success) {
        const err = new MuxError(
          "unparseable_output",
          `Cannot ${method}: the provider's result has the wrong shape: ${
            JSON.stringify(cut(JSON.stringify(raw) ?? "undefined", 200))
          }`,
          { hint: "See docs/provider-protocol.md for the result of each method" },
        );
        log.warn(`provider ${name}: ${err.message}`);
        throw err;
      }
      failures = 0;
      retryAt = 0;
      return parsed.data as ProviderResult<typeof method>;
    },
    async stop() {
      await starting?.catch(() => {});
      const c = conn;
      conn = null;
      if (c) {
        c.live = false;
        for (const p of c.pending.values()) {
          clock.clearTimeout(p.timer);
          p.reject(new MuxError("interrupted", `Cannot ${p.method}: the provider was stopped`));
        }
        c.pending.clear();
        const exit = await c.proc.stop(clock, stopGraceMs);
        if (exit === null) log.error(`provider ${name}: pid ${c.proc.pid} outlived SIGKILL`);
      }
      await Promise.all([...stopping]);
    },
    get pid() {
      return conn?.live ? conn.proc.pid : undefined;
    },
    get starts() {
      return starts;
    },
  };
}
