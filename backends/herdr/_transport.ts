/**
 * Private to the herdr backend: how an operation (`_ops.ts`) reaches herdr, one of two ways:
 *
 * 1. herdr's API socket (`_socket.ts`): a connection per request, no process start. Used when
 *    `herdr.transport` is `auto` (the default) or `socket`, the socket resolves and answers
 *    `ping` with a protocol muxbridge speaks ({@linkcode HERDR_PROTOCOLS}) from a herdr that is
 *    not too old. The ping runs once per backend, on its first operation
 *    (herdr's CLI pings before every command because each run is a new process).
 * 2. one `herdr` process per operation (`_command.ts`), after `herdr --version` is gated: when
 *    `herdr.transport` is `cli`, or in `auto` when the socket is missing, refuses the connection,
 *    answers garbage or a protocol outside that range. Logged once.
 *
 * In `auto`, a socket that worked and then fails (refused, closed early, garbage) sends every
 * later operation through the CLI for the backend's life (logged once). The operation that hit
 * the failure is repeated through the CLI when that is safe: the request never reached herdr, or
 * it only reads (`pane.get`, `pane.list`, `pane.process_info`). One that may have acted (a split,
 * typed input, keys, a close, a rename) is not repeated: running it twice could open a second
 * pane or type the line twice. A timeout is not repeated either: the server hung, and the CLI
 * talks to the same server. In `socket` mode nothing falls back; the failure is the error.
 *
 * @module
 */

import { keepSuccess } from "../../lib/backend/_keep_success.ts";
import { gateVersion } from "../../lib/backend/_version_gate.ts";
import type { BackendDeps } from "../../lib/backend/backend.ts";
import type { Layer } from "../../lib/backend/identity.ts";
import { isMuxError, MuxError } from "../../lib/sys/errors.ts";
import { apiError, createHerdrCommand, type HerdrCommand, herdrError } from "./_command.ts";
import type { HerdrOp } from "./_ops.ts";
import { parseHerdrVersion, parseResult, PongSchema } from "./_parse.ts";
import {
  createHerdrSocket,
  type HerdrSocket,
  resolveHerdrSocket,
  type SocketReply,
  type UnixRequester,
} from "./_socket.ts";
import { HERDR_GATE, HERDR_PROTOCOLS, type HerdrConfig } from "./_traits.ts";

/** How operations go. */
export type HerdrTransport = "socket" | "cli";

/** The transport in use and why, for `doctor`. */
export interface TransportState {
  /** How operations go. */
  transport: HerdrTransport;
  /** What was found ("socket /x (herdr 0.9.1, protocol 22)", or why the CLI is used). */
  detail: string;
  /** Whether `auto` fell back to the CLI. */
  fellBack: boolean;
}

/** A socket request that got no usable answer. */
export type SocketFailure = SocketReply & { kind: "failed" };

/**
 * The error a failed socket request becomes.
 *
 * @param action What was being done ("close pane \"w1:p3\"").
 * @param path The socket path.
 * @param reply The failure.
 * @returns The error: `backend_unreachable` (through herdr's `server_not_running`), `timed_out`,
 *   `command_failed` or `unparseable_output`, with a hint.
 */
export function socketFailure(action: string, path: string, reply: SocketFailure): MuxError {
  switch (reply.reason) {
    case "unreachable":
      return apiError(action, {
        code: "server_not_running",
        message: `no herdr server is running at ${path} (${reply.detail})`,
      });
    case "timed_out":
      return new MuxError(
        "timed_out",
        `Cannot ${action}: herdr's socket ${path}: ${reply.detail}`,
        {
          hint: "The herdr server hung; check that it is running and healthy",
        },
      );
    case "closed":
      return new MuxError(
        "command_failed",
        `Cannot ${action}: herdr's socket ${path}: ${reply.detail}`,
        reply.sent ? { hint: "herdr may have done it anyway; check its panes" } : {},
      );
    case "too_long":
    case "garbage":
      return new MuxError(
        "unparseable_output",
        `Cannot ${action}: herdr's socket ${path}: ${reply.detail}`,
        { hint: "Report this with `herdr --version`, or set herdr.transport to cli" },
      );
  }
}

