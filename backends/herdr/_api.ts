/**
 * Private to the herdr backend: the herdr operations muxbridge uses, each described once and sent
 * one of two ways:
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
 * Both ways carry the same values: the socket's `pane.split` `env` holds only the launch command
 * (the credentials stay in their private file, see `_launch.ts`), `pane.send_input` types the same
 * constant line `pane run` does, and herdr's error codes go through the one table in
 * `_command.ts`.
 *
 * @module
 */

import type { z } from "zod";
import { keepSuccess } from "../../lib/backend/_keep_success.ts";
import { gateVersion } from "../../lib/backend/_version_gate.ts";
import type { BackendDeps } from "../../lib/backend/backend.ts";
import { isMuxError, MuxError } from "../../lib/sys/errors.ts";
import type { Layer } from "../../lib/backend/identity.ts";
import { apiError, createHerdrCommand, type HerdrCommand, herdrError } from "./_command.ts";
import {
  OkSchema,
  PaneListSchema,
  PaneResultSchema,
  parseHerdrVersion,
  parseResult,
  PongSchema,
  ProcessInfoSchema,
} from "./_parse.ts";
import {
  createHerdrSocket,
  type HerdrSocket,
  resolveHerdrSocket,
  type SocketReply,
  type UnixRequester,
} from "./_socket.ts";
import { HERDR_GATE, HERDR_PROTOCOLS, type HerdrConfig } from "./_traits.ts";

/** A pane as muxbridge reads it. */
export type HerdrPane = z.infer<typeof PaneResultSchema>["result"]["pane"];

/** How operations go. */
export type HerdrTransport = "socket" | "cli";

/** A split: the pane to split (else herdr's choice), the direction, the cwd, the variables. */
export interface SplitParams {
  /** The pane to split. */
  target?: string;
  /** Where the new pane goes. */
  direction: "right" | "down";
  /** Its working directory. */
  cwd: string;
  /** Variables for its shell (names and values already checked). */
  env: Readonly<Record<string, string>>;
}

/** The transport in use and why, for `doctor`. */
export interface TransportState {
  /** How operations go. */
  transport: HerdrTransport;
  /** What was found ("socket /x (herdr 0.9.1, protocol 22)", or why the CLI is used). */
  detail: string;
  /** Whether `auto` fell back to the CLI. */
  fellBack: boolean;
}

/** herdr's operations for one backend. */
export interface HerdrApi {
  /** The CLI runner (binary, doctor's version text). */
  readonly cli: HerdrCommand;
  /** Where operations go, for messages. */
  target(): string;
  /**
   * Decides the transport (once; the ping runs on the first call).
   *
   * @throws {MuxError} In `socket` mode: `backend_unreachable`, `timed_out`,
   *   `unparseable_output`, `unsupported_version`; in any mode, `unsupported_version` when the
   *   server is older than the minimum.
   */
  transport(signal?: AbortSignal): Promise<TransportState>;
  /** The gated herdr version: the server's (socket) or the CLI's (`herdr --version`). */
  version(signal?: AbortSignal): Promise<string>;
  /** Splits a pane; returns the new pane's id. */
  split(params: SplitParams, signal?: AbortSignal): Promise<string>;
  /** A pane, or null when herdr does not know it. */
  get(paneId: string, signal?: AbortSignal): Promise<HerdrPane | null>;
  /** Every pane of the server. */
  list(signal?: AbortSignal): Promise<HerdrPane[]>;
  /** The pane's shell pid, when herdr tells. */
  shellPid(paneId: string, signal?: AbortSignal): Promise<number | undefined>;
  /** Types `text` and Enter into the pane (`pane run`). */
  run(paneId: string, text: string, signal?: AbortSignal): Promise<void>;
  /** Sends keys (`ctrl+c`). */
  sendKeys(paneId: string, keys: readonly string[], signal?: AbortSignal): Promise<void>;
  /** Closes the pane. */
  close(paneId: string, signal?: AbortSignal): Promise<void>;
  /** Sets the pane's label, or clears it (null). */
  rename(paneId: string, label: string | null, signal?: AbortSignal): Promise<HerdrPane>;
  /** Runs an operation described elsewhere in the backend (`_agent.ts`) the same way. */
  call<T>(op: HerdrOp<T>, signal?: AbortSignal): Promise<T>;
}

