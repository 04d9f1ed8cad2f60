/**
 * The file seam of `install`, `uninstall` and `doctor`: the few file operations they need,
 * with a real version over `node:fs` that never leaves a half-written file (write a temporary
 * file beside the target, fsync, rename over it) and never replaces a symbolic link: a write
 * goes to the file the link points to, once {@linkcode Files.writeTarget} has checked it is a
 * regular file of this user's in a folder this user can write.
 *
 * @module
 */

import {
  accessSync,
  chmodSync,
  closeSync,
  constants,
  copyFileSync,
  fsyncSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  renameSync,
  rmdirSync,
  rmSync,
  statSync,
  symlinkSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { randomBytes } from "node:crypto";
import { basename, dirname, join } from "node:path";
import { MuxError } from "../sys/errors.ts";
import { currentUid } from "../sys/private_fs.ts";

/** What a path is. */
export interface FileInfo {
  /** `file`, `dir` or `other`. */
  kind: "file" | "dir" | "other";
  /** Permission bits. */
  mode: number;
}

/**
 * Where a write to a path lands: the path itself, or, when it is a symbolic link (a dotfiles
 * setup links `opencode.json`), the file the link ends at; or why install will not write there.
 */
export type WriteTarget =
  | {
    /** The file to write: `path`, or the link's final target. */
    path: string;
    /** Whether `path` is a symbolic link (the link stays; its target gets the text). */
    linked: boolean;
    refused?: undefined;
  }
  | {
    path?: undefined;
    /** Why a write through the link is refused, in words for a message. */
    refused: string;
  };

/** The file operations install, uninstall and doctor use. */
export interface Files {
  /** Reads a UTF-8 file; null when it does not exist. @throws {MuxError} `write_failed` */
  read(path: string): string | null;
  /** What `path` is; null when it does not exist. */
  stat(path: string): FileInfo | null;
  /**
   * Where writing `path` would land (see {@linkcode WriteTarget}): a path that is not a
   * symbolic link (or does not exist) is written itself; a link is followed to its final target,
   * which must exist, be a regular file this user owns, in a folder this user can write.
   */
  writeTarget(path: string): WriteTarget;
  /** Creates a directory and its parents. @throws {MuxError} `write_failed` */
  mkdirp(path: string): void;
  /**
   * Replaces `path` with `text` atomically (temporary file, fsync, rename). A symbolic link at
   * `path` is never replaced: write to its {@linkcode Files.writeTarget} instead.
   *
   * @throws {MuxError} `write_failed`, also when `path` is a symbolic link
   */
  writeAtomic(path: string, text: string, mode: number): void;
  /** Removes a file (gone already is fine). @throws {MuxError} `write_failed` */
  remove(path: string): void;
  /** Removes a directory if it is empty; returns whether it did. */
  removeEmptyDir(path: string): boolean;
  /** Whether `path` is a file this user may execute. */
  isExecutable(path: string): boolean;

  // What OpenCode 2.x's plugin folder needs (`install_v2.ts`): a link to a versioned folder.

  /** Where the symbolic link `path` points (its text); null when `path` is no link. */
  readLink(path: string): string | null;
  /** The names in a folder; none when it does not exist. */
  list(path: string): string[];
  /**
   * Creates the folder `path` holding `files` (name → text), atomically: written and synced in a
   * temporary folder beside it, then renamed into place.
   *
   * @throws {MuxError} `write_failed`, also when `path` exists
   */
  writeFolderAtomic(path: string, files: Readonly<Record<string, string>>, mode: number): void;
  /**
   * Points the link `path` at `target` in one step: a new link beside it renamed over it (an
   * OpenCode starting meanwhile sees the old target or the new one).
   *
   * @throws {MuxError} `write_failed`
   */
  replaceLink(path: string, target: string): void;
  /** Removes a folder and everything in it (gone already is fine). @throws {MuxError} `write_failed` */
  removeTree(path: string): void;
  /** `path` with every link along it resolved; null when it does not exist. */
  realPath(path: string): string | null;

  // What a binary run from a package manager's folder needs (`stable_binary.ts`): a copy.

  /**
   * Copies the file `from` to `to` atomically (a temporary file beside `to`, fsync, rename), with
   * mode `mode`; folders missing above `to` are created private to this user (0700).
   *
   * @throws {MuxError} `write_failed`
   */
  copyAtomic(from: string, to: string, mode: number): void;
  /** Whether two files hold the same bytes (false when either is missing). */
  sameContent(a: string, b: string): boolean;
}

/** The errno of a failed `node:fs` call. */
function errno(err: unknown): string | undefined {
  return (err as { code?: string })?.code;
}

function failed(action: string, path: string, err: unknown): MuxError {
  const code = errno(err);
  return new MuxError("write_failed", `Cannot ${action} "${path}": ${(err as Error).message}`, {
    cause: err,
    hint: code === "EACCES" || code === "EPERM" || code === "EROFS"
      ? "Check the folder's owner and permissions, or point XDG_CONFIG_HOME / OPENCODE_CONFIG_DIR elsewhere"
      : code === "ELOOP"
      ? "The path is a loop of symbolic links: fix or remove the link, then run the command again"
      : "Check the path and free space",
  });
}

/** Options of {@linkcode createRealFiles}. */
export interface RealFilesOptions {
  /**
   * The user whose files a symbolic link may be written through to. @default the current
   * effective uid
   */
  uid?: number;
}

/**
 * The real file seam over `node:fs`.
 *
 * @param options Whose files links may lead to.
 * @returns The seam.
 *
 * @example Write a file atomically
 * ```ts
 * import { createRealFiles } from "./files.ts";
 * const files = createRealFiles();
 * const dir = Deno.makeTempDirSync();
 * files.writeAtomic(`${dir}/a.txt`, "hello\n", 0o644);
 * ```
 */
export function createRealFiles(options: RealFilesOptions = {}): Files {
  const uid = options.uid ?? currentUid();
  return {
    read(path) {
      try {
        return readFileSync(path, "utf8");
      } catch (err) {
        if (errno(err) === "ENOENT" || errno(err) === "ENOTDIR") return null;
        throw failed("read", path, err);
      }
    },
    stat(path) {
      try {
        const s = statSync(path);
        return {
          kind: s.isFile() ? "file" : s.isDirectory() ? "dir" : "other",
          mode: s.mode & 0o7777,
        };
      } catch {
        return null;
      }
    },
    writeTarget(path) {
      return writeTargetOf(path, uid);
    },
    mkdirp(path) {
      try {
        mkdirSync(path, { recursive: true });
      } catch (err) {
        throw failed("create the folder", path, err);
      }
    },
    writeAtomic(path, text, mode) {
      // The temporary name ends in neither .ts nor .js: OpenCode loads every such file in its
      // plugin folder, and a crash must not leave a second plugin behind.
      const tmp = join(dirname(path), `.${basename(path)}.${randomBytes(6).toString("hex")}.tmp`);
      let fd: number | undefined;
      try {
        fd = openSync(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, mode);
        writeSync(fd, text);
        fsyncSync(fd);
        closeSync(fd);
        fd = undefined;
        // The rename would replace a link (a dotfiles setup's) with a regular file: never.
        if (isSymlink(path)) {
          throw new Error("it is a symbolic link (install writes to the file it points to)");
        }
        renameSync(tmp, path);
      } catch (err) {
        if (fd !== undefined) closeSync(fd);
        try {
          unlinkSync(tmp);
        } catch { /* never created */ }
        throw failed("write", path, err);
      }
    },
    remove(path) {
      try {
        unlinkSync(path);
      } catch (err) {
        if (errno(err) !== "ENOENT") throw failed("remove", path, err);
      }
    },
    removeEmptyDir(path) {
      try {
        rmdirSync(path);
        return true;
      } catch {
        return false;
      }
    },
    isExecutable(path) {
      try {
        const s = statSync(path);
        return s.isFile() && (s.mode & 0o111) !== 0;
      } catch {
        return false;
      }
    },
    ...folderFiles(),
    ...copyFiles(),
  };
}

/** The real versions of the copy operations. */
function copyFiles(): Pick<Files, "copyAtomic" | "sameContent"> {
  return {
    copyAtomic(from, to, mode) {
      const tmp = scratch(to);
      try {
        mkdirSync(dirname(to), { recursive: true, mode: 0o700 });
        copyFileSync(from, tmp, constants.COPYFILE_EXCL);
        chmodSync(tmp, mode);
        const fd = openSync(tmp, constants.O_RDONLY);
        try {
          fsyncSync(fd);
        } finally {
          closeSync(fd);
        }
        renameSync(tmp, to);
        syncFolder(dirname(to));
      } catch (err) {
        rmSync(tmp, { force: true });
        throw failed("copy the binary to", to, err);
      }
    },
    sameContent(a, b) {
      try {
        if (statSync(a).size !== statSync(b).size) return false;
        return readFileSync(a).equals(readFileSync(b));
      } catch {
        return false;
      }
    },
  };
}

/** A name beside `path` that no OpenCode loads (no .ts/.js ending) and no other run picks. */
function scratch(path: string): string {
  return join(dirname(path), `.${basename(path)}.${randomBytes(6).toString("hex")}.tmp`);
}

/** Syncs a folder's entries to disk (where the platform allows opening a folder). */
function syncFolder(path: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(path, constants.O_RDONLY);
    fsyncSync(fd);
  } catch {
    /* not supported here: the rename is still atomic */
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** The real versions of the link and folder operations. */
function folderFiles(): Pick<
  Files,
  "readLink" | "list" | "writeFolderAtomic" | "replaceLink" | "removeTree" | "realPath"
> {
  return {
    readLink(path) {
      try {
        return readlinkSync(path);
      } catch {
        return null; // absent, or not a link
      }
    },
    list(path) {
      try {
        return readdirSync(path).sort();
      } catch {
        return [];
      }
    },
    writeFolderAtomic(path, files, mode) {
      const tmp = scratch(path);
      try {
        mkdirSync(tmp, { mode: 0o755 });
        for (const [name, text] of Object.entries(files)) {
          const fd = openSync(
            join(tmp, name),
            constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL,
            mode,
          );
          try {
            writeSync(fd, text);
            fsyncSync(fd);
          } finally {
            closeSync(fd);
          }
        }
        syncFolder(tmp);
        // rename(2) onto an existing folder fails unless it is empty: never merge into one.
        if (statSync(path, { throwIfNoEntry: false })) {
          throw Object.assign(new Error("it exists already"), { code: "EEXIST" });
        }
        renameSync(tmp, path);
        syncFolder(dirname(path));
      } catch (err) {
        rmSync(tmp, { recursive: true, force: true });
        throw failed("write the folder", path, err);
      }
    },
    replaceLink(path, target) {
      const tmp = scratch(path);
      try {
        symlinkSync(target, tmp);
        renameSync(tmp, path);
        syncFolder(dirname(path));
      } catch (err) {
        try {
          unlinkSync(tmp);
        } catch { /* never created */ }
        throw failed("link", path, err);
      }
    },
    removeTree(path) {
      try {
        rmSync(path, { recursive: true, force: true });
      } catch (err) {
        throw failed("remove", path, err);
      }
    },
    realPath(path) {
      try {
        return realpathSync(path);
      } catch {
        return null;
      }
    },
  };
}

/** Whether `path` is a symbolic link (false when it does not exist). */
function isSymlink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}

/** {@linkcode Files.writeTarget} over `node:fs`. */
function writeTargetOf(path: string, uid: number | undefined): WriteTarget {
  if (!isSymlink(path)) return { path, linked: false };
  let shown = path;
  try {
    shown = readlinkSync(path);
  } catch { /* shown as the path */ }
  const link = `it is a symbolic link to ${JSON.stringify(shown)}`;
  let target: string;
  try {
    target = realpathSync(path);
  } catch (err) {
    const code = errno(err);
    return {
      refused: code === "ENOENT" || code === "ENOTDIR"
        ? `${link}, which does not exist`
        : code === "ELOOP"
        ? `${link}, a loop of links`
        : `${link}, which cannot be followed (${(err as Error).message})`,
    };
  }
  const at = target === shown ? link : `${link} (${JSON.stringify(target)})`;
  const st = statSync(target);
  if (!st.isFile()) return { refused: `${at}, which is not a regular file` };
  if (uid !== undefined && st.uid !== uid) {
    return { refused: `${at}, which uid ${st.uid} owns, not you (uid ${uid})` };
  }
  try {
    accessSync(dirname(target), constants.W_OK);
  } catch {
    return { refused: `${at}, in a folder you cannot write (${JSON.stringify(dirname(target))})` };
  }
  return { path: target, linked: true };
}