/** What the ping decided: the state, and on the socket its client and gated version. */
export interface TransportDecision {
  /** The transport and why. */
  state: TransportState;
  /** The socket's client, when operations go through it. */
  socket?: HerdrSocket;
  /** The server's gated version, when operations go through the socket. */
  version?: string;
}

/** The CLI decided on, logged. */
function viaCli(deps: BackendDeps<HerdrConfig>, why: string): TransportDecision {
  deps.log.warn(`herdr socket: ${why}; using one herdr process per command`);
  return {
    state: { transport: "cli", detail: `one herdr process per command: ${why}`, fellBack: true },
  };
}

/**
 * Pings the socket and decides the transport (`herdr.transport` is `auto` or `socket`).
 *
 * @param deps The backend's deps (config `herdr`, env, clock, log).
 * @param layer The herdr layer muxbridge runs in, if any.
 * @param unixRequest The socket request seam.
 * @param signal Aborts the ping.
 * @returns The decision; a fallback to the CLI is logged.
 * @throws {MuxError} In `socket` mode: `backend_unreachable`, `timed_out`, `unparseable_output`,
 *   `unsupported_version`; in any mode, `unsupported_version` when the server is older than the
 *   minimum.
 */
export async function decideTransport(
  deps: BackendDeps<HerdrConfig>,
  layer: Layer | undefined,
  unixRequest: UnixRequester | undefined,
  signal?: AbortSignal,
): Promise<TransportDecision> {
  const forced = deps.config.herdr.transport === "socket";
  const location = resolveHerdrSocket(deps, layer);
  if (location.path === undefined) {
    if (forced) {
      throw new MuxError("backend_unreachable", `Cannot find herdr's socket: ${location.why}`, {
        hint: "Set herdr.socket_path, or run muxbridge inside herdr",
      });
    }
    return viaCli(deps, `no socket (${location.why})`);
  }
  const path = location.path;
  const client = createHerdrSocket(deps, path, unixRequest);
  const reply = await client.request("ping", {}, signal);
  let failed: MuxError | undefined;
  if (reply.kind === "failed") failed = socketFailure("ping herdr", path, reply);
  else if (reply.kind === "error") failed = apiError("ping herdr", reply.error);
  else {
    let pong;
    try {
      pong = parseResult(reply.line, PongSchema, "ping answer").result;
    } catch (err) {
      failed = err as MuxError;
    }
    if (pong) {
      const version = parseHerdrVersion(`herdr ${pong.version}`);
      if (version === null) {
        failed = new MuxError(
          "unparseable_output",
          `Cannot read the herdr version ${JSON.stringify(pong.version.slice(0, 100))} of ${path}`,
        );
      } else if (pong.protocol < HERDR_PROTOCOLS.min || pong.protocol > HERDR_PROTOCOLS.max) {
        // The server's own version decides first: an old server is refused either way.
        gateVersion(HERDR_GATE, `herdr ${version}`);
        const why =
          `${path} speaks protocol ${pong.protocol}; muxbridge's socket client speaks ${HERDR_PROTOCOLS.min}–${HERDR_PROTOCOLS.max}`;
        if (forced) {
          throw new MuxError("unsupported_version", `Cannot use herdr's socket: ${why}`, {
            hint: "Set herdr.transport to auto or cli: the herdr CLI checks its own protocol",
          });
        }
        return viaCli(deps, why);
      } else {
        return {
          state: {
            transport: "socket",
            detail: `socket ${path} (herdr ${version}, protocol ${pong.protocol})`,
            fellBack: false,
          },
          version: gateVersion(HERDR_GATE, `herdr ${version}`).semver,
          socket: client,
        };
      }
    }
  }
  if (forced) throw failed!;
  return viaCli(deps, `${path}: ${failed!.message}`);
}