/** One operation, described for both ways. */
export interface HerdrOp<T> {
  /** What is done, for messages ("close pane \"w1:p3\""). */
  action: string;
  /** The socket method and its params. */
  method: string;
  params: Record<string, unknown>;
  /** The CLI arguments (after the binary and `--session`). */
  args: readonly string[];
  /** Only reads: safe to repeat through the CLI after the socket failed. */
  readOnly: boolean;
  /**
   * Reads the result: the socket's answer line or the CLI's stdout, the same
   * `{"id","result":{…}}` envelope either way (docs/backends/herdr.md §6, §7).
   */
  read(text: string): T;
}

/** Options of {@linkcode createHerdrApi}. */
export interface HerdrApiOptions {
  /** The one-line socket request seam. @default `unixRequest` (lib/sys/unix_request.ts) */
  unixRequest?: UnixRequester;
}

const nothing = () => undefined;

/**
 * Creates the operations of a herdr backend.
 *
 * @param deps The backend's deps (config `herdr.transport`, runner, clock, env, log).
 * @param layer The herdr layer muxbridge runs in, if any.
 * @param options Seams.
 * @returns The operations.
 */
export function createHerdrApi(
  deps: BackendDeps<HerdrConfig>,
  layer: Layer | undefined,
  options: HerdrApiOptions = {},
): HerdrApi {
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

  const viaCli = (why: string): TransportState => {
    deps.log.warn(`herdr socket: ${why}; using one herdr process per command`);
    return { transport: "cli", detail: `one herdr process per command: ${why}`, fellBack: true };
  };

  /** The error a failed socket request becomes. */
  const failure = (action: string, path: string, reply: SocketReply & { kind: "failed" }) => {
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
  };

  /** Pings the socket and decides. */
  const decide = async (signal?: AbortSignal): Promise<TransportState> => {
    const forced = mode === "socket";
    const location = resolveHerdrSocket(deps, layer);
    if (location.path === undefined) {
      if (forced) {
        throw new MuxError("backend_unreachable", `Cannot find herdr's socket: ${location.why}`, {
          hint: "Set herdr.socket_path, or run muxbridge inside herdr",
        });
      }
      return viaCli(`no socket (${location.why})`);
    }
    const path = location.path;
    const client = createHerdrSocket(deps, path, options.unixRequest);
    const reply = await client.request("ping", {}, signal);
    let failed: MuxError | undefined;
    if (reply.kind === "failed") failed = failure("ping herdr", path, reply);
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
            `Cannot read the herdr version ${
              JSON.stringify(pong.version.slice(0, 100))
            } of ${path}`,
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
          return viaCli(why);
        } else {
          socketVersion = gateVersion(HERDR_GATE, `herdr ${version}`).semver;
          socket = client;
          return {
            transport: "socket",
            detail: `socket ${path} (herdr ${version}, protocol ${pong.protocol})`,
            fellBack: false,
          };
        }
      }
    }
    if (forced) throw failed!;
    return viaCli(`${path}: ${failed!.message}`);
  };

  /** The ping's decision, once it is made. */
  const decided = keepSuccess(decide);

  const transport = (signal?: AbortSignal): Promise<TransportState> => {
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
    const state = await transport(signal);
    const client = socket;
    if (state.transport === "cli" || client === undefined) return await viaProcess(op, signal);
    const reply = await client.request(op.method, op.params, signal);
    if (reply.kind === "error") throw apiError(op.action, reply.error);
    let failed: SocketReply & { kind: "failed" };
    if (reply.kind === "result") {
      try {
        return op.read(reply.line);
      } catch (err) {
        if (!isMuxError(err, "unparseable_output")) throw err;
        failed = { kind: "failed", reason: "garbage", sent: true, detail: err.message };
      }
    } else failed = reply;
    const error = failure(op.action, client.path, failed);
    if (mode === "socket") throw error;
    demote(`${client.path}: ${failed.detail}`);
    if (failed.reason === "timed_out" || (failed.sent && !op.readOnly)) throw error;
    return await viaProcess(op, signal);
  };

  const paneOf = (what: string) => (text: string) =>
    parseResult(text, PaneResultSchema, what).result.pane;
  const ok = (what: string) => (text: string) => {
    parseResult(text, OkSchema, what);
  };

  return {
    cli,
    target: () => (socket ? `socket ${socket.path}` : cli.target),
    transport,
    async version(signal) {
      const state = await transport(signal);
      if (state.transport === "socket" && socketVersion !== undefined) return socketVersion;
      return await gateCli(signal);
    },
    async split(p, signal) {
      const env = Object.entries(p.env);
      const pane = await exec({
        action: "open a pane",
        method: "pane.split",
        params: {
          ...(p.target === undefined ? {} : { target_pane_id: p.target }),
          direction: p.direction,
          cwd: p.cwd,
          focus: false,
          env: p.env,
        },
        args: [
          "pane",
          "split",
          ...(p.target === undefined ? [] : [p.target]),
          "--direction",
          p.direction,
          "--cwd",
          p.cwd,
          "--no-focus",
          // NAME= first: the value can never be read as one of herdr's global flags.
          ...env.flatMap(([name, value]) => ["--env", `${name}=${value}`]),
        ],
        readOnly: false,
        read: paneOf("new pane"),
      }, signal);
      return pane.pane_id;
    },
    async get(paneId, signal) {
      try {
        return await exec({
          action: `inspect pane "${paneId}"`,
          method: "pane.get",
          params: { pane_id: paneId },
          args: ["pane", "get", paneId],
          readOnly: true,
          read: paneOf("pane"),
        }, signal);
      } catch (err) {
        if (isMuxError(err, "pane_not_found")) return null;
        throw err;
      }
    },
    list(signal) {
      const panes = (text: string) => parseResult(text, PaneListSchema, "pane list").result.panes;
      return exec({
        action: "list herdr's panes",
        method: "pane.list",
        params: {},
        args: ["pane", "list"],
        readOnly: true,
        read: panes,
      }, signal);
    },
    shellPid(paneId, signal) {
      const pid = (text: string) =>
        parseResult(text, ProcessInfoSchema, "process info").result.process_info.shell_pid;
      return exec({
        action: `read pane "${paneId}"'s process`,
        method: "pane.process_info",
        params: { pane_id: paneId },
        args: ["pane", "process-info", "--pane", paneId],
        readOnly: true,
        read: pid,
      }, signal);
    },
    run(paneId, text, signal) {
      // `pane run` is `pane.send_input {text, keys:["Enter"]}` (docs/backends/herdr.md §8). Both
      // answer nothing muxbridge reads: the CLI prints nothing, the socket a bare result.
      return exec({
        action: `start the program in pane "${paneId}"`,
        method: "pane.send_input",
        params: { pane_id: paneId, text, keys: ["Enter"] },
        args: ["pane", "run", paneId, text],
        readOnly: false,
        read: nothing,
      }, signal);
    },
    sendKeys(paneId, keys, signal) {
      return exec({
        action: `send ${keys.join(" ")} to pane "${paneId}"`,
        method: "pane.send_keys",
        params: { pane_id: paneId, keys },
        args: ["pane", "send-keys", paneId, ...keys],
        readOnly: false,
        read: nothing,
      }, signal);
    },
    close(paneId, signal) {
      return exec({
        action: `close pane "${paneId}"`,
        method: "pane.close",
        params: { pane_id: paneId },
        args: ["pane", "close", paneId],
        readOnly: false,
        read: ok("close result"),
      }, signal);
    },
    rename(paneId, label, signal) {
      return exec({
        action: `title pane "${paneId}"`,
        method: "pane.rename",
        // No label clears it (`PaneRenameParams.label` is optional).
        params: label === null ? { pane_id: paneId } : { pane_id: paneId, label },
        args: ["pane", "rename", paneId, label ?? "--clear"],
        readOnly: false,
        read: paneOf("renamed pane"),
      }, signal);
    },
    call: exec,
  };
}
