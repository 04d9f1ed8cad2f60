/**
 * A loopback HTTP listener that records every request (method, path, `authorization` header):
 * the server a planted or stale pane record points at, which must never receive a password.
 *
 * @module
 */

import { lchownSync } from "node:fs";

/** One request the listener saw. */
export interface SeenRequest {
  /** `GET /session/…`. */
  line: string;
  /** The `authorization` header, or null. */
  authorization: string | null;
}

/** A running listener. */
export interface Listener {
  /** `http://127.0.0.1:<port>`. */
  url: string;
  /** Every request so far. */
  seen: SeenRequest[];
  /** Stops it. */
  close(): Promise<void>;
}

/**
 * Listens on 127.0.0.1 with a free port.
 *
 * @param answer The response to each request. @default 404 (a session it does not know)
 * @returns The listener; always `close()` it.
 */
export function listen(
  answer: (req: Request) => Response = () => new Response(null, { status: 404 }),
): Listener {
  const seen: SeenRequest[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (req) => {
    const url = new URL(req.url);
    seen.push({
      line: `${req.method} ${url.pathname}${url.search}`,
      authorization: req.headers.get("authorization"),
    });
    return answer(req);
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    seen,
    close: () => server.shutdown(),
  };
}

/** The uid and gid of `nobody`: "another local user" for tests that run as root. */
export const NOBODY = 65534;

/**
 * Gives a file or directory tree to `nobody` (tests run as root, so they can), without
 * following symbolic links.
 *
 * @param paths What to give away; directories recursively.
 */
export function giveToNobody(...paths: string[]): void {
  for (const path of paths) {
    const info = Deno.lstatSync(path);
    if (info.isDirectory) {
      for (const entry of Deno.readDirSync(path)) giveToNobody(`${path}/${entry.name}`);
    }
    lchownSync(path, NOBODY, NOBODY); // a symbolic link itself, never its target
  }
}
