/**
 * Private to the provider backend: the provider process's life in the client — started (after
 * the restart backoff) with the `initialize` handshake, shared by concurrent callers while it is
 * live, and stopped.
 *
 * @module
 */

import { sleep } from "../../lib/sys/clock.ts";
import { cut, MuxError } from "../../lib/sys/errors.ts";
import {
  type ClientContext,
  type Connection,
  dropConnection,
  protocolViolation,
  sendRequest,
} from "./_connection.ts";
import { receiveExit, receiveItem } from "./_receive.ts";
import { MAX_PROVIDER_LINE, PROVIDER_METHODS, PROVIDER_PROTOCOL_VERSION } from "./protocol.ts";

/**
 * Starts a provider process, once the backoff allows, and runs the `initialize` handshake.
 *
 * @param ctx The client.
 * @param deadline When the start, handshake included, must be done.
 * @param signal Aborts the wait and the handshake.
 * @returns The connection, its `info` set.
 * @throws {MuxError} `backend_unreachable` (within the backoff), `unparseable_output`,
 *   `unsupported_version`, and what {@linkcode sendRequest} throws.
 */
export async function startConnection(
  ctx: ClientContext,
  deadline: number,
  signal?: AbortSignal,
): Promise<Connection> {
  const { clock, log, name } = ctx;
  const wait = ctx.backoff.delay(deadline);
  if (wait > 0) await sleep(clock, wait, signal);
  ctx.state.starts++;
  const c: Connection = {
    proc: undefined!,
    pending: new Map(),
    abandoned: new Set(),
    live: true,
  };
  c.proc = ctx.open(ctx.argv, {
    maxLineBytes: MAX_PROVIDER_LINE,
    onItem: (item) => receiveItem(ctx, c, item),
    onStderr: (line) => log.debug(`provider ${name} stderr: ${cut(line, 500)}`),
    onExit: (exit) => receiveExit(ctx, c, exit),
  });
  const raw = await sendRequest(
    ctx,
    c,
    "initialize",
    {
      protocolVersion: PROVIDER_PROTOCOL_VERSION,
      client: { name: "muxbridge", version: ctx.version },
    },
    deadline,
    signal,
  );
  const parsed = PROVIDER_METHODS.initialize.result.safeParse(raw);
  if (!parsed.success) {
    protocolViolation(
      ctx,
      c,
      `an initialize answer of the wrong shape: ${cut(JSON.stringify(raw), 200)}`,
    );
    throw new MuxError(
      "unparseable_output",
      "Cannot start the provider: its initialize answer has the wrong shape",
      {
        hint: "See docs/provider-protocol.md for the initialize result",
      },
    );
  }
  if (parsed.data.protocolVersion !== PROVIDER_PROTOCOL_VERSION) {
    ctx.backoff.fail(`speaks protocol ${parsed.data.protocolVersion}`);
    dropConnection(
      ctx,
      c,
      (p) => new MuxError("unsupported_version", `Cannot ${p.method}: wrong protocol`),
    );
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
}

/**
 * The live connection, started (once, shared by concurrent callers) when there is none.
 *
 * @param ctx The client.
 * @param deadline When a start must be done.
 * @param signal Aborts a start.
 * @returns The connection, its handshake done.
 * @throws {MuxError} `command_failed` (the provider ended at once), and what
 *   {@linkcode startConnection} throws.
 */
export async function liveConnection(
  ctx: ClientContext,
  deadline: number,
  signal?: AbortSignal,
): Promise<Connection> {
  const { state } = ctx;
  if (state.conn?.live && state.conn.info) return state.conn;
  if (!state.starting) {
    state.starting = startConnection(ctx, deadline, signal).then((c) => {
      if (!c.live) {
        throw new MuxError("command_failed", "Cannot start the provider: it ended at once");
      }
      state.conn = c;
      return c;
    }).finally(() => state.starting = null);
  }
  return await state.starting;
}

/**
 * Stops the provider: waits for a start under way, fails the calls in flight `interrupted`,
 * stops the process (end of input, then signals), and waits for the stops of dropped
 * connections. A later call starts it again.
 *
 * @param ctx The client.
 */
export async function stopProvider(ctx: ClientContext): Promise<void> {
  const { clock, log, name, state } = ctx;
  await state.starting?.catch(() => {});
  const c = state.conn;
  state.conn = null;
  if (c) {
    c.live = false;
    for (const p of c.pending.values()) {
      clock.clearTimeout(p.timer);
      p.reject(new MuxError("interrupted", `Cannot ${p.method}: the provider was stopped`));
    }
    c.pending.clear();
    const exit = await c.proc.stop(clock, ctx.stopGraceMs);
    if (exit === null) log.error(`provider ${name}: pid ${c.proc.pid} outlived SIGKILL`);
  }
  await Promise.all([...state.stopping]);
}
