/**
 * The identity of a file at a path: its device, inode and modification time. A server that
 * listens on a Unix socket binds a new socket file each time it starts (the old one is removed
 * first), so the stamp of a socket path tells a restarted server from the one that was there
 * before, even where nothing else names the server's process.
 *
 * @module
 */

import { lstatSync } from "node:fs";

/**
 * The stamp of the file at `path` (the entry itself: a symbolic link is not followed).
 *
 * @param path The path.
 * @returns `<device>:<inode>:<mtime ns>`, or undefined when nothing is there.
 *
 * @example
 * ```ts
 * import { fileStamp } from "./file_stamp.ts";
 * fileStamp("/"); // e.g. "2049:2:1700000000000000000"
 * fileStamp("/nonexistent"); // undefined
 * ```
 */
export function fileStamp(path: string): string | undefined {
  try {
    const st = lstatSync(path, { bigint: true });
    return `${st.dev}:${st.ino}:${st.mtimeNs}`;
  } catch {
    return undefined;
  }
}
