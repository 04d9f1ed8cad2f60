/**
 * The seam for one-shot requests over a Unix socket: connect, write one message, read one answer,
 * close. A message and its answer end with a marker: a line break by default (herdr's API
 * socket), or another one (kitty's remote control ends both with `ESC \`). A bounded wait on the
 * injected clock and an abort signal always; nothing is retried here, the caller decides from the
 * outcome.
 *
 * `node:net` (`createConnection({ path })`) runs under Deno and Bun alike, so the same source
 * builds with both.
 *
 * The outcome tells the caller whether the request may have reached the server (`sent`): a
 * request that was never written can be sent again another way; one that was written may have
 * had its effect.
 *
 * @module
 */

import { createConnection } from "node:net";
import { type Clock, createRealClock } from "./clock.ts";
import { cut, MuxError } from "./errors.ts";

/** Options of {@linkcode unixRequest}. */
export interface UnixRequestOptions {
  /** The most the whole request (connect, write, the answer's line) may take. */
  timeoutMs: number;
  /** Aborting ends the request and rejects with `interrupted`. */
  signal?: AbortSignal;
  /** The clock the timeout runs on. @default the real clock */
  clock?: Clock;
  /** The longest answer accepted, in bytes. @default 8 MiB */
  maxBytes?: number;
  /** What ends the message and the answer. @default "\n" */
  end?: string;
  /**
   * Whether an answer comes. Without one, the request resolves with an empty answer once the
   * message is written. @default true
   */
  answer?: boolean;
}

/** Why a request got no answer line. */
export type UnixFailure =
  /** Nothing listens there (`ENOENT`, `ECONNREFUSED`, `EACCES`, `ENOTSOCK`…). */
  | "unreachable"
  /** No complete answer within the timeout. */
  | "timed_out"
  /** The server closed the connection (or reset it) before a complete answer. */
  | "closed"
  /** The answer is longer than `maxBytes`. */
  | "too_long";

/** What one request got. */
export type UnixReply =
  | {
    /** An answer came (or none was expected, and the message was written). */
    ok: true;
    /** The answer up to its end marker, without it ("" when no answer was expected). */
    line: string;
  }
  | {
    /** No answer came. */
    ok: false;
    /** Why. */
    reason: UnixFailure;
    /** Whether the request was written (the server may have acted on it). */
    sent: boolean;
    /** What happened, for messages (an errno code, the partial text cut short). */
    detail: string;
  };

/** The shape of {@linkcode unixRequest}, for callers that take it as a seam. */
export type UnixRequester = (
  path: string,
  line: string,
  options: UnixRequestOptions,
) => Promise<UnixReply>;

const DEFAULT_MAX_BYTES = 8 * 1024 * 1024;

/**
 * Sends one message to the Unix socket at `path` and reads the answer up to its end marker.
 *
 * @param path The socket path.
 * @param line The message, without its end marker (it is added).
 * @param options Timeout, abort signal, clock, size bound, end marker, whether an answer comes.
 * @returns The answer, or why there is none.
 * @throws {TypeError} When `line` holds the end marker (a line break, by default).
 * @throws {RangeError} When `timeoutMs` is not positive.
 * @throws {MuxError} `interrupted` when `signal` aborts.
 *
 * @example Ask a server
 * ```ts
 * import { unixRequest } from "./unix_request.ts";
 * const reply = await unixRequest("/run/user/1000/herdr.sock", '{"id":"1","method":"ping","params":{}}', {
 *   timeoutMs: 2000,
 * });
 * if (reply.ok) console.log(reply.line);
 * ```
 */
export function unixRequest(
  path: string,
  line: string,
  options: UnixRequestOptions,
): Promise<UnixReply> {
  const end = options.end ?? "\n";
  if (end === "") throw new RangeError(`Cannot send to "${path}": the end marker is empty`);
  const lines = end === "\n";
  if (lines ? /[\n\r]/.test(line) : line.includes(end)) {
    throw new TypeError(
      `Cannot send a request holding ${lines ? "a line break" : "its end marker"}`,
    );
  }
  if (!(options.timeoutMs > 0)) {
    throw new RangeError(`Cannot send to "${path}": timeoutMs must be positive`);
  }
  const { signal } = options;
  const interrupted = () =>
    new MuxError("interrupted", `Cannot finish the request to "${path}": interrupted`);
  if (signal?.aborted) return Promise.reject(interrupted());
  const clock = options.clock ?? createRealClock();
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  return new Promise<UnixReply>((resolve, reject) => {
    let sent = false;
    let done = false;
    let text = "";
    let bytes = 0;
    const decoder = new TextDecoder();
    const socket = createConnection({ path });
    const finish = (outcome: UnixReply | MuxError) => {
      if (done) return;
      done = true;
      clock.clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      socket.destroy();
      if (outcome instanceof MuxError) reject(outcome);
      else resolve(outcome);
    };
    const fail = (reason: UnixFailure, detail: string) =>
      finish({ ok: false, reason, sent, detail });
    const partial = () => (text === "" ? "nothing" : `only ${JSON.stringify(cut(text, 200))}`);
    const onAbort = () => finish(interrupted());
    const timer = clock.setTimeout(
      () => fail("timed_out", `no answer within ${options.timeoutMs} ms (got ${partial()})`),
      options.timeoutMs,
    );
    signal?.addEventListener("abort", onAbort, { once: true });
    socket.on("connect", () => {
      sent = true;
      socket.write(`${line}${end}`, () => {
        if (options.answer === false) finish({ ok: true, line: "" });
      });
    });
    socket.on("data", (chunk: Uint8Array) => {
      bytes += chunk.byteLength;
      text += decoder.decode(chunk, { stream: true });
      const at = text.indexOf(end);
      if (at >= 0) finish({ ok: true, line: text.slice(0, at) });
      else if (bytes > maxBytes) fail("too_long", `the answer exceeds ${maxBytes} bytes`);
    });
    socket.on("error", (err: Error & { code?: string }) => {
      const code = err.code ?? err.message;
      if (!sent) fail("unreachable", code);
      else fail("closed", `${code} (got ${partial()})`);
    });
    const unit = lines ? "line" : "answer";
    socket.on("close", () => fail("closed", `closed before a complete ${unit} (got ${partial()})`));
  });
}
