/**
 * The fake OpenCode server (`tests/fakes/fake_opencode.ts`) on a real loopback HTTP port, for
 * tests that run muxbridge as a separate process; it can go away and come back on the same port.
 * Always `close()` it.
 *
 * This is not the real-server harness: `tests/helpers/opencode_server.ts` runs a real
 * `opencode serve`.
 *
 * @module
 */

import { createFakeOpencode, type FakeOpencode } from "../fakes/fake_opencode.ts";

/** A running fake server. */
export interface FakeOpencodeServer {
  /** The fake's state and controls. */
  fake: FakeOpencode;
  /** `http://127.0.0.1:<port>`. */
  url: string;
  /** Stops listening, so connections are refused (the server "goes away"). */
  down(): Promise<void>;
  /** Listens again on the same port (after {@linkcode FakeOpencodeServer.down}). */
  up(): void;
  /** Stops the server. */
  close(): Promise<void>;
}

/**
 * Serves the fake on 127.0.0.1 with a free port.
 *
 * @returns The server.
 */
export function serveFakeOpencode(): FakeOpencodeServer {
  const fake = createFakeOpencode();
  const listen = (port: number) =>
    Deno.serve(
      { hostname: "127.0.0.1", port, onListen: () => {} },
      (req) => fake.handle(req).catch(() => new Response(null, { status: 499 })),
    );
  let server: Deno.HttpServer<Deno.NetAddr> | null = listen(0);
  const port = server.addr.port;
  const down = async () => {
    await server?.shutdown();
    server = null;
  };
  return {
    fake,
    url: `http://127.0.0.1:${port}`,
    down,
    up() {
      server ??= listen(port);
    },
    close: down,
  };
}
