/**
 * Private to the herdr backend: herdr's API socket, spoken directly (no `herdr` process).
 *
 * The wire (docs/backends/herdr.md §6, the 0.8.2 source `src/api/server.rs`): newline-delimited
 * JSON, one request per connection. Connect, write `{"id","method","params"}` and a newline, read
 * one line `{"id","result":{"type",…}}` or `{"id","error":{"code","message"}}`; the server then
 * closes. An unreadable request is answered `{"id":"","error":{"code":"invalid_request",…}}`.
 *
 * The socket is found the way herdr's CLI finds it (docs/backends/herdr.md §5, `src/session.rs`),
 * given what muxbridge hands the CLI: `herdr.session` (the CLI's `--session`), else
 * `herdr.socket_path` or the socket of the herdr muxbridge runs in (the CLI's `HERDR_SOCKET_PATH`),
 * else `HERDR_SESSION`, else the default `$XDG_CONFIG_HOME/herdr/herdr.sock` (`~/.config/…`).
 *
 * @module
 */

import type { BackendDeps } from "../../lib/backend/backend.ts";
import type { HerdrConfig } from "./_traits.ts";
import { cut } from "../../lib/sys/errors.ts";
import { parseJson } from "../../lib/sys/parse_output.ts";
import type { Layer } from "../../lib/backend/identity.ts";
import { plainNameProblem } from "../../lib/sys/validate.ts";
import { type UnixFailure, unixRequest, type UnixRequester } from "../../lib/sys/unix_request.ts";
import type { HerdrApiError } from "./_parse.ts";
import { WireReplySchema } from "./_parse.ts";

export type { UnixRequester };

/** Where the socket is, or why muxbridge cannot tell. */
export type SocketLocation = { path: string; why?: undefined } | { path?: undefined; why: string };

/**
 * Resolves herdr's API socket as herdr's CLI would for the commands muxbridge runs.
 *
 * @param deps The backend's deps (config `herdr`, env lookup).
 * @param layer The herdr layer muxbridge runs in, if any.
 * @returns The path, or why there is none.
 */
export function resolveHerdrSocket(
  deps: BackendDeps<HerdrConfig>,
  layer: Layer | undefined,
): SocketLocation {
  const env = (name: string) => {
    const value = deps.env(name);
    return value === undefined || value === "" ? undefined : value;
  };
  const base = env("XDG_CONFIG_HOME") ?? (env("HOME") ? `${env("HOME")}/.config` : undefined);
  // herdr's own names are 1–64 of `[A-Za-z0-9._-]`, not `.` or `..` (docs/backends/herdr.md §5);
  // muxbridge's plain names are those, narrowed (no leading "." or "-", no ".." anywhere).
  const named = (name: string, from: string): SocketLocation => {
    const problem = plainNameProblem(name);
    if (problem !== null) {
      return { why: `${from} ${JSON.stringify(name)} is not a plain session name: ${problem}` };
    }
    if (base === undefined) return { why: "neither XDG_CONFIG_HOME nor HOME is set" };
    return {
      path: name === "default"
        ? `${base}/herdr/herdr.sock`
        : `${base}/herdr/sessions/${name}/herdr.sock`,
    };
  };
  const { session, socket_path } = deps.config.herdr;
  if (session !== undefined) return named(session, "herdr.session");
  const direct = socket_path ?? layer?.socket ?? env("HERDR_SOCKET_PATH");
  if (direct !== undefined) return { path: direct };
  const fromEnv = env("HERDR_SESSION");
  return named(fromEnv ?? "default", "HERDR_SESSION");
}

/** What one socket request got. */
export type SocketReply =
  | {
    /** A result: `line` is the whole answer line (parse it with the method's schema). */
    kind: "result";
    /** The answer line. */
    line: string;
  }
  | {
    /** herdr answered an error. */
    kind: "error";
    /** Its code and message. */
    error: HerdrApiError;
  }
  | {
    /** No usable answer. */
    kind: "failed";
    /** Why: the seam's reason, or `garbage` for a line that is not a reply to this request. */
    reason: UnixFailure | "garbage";
    /** Whether the request was written (the server may have acted on it). */
    sent: boolean;
    /** What happened, for messages. */
    detail: string;
  };

/** A client of one herdr API socket. */
export interface HerdrSocket {
  /** The socket path. */
  readonly path: string;
  /**
   * Sends one request on a connection of its own.
   *
   * @throws {MuxError} `interrupted` when `signal` aborts.
   */
  request(
    method: string,
    params: Readonly<Record<string, unknown>>,
    signal?: AbortSignal,
  ): Promise<SocketReply>;
}

/**
 * Creates a client of the socket at `path`.
 *
 * @param deps The backend's deps (clock, `command_timeout_ms` bounds every request).
 * @param path The socket path.
 * @param send The request seam. @default `unixRequest`
 * @returns The client.
 */
export function createHerdrSocket(
  deps: BackendDeps<HerdrConfig>,
  path: string,
  send: UnixRequester = unixRequest,
): HerdrSocket {
  let seq = 0;
  return {
    path,
    async request(method, params, signal) {
      const id = `muxbridge:${method}:${++seq}`;
      const reply = await send(path, JSON.stringify({ id, method, params }), {
        timeoutMs: deps.config.command_timeout_ms,
        clock: deps.clock,
        ...(signal ? { signal } : {}),
      });
      if (!reply.ok) {
        return { kind: "failed", reason: reply.reason, sent: reply.sent, detail: reply.detail };
      }
      const garbage = (): SocketReply => ({
        kind: "failed",
        reason: "garbage",
        sent: true,
        detail: `unexpected answer ${JSON.stringify(cut(reply.line, 256))}`,
      });
      const answer = parseJson(WireReplySchema, reply.line);
      if (answer === undefined) return garbage();
      if ("error" in answer) {
        // An unreadable request is answered with an empty id (docs/backends/herdr.md §6).
        if (answer.id !== id && answer.id !== "") return garbage();
        return { kind: "error", error: answer.error };
      }
      if (answer.id !== id) return garbage();
      return { kind: "result", line: reply.line };
    },
  };
}
