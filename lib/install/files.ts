/**
 * The file seam of `install`, `uninstall` and `doctor`: the few file operations they need,
 * with a real version over `node:fs` that never leaves a half-written file (write a temporary
 * file beside the target, fsync, rename over it).
 *
 * @module
 */

import {
  closeSync,
  constants,
  fsyncSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmdirSync,
  statSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { randomBytes } from "node:crypto";
import { basename, dirname, join } from "node:path";
import { MuxError } from "../sys/errors.ts";

/** What a path is. */
export interface FileInfo {
  /** `file`, `dir` or `other`. */
  kind: "file" | "dir" | "other";
  /** Permission bits. */
  mode: number;
}

/** The file operations install, uninstall and doctor use. */
export interface Files {
  /** Reads a UTF-8 file; null when it does not exist. @throws {MuxError} `write_failed` */
  read(path: string): string | null;
  /** What `path` is; null when it does not exist. */
  stat(path: string): FileInfo | null;
  /** Creates a directory and its parents. @throws {MuxError} `write_failed` */
  mkdirp(path: string): void;
  /**
   * Replaces `path` with `text` atomically (temporary file, fsync, rename).
   *
   * @throws {MuxError} `write_failed`
   */
  writeAtomic(path: string, text: string, mode: number): void;
  /** Removes a file (gone already is fine). @throws {MuxError} `write_failed` */
  remove(path: string): void;
  /** Removes a directory if it is empty; returns whether it did. */
  removeEmptyDir(path: string): boolean;
  /** Whether `path` is a file this user may execute. */
  isExecutable(path: string): boolean;
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
      : "Check the path and free space",
  });
}

/**
 * The real file seam over `node:fs`.
 *
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
export function createRealFiles(): Files {
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
  };
}
