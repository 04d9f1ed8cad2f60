/**
 * The fake OpenCode server (`tests/fakes/fake_opencode.ts`) on a real loopback HTTP port, for
 * tests that run muxbridge as a separate process. Always `close()` it.
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
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    (req) => fake.handle(req).catch(() => new Response(null, { status: 499 })),
  );
  return {
    fake,
    url: `http://127.0.0.1:${server.addr.port}`,
    close: async () => {
      await server.shutdown();
    },
  };
}
