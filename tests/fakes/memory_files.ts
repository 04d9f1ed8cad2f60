/**
 * An in-memory {@linkcode Files} for install, uninstall and doctor tests: files and folders in
 * a map, with folders that refuse writes (to play an unwritable config folder) and a record of
 * every write.
 *
 * @module
 */

import { dirname } from "node:path";
import type { FileInfo, Files } from "../../lib/install/files.ts";
import { MuxError } from "../../lib/sys/errors.ts";

/** The fake, with its contents open for assertions. */
export interface MemoryFiles extends Files {
  /** Path → text. */
  readonly files: Map<string, { text: string; mode: number }>;
  /** Folders that exist. */
  readonly dirs: Set<string>;
  /** Folders whose writes fail with EACCES. */
  readonly readOnly: Set<string>;
  /** Every path written, in order. */
  readonly writes: string[];
  /** Marks a path executable (a file with mode 0755). */
  executable(path: string): void;
}

/**
 * Creates the fake.
 *
 * @param initial Files to start with (their folders exist).
 * @returns The fake.
 */
export function memoryFiles(initial: Record<string, string> = {}): MemoryFiles {
  const files = new Map<string, { text: string; mode: number }>();
  const dirs = new Set<string>(["/"]);
  const readOnly = new Set<string>();
  const writes: string[] = [];
  const addDirs = (path: string) => {
    for (let d = path; d !== "/" && !dirs.has(d); d = dirname(d)) dirs.add(d);
  };
  const guard = (path: string) => {
    for (let d = dirname(path);; d = dirname(d)) {
      if (readOnly.has(d)) {
        throw new MuxError("write_failed", `Cannot write "${path}": permission denied`);
      }
      if (d === "/") return;
    }
  };
  for (const [path, text] of Object.entries(initial)) {
    files.set(path, { text, mode: 0o644 });
    addDirs(dirname(path));
  }
  return {
    files,
    dirs,
    readOnly,
    writes,
    executable(path) {
      files.set(path, { text: "#!/bin/sh\n", mode: 0o755 });
      addDirs(dirname(path));
    },
    read: (path) => files.get(path)?.text ?? null,
    stat(path): FileInfo | null {
      const f = files.get(path);
      if (f) return { kind: "file", mode: f.mode };
      return dirs.has(path) ? { kind: "dir", mode: 0o755 } : null;
    },
    // No symbolic links here: the real seam's are tested on a real file system.
    writeTarget: (path) => ({ path, linked: false }),
    mkdirp(path) {
      if (!dirs.has(path)) guard(`${path}/x`);
      addDirs(path);
    },
    writeAtomic(path, text, mode) {
      guard(path);
      if (!dirs.has(dirname(path))) {
        throw new MuxError("write_failed", `Cannot write "${path}": no such folder`);
      }
      files.set(path, { text, mode });
      writes.push(path);
    },
    remove(path) {
      guard(path);
      files.delete(path);
    },
    removeEmptyDir(path) {
      const prefix = `${path}/`;
      if ([...files.keys(), ...dirs].some((p) => p.startsWith(prefix))) return false;
      return dirs.delete(path);
    },
    isExecutable: (path) => ((files.get(path)?.mode ?? 0) & 0o111) !== 0,
  };
}
