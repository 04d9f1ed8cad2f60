/**
 * An in-memory {@linkcode Files} for install, uninstall and doctor tests: files, folders and
 * symbolic links in maps (paths through a link resolve to its target), with folders that refuse
 * writes (to play an unwritable config folder) and a record of every write.
 *
 * @module
 */

import { dirname, isAbsolute, join, resolve } from "node:path";
import type { FileInfo, Files } from "../../lib/install/files.ts";
import { MuxError } from "../../lib/sys/errors.ts";

/** The fake, with its contents open for assertions. */
export interface MemoryFiles extends Files {
  /** Path → text. */
  readonly files: Map<string, { text: string; mode: number }>;
  /** Folders that exist. */
  readonly dirs: Set<string>;
  /** Symbolic links: path → target (as written). */
  readonly links: Map<string, string>;
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
  const links = new Map<string, string>();
  /** `path` with every link along it (the last entry included) replaced by its target. */
  const real = (path: string): string => {
    const parts = path.split("/").filter((p) => p !== "");
    let at = "/";
    for (let hops = 0, i = 0; i < parts.length; i++) {
      at = join(at, parts[i]);
      const target = links.get(at);
      if (target === undefined) continue;
      if (++hops > 40) break;
      const next = isAbsolute(target) ? target : resolve(dirname(at), target);
      return real(join(next, ...parts.slice(i + 1)));
    }
    return at;
  };
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
    links,
    readOnly,
    writes,
    executable(path) {
      files.set(path, { text: "#!/bin/sh\n", mode: 0o755 });
      addDirs(dirname(path));
    },
    read: (path) => files.get(real(path))?.text ?? null,
    stat(path): FileInfo | null {
      const f = files.get(real(path));
      if (f) return { kind: "file", mode: f.mode };
      return dirs.has(real(path)) ? { kind: "dir", mode: 0o755 } : null;
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
      if (!links.delete(path)) files.delete(path);
    },
    removeEmptyDir(path) {
      const prefix = `${path}/`;
      if ([...files.keys(), ...dirs, ...links.keys()].some((p) => p.startsWith(prefix))) {
        return false;
      }
      return dirs.delete(path);
    },
    isExecutable: (path) => ((files.get(real(path))?.mode ?? 0) & 0o111) !== 0,
    readLink: (path) => links.get(path) ?? null,
    list(path) {
      const prefix = `${real(path)}/`;
      const names = [...files.keys(), ...dirs, ...links.keys()]
        .filter((p) => p.startsWith(prefix) && !p.slice(prefix.length).includes("/"))
        .map((p) => p.slice(prefix.length));
      return [...new Set(names)].sort();
    },
    writeFolderAtomic(path, contents, mode) {
      guard(`${path}/x`);
      if (!dirs.has(dirname(path))) {
        throw new MuxError("write_failed", `Cannot write the folder "${path}": no such folder`);
      }
      if (dirs.has(path) || files.has(path) || links.has(path)) {
        throw new MuxError("write_failed", `Cannot write the folder "${path}": it exists already`);
      }
      dirs.add(path);
      for (const [name, text] of Object.entries(contents)) {
        files.set(join(path, name), { text, mode });
        writes.push(join(path, name));
      }
    },
    replaceLink(path, target) {
      guard(path);
      if (!dirs.has(dirname(path))) {
        throw new MuxError("write_failed", `Cannot link "${path}": no such folder`);
      }
      if (dirs.has(path) || files.has(path)) {
        throw new MuxError("write_failed", `Cannot link "${path}": it is no link`);
      }
      links.set(path, target);
      writes.push(path);
    },
    realPath(path) {
      const at = real(path);
      return files.has(at) || dirs.has(at) ? at : null;
    },
    copyAtomic(from, to, mode) {
      guard(to);
      const f = files.get(real(from));
      if (!f) throw new MuxError("write_failed", `Cannot copy "${from}": no such file`);
      addDirs(dirname(to));
      files.set(to, { text: f.text, mode });
      writes.push(to);
    },
    sameContent(a, b) {
      const fa = files.get(real(a));
      const fb = files.get(real(b));
      return fa !== undefined && fb !== undefined && fa.text === fb.text;
    },
    removeTree(path) {
      guard(path);
      const prefix = `${path}/`;
      for (const p of [...files.keys()]) if (p.startsWith(prefix)) files.delete(p);
      for (const p of [...links.keys()]) if (p === path || p.startsWith(prefix)) links.delete(p);
      for (const p of [...dirs]) if (p === path || p.startsWith(prefix)) dirs.delete(p);
      files.delete(path);
    },
  };
}