/** How one backend's operations reach herdr. */
export interface Transport {
  /** The CLI runner (binary, doctor's version text). */
  readonly cli: HerdrCommand;
  /** Where operations go, for messages. */
  target(): string;
  /**
   * Decides the transport (once; the ping runs on the first call).
   *
   * @throws {MuxError} As {@linkcode decideTransport}.
   */
  state(signal?: AbortSignal): Promise<TransportState>;
  /** The gated herdr version: the server's (socket) or the CLI's (`herdr --version`). */
  version(signal?: AbortSignal): Promise<string>;
  /** Runs one operation the way decided, falling back to the CLI where that is safe. */
  exec<T>(op: HerdrOp<T>, signal?: AbortSignal): Promise<T>;
}

/**
 * Creates the transport of one backend.
 *
 * @param deps The backend's deps (config `herdr.transport`, runner, clock, env, log).
 * @param layer The herdr layer muxbridge runs in, if any.
 * @param unixRequest The socket request seam. @default `unixRequest` (lib/sys/unix_request.ts)
 * @returns The transport.
 */
export function createTransport(
  deps: BackendDeps<HerdrConfig>,
  layer: Layer | undefined,
  unixRequest?: UnixRequester,
): Transport {
  const mode = deps.config.herdr.transport;
  const cli = createHerdrCommand(deps, layer);
  let socket: HerdrSocket | undefined;
  let socketVersion: string | undefined;
  /** Set once `auto` gave up on the socket: every later operation uses the CLI. */
  let demoted: string | undefined;

  /** `herdr --version`, gated; a success is kept for the backend's life. */
  const gateCli = keepSuccess(async (signal?: AbortSignal): Promise<string> => {
    const result = await cli.version(signal);
    if (result.code !== 0) throw herdrError("read the herdr version", result);
    const text = result.stdout.trim();
    return gateVersion(HERDR_GATE, text, { argv: result.argv }).semver;
  });

  /** The ping's decision, once it is made. */
  const decided = keepSuccess(async (signal?: AbortSignal): Promise<TransportState> => {
    const decision = await decideTransport(deps, layer, unixRequest, signal);
    if (decision.socket !== undefined) {
      socketVersion = decision.version;
      socket = decision.socket;
    }
    return decision.state;
  });

  const state = (signal?: AbortSignal): Promise<TransportState> => {
    if (mode === "cli") {
      return Promise.resolve({
        transport: "cli",
        detail: "herdr.transport is cli: one herdr process per command",
        fellBack: false,
      });
    }
    if (demoted !== undefined) {
      return Promise.resolve({
        transport: "cli",
        detail: `one herdr process per command: ${demoted}`,
        fellBack: true,
      });
    }
    return decided(signal);
  };

  const demote = (why: string) => {
    if (demoted !== undefined) return;
    demoted = why;
    socket = undefined;
    deps.log.warn(`herdr socket: ${why}; using one herdr process per command from now on`);
  };

  const viaProcess = async <T>(op: HerdrOp<T>, signal?: AbortSignal): Promise<T> => {
    await gateCli(signal);
    return op.read(await cli.must(op.action, op.args, signal));
  };

  const exec = async <T>(op: HerdrOp<T>, signal?: AbortSignal): Promise<T> => {
    const current = await state(signal);
    const client = socket;
    if (current.transport === "cli" || client === undefined) return await viaProcess(op, signal);
    const reply = await client.request(op.method, op.params, signal);
    if (reply.kind === "error") throw apiError(op.action, reply.error);
    let failed: SocketFailure;
    if (reply.kind === "result") {
      try {
        return op.read(reply.line);
      } catch (err) {
        if (!isMuxError(err, "unparseable_output")) throw err;
        failed = { kind: "failed", reason: "garbage", sent: true, detail: err.message };
      }
    } else failed = reply;
    const error = socketFailure(op.action, client.path, failed);
    if (mode === "socket") throw error;
    demote(`${client.path}: ${failed.detail}`);
    if (failed.reason === "timed_out" || (failed.sent && !op.readOnly)) throw error;
    return await viaProcess(op, signal);
  };

  return {
    cli,
    target: () => (socket ? `socket ${socket.path}` : cli.target),
    state,
    async version(signal) {
      const current = await state(signal);
      if (current.transport === "socket" && socketVersion !== undefined) return socketVersion;
      return await gateCli(signal);
    },
    exec,
  };
}
