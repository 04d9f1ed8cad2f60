/**
 * A fake herdr API socket server for muxbridge's tests and benchmarks (herdr cannot be installed
 * here). It speaks the wire protocol of docs/backends/herdr.md §6 byte for byte as far as
 * muxbridge can tell: newline-delimited JSON, one request per connection (the first line is
 * answered, the connection is then closed, anything after the first line is ignored), answers in
 * struct order (`{"id","result":{"type",…}}`, `{"id","error":{"code","message"}}`), an
 * unreadable request answered `{"id":"","error":{"code":"invalid_request",…}}`. Requests are answered by the pane
 * model the fake CLI uses (`herdr_model.ts`), on the same state file under the same lock.
 *
 * Faults come from the state's `socketFault` (`MODE[:METHOD]`, read per connection): `hang`,
 * `crash` (half a line, then the connection drops), `garbage`, `close` (no byte), `wrong-id`.
 * A refused connection is the server killed with its socket file left behind; a missing socket
 * is a server never started.
 *
 * Run as a process: `deno run -A --no-config tests/fakes/herdr_socket.ts STATE_FILE SOCKET`; it
 * prints `ready` once it listens and removes the socket on SIGTERM.
 *
 * @module
 */

import {
  type FakeHerdrState,
  handle,
  pong,
  refresh,
  type WireReply,
  type WireRequest,
  withState,
} from "./herdr_model.ts";

/** A listening fake server. */
export interface HerdrSocketServer {
  /** The socket path. */
  path: string;
  /** Requests answered so far (pings included). */
  readonly answered: number;
  /** Stops listening and removes the socket file. */
  close(): Promise<void>;
}

const MAX_LINE = 1024 * 1024;
const encoder = new TextEncoder();

async function writeAll(conn: Deno.Conn, text: string): Promise<void> {
  let bytes = encoder.encode(text);
  while (bytes.length > 0) bytes = bytes.subarray(await conn.write(bytes));
}

/** Reads up to the first newline; null when the client closed first. */
async function readLine(conn: Deno.Conn): Promise<string | null> {
  const decoder = new TextDecoder();
  const buf = new Uint8Array(4096);
  let text = "";
  while (text.length < MAX_LINE) {
    const n = await conn.read(buf);
    if (n === null) return null;
    text += decoder.decode(buf.subarray(0, n), { stream: true });
    const end = text.indexOf("\n");
    if (end >= 0) return text.slice(0, end);
  }
  return null;
}

function readState(statePath: string): FakeHerdrState {
  return JSON.parse(Deno.readTextFileSync(statePath)) as FakeHerdrState;
}

function faultFor(state: FakeHerdrState, method: string): string | undefined {
  if (!state.socketFault) return undefined;
  const [mode, only] = state.socketFault.split(":");
  return only && only !== method ? undefined : mode;
}

function parseRequest(line: string): WireRequest | string {
  let json: unknown;
  try {
    json = JSON.parse(line);
  } catch (e) {
    return (e as Error).message;
  }
  if (!json || typeof json !== "object") return "expected an object";
  const o = json as Record<string, unknown>;
  if (typeof o.id !== "string") return "missing field `id`";
  if (typeof o.method !== "string") return "missing field `method`";
  const params = o.params ?? {};
  if (!params || typeof params !== "object" || Array.isArray(params)) {
    return "invalid type for `params`, expected a map";
  }
  return { id: o.id, method: o.method, params: params as Record<string, unknown> };
}

async function answer(statePath: string, conn: Deno.Conn): Promise<void> {
  const line = await readLine(conn);
  if (line === null) return;
  const req = parseRequest(line);
  if (typeof req === "string") {
    await writeAll(
      conn,
      `${
        JSON.stringify({
          id: "",
          error: { code: "invalid_request", message: `invalid request: ${req}` },
        })
      }\n`,
    );
    return;
  }
  const mode = faultFor(readState(statePath), req.method);
  if (mode === "hang") {
    // Holds the connection until the client gives up (its read then ends).
    await readLine(conn).catch(() => null);
    return;
  }
  if (mode === "close") return;
  if (mode === "crash") {
    await writeAll(conn, `{"id":${JSON.stringify(req.id)},"res`);
    return;
  }
  if (mode === "garbage") {
    await writeAll(conn, "thread 'tokio-runtime-worker' panicked at src/api/server.rs:1:1\n");
    return;
  }
  let reply: WireReply;
  if (req.method === "ping") reply = { id: req.id, result: pong(readState(statePath)) };
  else {
    reply = await withState(statePath, (state) => {
      if (!state.running) {
        return {
          id: req.id,
          error: { code: "server_unavailable", message: "server is shutting down" },
        };
      }
      refresh(state);
      return handle(state, req);
    });
  }
  if (mode === "wrong-id") reply = { ...reply, id: `${req.id}-other` };
  await writeAll(conn, `${JSON.stringify(reply)}\n`);
}

/**
 * Listens on `path` and answers every connection from the state file.
 *
 * @param statePath The fake's state file.
 * @param path The socket path (a stale file there is removed first).
 * @returns The server.
 */
export function serveHerdrSocket(statePath: string, path: string): HerdrSocketServer {
  try {
    Deno.removeSync(path);
  } catch { /* none */ }
  const listener = Deno.listen({ transport: "unix", path });
  let answered = 0;
  const open = new Map<Deno.Conn, Promise<void>>();
  const loop = (async () => {
    for await (const conn of listener) {
      const done = answer(statePath, conn)
        .catch((e) => console.error(`fake herdr socket: ${(e as Error).message}`))
        .finally(() => {
          answered++;
          try {
            conn.close();
          } catch { /* closed */ }
          open.delete(conn);
        });
      open.set(conn, done);
    }
  })().catch(() => {});
  return {
    path,
    get answered() {
      return answered;
    },
    async close() {
      listener.close();
      await loop;
      for (const conn of open.keys()) {
        try {
          conn.close();
        } catch { /* closed */ }
      }
      await Promise.allSettled([...open.values()]);
      try {
        Deno.removeSync(path);
      } catch { /* gone */ }
    },
  };
}

if (import.meta.main) {
  const [statePath, path] = Deno.args;
  const server = serveHerdrSocket(statePath, path);
  Deno.addSignalListener("SIGTERM", () => {
    server.close().finally(() => Deno.exit(0));
  });
  console.log("ready");
}
