/**
 * `which`: where a program name resolves on a PATH, the way a shell (and `spawn` without a
 * shell) finds it.
 *
 * @module
 */

import { isAbsolute, join } from "node:path";
import type { Files } from "./files.ts";

/**
 * The first executable file named `name` in `path`'s folders; a name with a slash is checked
 * as it is.
 *
 * @param name The program (`opencode`, `muxbridge`, or a path).
 * @param path The PATH value (folders separated by `:`).
 * @param files The file seam (`isExecutable`).
 * @returns The absolute path, or null when nothing executable is found.
 *
 * @example
 * ```ts
 * import { findOnPath } from "./find_on_path.ts";
 * import { createRealFiles } from "./files.ts";
 * findOnPath("sh", "/usr/bin:/bin", createRealFiles()); // "/usr/bin/sh" (or "/bin/sh")
 * ```
 */
export function findOnPath(name: string, path: string | undefined, files: Files): string | null {
  if (name.includes("/")) return isAbsolute(name) && files.isExecutable(name) ? name : null;
  for (const dir of (path ?? "").split(":")) {
    if (dir === "" || !isAbsolute(dir)) continue; // "." and relative entries are not followed
    const candidate = join(dir, name);
    if (files.isExecutable(candidate)) return candidate;
  }
  return null;
}
