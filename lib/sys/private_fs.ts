/**
 * Files and directories that only this user controls: the state directory and its records, and
 * log files. Another local user must not be able to plant a record muxbridge acts on, redirect a
 * write through a symbolic link, or read what muxbridge logs, so:
 *
 * - a private directory is created 0700 and accepted only when this user owns it and no other
 *   user can write to it (nor to a parent it hangs from, sticky `/tmp` aside);
 * - every file is opened with `O_NOFOLLOW` (a symbolic link is refused, never followed) and
 *   checked after opening (`fstat`): a regular file this user owns;
 * - a replaced file is written to a fresh random name with `O_EXCL`, synced (unless the caller
 *   only needs it to outlive its own process), then renamed.
 *
 * Only `node:` APIs, so it runs under Deno and Bun alike. Without uids (Windows) the owner and
 * mode checks are skipped; `O_NOFOLLOW` is 0 there.
 *
 * @module
 */

import { randomBytes } from "node:crypto";
import {
  closeSync,
  constants,
  fchmodSync,
  fstatSync,
  fsyncSync,
  lstatSync,
  mkdirSync,
  openSync,
  readSync,
  realpathSync,
  renameSync,
  rmSync,
  type Stats,
  statSync,
  writeSync,
} from "node:fs";
import { dirname, join } from "node:path";
import process from "node:process";
import { MuxError } from "./errors.ts";

const O_NOFOLLOW = constants.O_NOFOLLOW ?? 0;
// A FIFO planted under a record's name must not block the open.
const O_NONBLOCK = constants.O_NONBLOCK ?? 0;
const { O_RDONLY, O_WRONLY, O_CREAT, O_EXCL, O_APPEND } = constants;

/** Group- or world-writable mode bits. */
const OTHERS_WRITE = 0o022;
const STICKY = 0o1000;

/**
 * This process's effective uid, or undefined where uids do not exist (Windows).
 *
 * @returns The uid.
 */
export function currentUid(): number | undefined {
  return typeof process.geteuid === "function" ? process.geteuid() : undefined;
}

function octal(mode: number): string {
  return `0${(mode & 0o7777).toString(8)}`;
}

function unsafeDir(path: string, problem: string, hint: string): MuxError {
  return new MuxError("invalid_config", `Cannot use state directory "${path}": ${problem}`, {
    hint,
  });
}

/**
 * Why a directory this user must own is unsafe, or null when it is safe: not a directory (a
 * symbolic link counts as not one), another owner, or writable by others.
 */
function ownDirProblem(st: Stats, uid: number | undefined): string | null {
  if (st.isSymbolicLink()) return "it is a symbolic link";
  if (!st.isDirectory()) return "it is not a directory";
  if (uid === undefined) return null;
  if (st.uid !== uid) return `it is owned by uid ${st.uid}, not by you (uid ${uid})`;
  if (st.mode & OTHERS_WRITE) return `other users can write to it (mode ${octal(st.mode)})`;
  return null;
}

/**
 * Why a parent of a private directory is unsafe, or null: it may belong to this user or to
 * root, and may be writable by others only with the sticky bit (like `/tmp`), so that nobody else
 * can rename the private directory away and put their own in its place.
 */
function ancestorProblem(st: Stats, uid: number | undefined): string | null {
  if (uid === undefined || st.uid === uid) return null;
  if (st.uid !== 0) return `its parent is owned by uid ${st.uid}`;
  if ((st.mode & OTHERS_WRITE) && !(st.mode & STICKY)) {
    return `its parent is writable by other users (mode ${octal(st.mode)}) without the sticky bit`;
  }
  return null;
}

/**
 * Creates a private directory (0700, parents too) or checks an existing one, and returns its real
 * path (symbolic links in the path resolved once, so later checks and writes all use one
 * directory).
 *
 * @param path The directory.
 * @param uid The user that must own it. @default the current effective uid
 * @returns The real path.
 * @throws {MuxError} `invalid_config` (exit 3) naming the path, what is wrong and the fix: owned
 *   by another user, writable by others, not a directory, a parent another user controls, or
 *   it cannot be created.
 *
 * @example
 * ```ts
 * import { ensurePrivateDir } from "./private_fs.ts";
 * const dir = ensurePrivateDir(Deno.makeTempDirSync() + "/state");
 * ```
 */
export function ensurePrivateDir(path: string, uid: number | undefined = currentUid()): string {
  let real: string;
  try {
    mkdirSync(path, { recursive: true, mode: 0o700 });
    real = realpathSync(path);
  } catch (err) {
    throw new MuxError(
      "invalid_config",
      `Cannot create state directory "${path}": ${(err as Error).message}`,
      {
        cause: err,
        hint: "Set MUXBRIDGE_STATE_DIR (or state_dir) to a directory you can write",
      },
    );
  }
  const problem = ownDirProblem(lstatSync(real), uid);
  if (problem) {
    throw unsafeDir(
      real,
      problem,
      problem.startsWith("other users")
        ? `Run \`chmod 700 ${real}\`, or point MUXBRIDGE_STATE_DIR elsewhere`
        : "Remove it, or set MUXBRIDGE_STATE_DIR (or state_dir) to a directory only you own (muxbridge creates it 0700)",
    );
  }
  for (let dir = dirname(real);; dir = dirname(dir)) {
    const why = ancestorProblem(statSync(dir), uid);
    if (why) {
      throw unsafeDir(
        real,
        `${why} (${dir})`,
        "Set MUXBRIDGE_STATE_DIR (or state_dir) to a directory under your home directory",
      );
    }
    if (dirname(dir) === dir) break;
  }
  return real;
}

/**
 * Creates (0700) or checks a subdirectory of a private directory: it must be a real directory
 * (not a symbolic link) this user owns that nobody else can write to.
 *
 * @param parent The private directory (from {@linkcode ensurePrivateDir}).
 * @param name The subdirectory's name.
 * @param uid The user that must own it. @default the current effective uid
 * @returns Its path.
 * @throws {MuxError} `invalid_config` naming the path and what is wrong.
 */
export function ensurePrivateSubdir(
  parent: string,
  name: string,
  uid: number | undefined = currentUid(),
): string {
  const path = join(parent, name);
  try {
    mkdirSync(path, { mode: 0o700 });
  } catch (err) {
    if ((err as { code?: string }).code !== "EEXIST") {
      throw new MuxError(
        "invalid_config",
        `Cannot create "${path}": ${(err as Error).message}`,
        { cause: err, hint: "Check the state directory's permissions" },
      );
    }
  }
  const problem = ownDirProblem(lstatSync(path), uid);
  if (problem) {
    throw unsafeDir(path, problem, `Remove "${path}"; muxbridge recreates it 0700`);
  }
  return path;
}

/** What {@linkcode readPrivateFile} found. */
export type PrivateRead =
  | { ok: true; text: string }
  | { ok: false; gone: true }
  | { ok: false; gone: false; reason: string };

/**
 * Reads a small file this user owns, without following a symbolic link and without blocking on
 * a FIFO: the entry must be a regular file owned by `uid`, at most `maxBytes` long.
 *
 * @param path The file.
 * @param maxBytes The most bytes read; a longer file is refused.
 * @param uid The user that must own it. @default the current effective uid
 * @returns The text, or why it was refused (`gone`: it does not exist).
 */
export function readPrivateFile(
  path: string,
  maxBytes: number,
  uid: number | undefined = currentUid(),
): PrivateRead {
  let fd: number;
  try {
    fd = openSync(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === "ENOENT") return { ok: false, gone: true };
    if (code === "ELOOP" || code === "EMLINK") {
      return { ok: false, gone: false, reason: "it is a symbolic link (not followed)" };
    }
    return { ok: false, gone: false, reason: (err as Error).message };
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) return { ok: false, gone: false, reason: "it is not a regular file" };
    if (uid !== undefined && st.uid !== uid) {
      return { ok: false, gone: false, reason: `it is owned by uid ${st.uid}, not by you` };
    }
    if (st.size > maxBytes) {
      return { ok: false, gone: false, reason: `it is larger than ${maxBytes} bytes` };
    }
    const buf = new Uint8Array(maxBytes + 1);
    let n = 0;
    for (let got; n <= maxBytes && (got = readSync(fd, buf, n, buf.length - n, null)) > 0;) {
      n += got;
    }
    if (n > maxBytes) return { ok: false, gone: false, reason: `it grew past ${maxBytes} bytes` };
    return { ok: true, text: new TextDecoder().decode(buf.subarray(0, n)) };
  } finally {
    closeSync(fd);
  }
}

/** Options of {@linkcode writePrivateFile}. */
export interface WritePrivateFileOptions {
  /**
   * fsync the new file before the rename, so it survives an OS crash or power loss. Without it
   * the file still outlives the writer's process (the kernel keeps what was written) and the
   * rename still replaces the old file whole: a reader sees the old or the new text, never a
   * mix. The O_EXCL, O_NOFOLLOW and mode guarantees do not depend on it.
   * @default true
   */
  sync?: boolean;
}

/**
 * Replaces a file privately: the text goes to a new file with a random name in the same
 * directory (`O_CREAT|O_EXCL|O_NOFOLLOW`, mode 0600, so nothing planted can be written through),
 * is synced (unless `options.sync` is false), then renamed over `path` (a symbolic link at
 * `path` is replaced, never followed).
 *
 * @param path The file to replace.
 * @param text Its new content.
 * @param options Whether to sync.
 * @throws Error from the file system when it cannot be written (the temporary file is removed).
 */
export function writePrivateFile(
  path: string,
  text: string,
  options: WritePrivateFileOptions = {},
): void {
  const tmp = join(dirname(path), `.${randomBytes(12).toString("hex")}.tmp`);
  const fd = openSync(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o600);
  try {
    try {
      writeSync(fd, text);
      if (options.sync ?? true) fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, path);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
}

/**
 * Opens a log file for appending, once: `O_APPEND|O_CREAT|O_NOFOLLOW`, created 0600. An existing
 * file must be a regular file this user owns; one that others can read or write is narrowed to
 * 0600 (logs hold titles, paths and the server URL). The mode is never widened.
 *
 * @param path The log file.
 * @param uid The user that must own it. @default the current effective uid
 * @returns The open descriptor.
 * @throws {MuxError} `invalid_config` when it is a symbolic link, not a regular file, owned by
 *   another user, or cannot be opened.
 *
 * @example
 * ```ts
 * import { closeSync, writeSync } from "node:fs";
 * import { openPrivateLog } from "./private_fs.ts";
 * const fd = openPrivateLog(Deno.makeTempDirSync() + "/muxbridge.log");
 * writeSync(fd, "hello\n");
 * closeSync(fd);
 * ```
 */
export function openPrivateLog(path: string, uid: number | undefined = currentUid()): number {
  let fd: number;
  try {
    fd = openSync(path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK, 0o600);
  } catch (err) {
    const code = (err as { code?: string }).code;
    const why = code === "ELOOP" || code === "EMLINK"
      ? "it is a symbolic link (not followed)"
      : (err as Error).message;
    throw new MuxError("invalid_config", `Cannot open log file "${path}": ${why}`, {
      cause: err,
      hint: "Point --log-file (log_file) at a regular file of yours",
    });
  }
  const refuse = (why: string) => {
    closeSync(fd);
    return new MuxError("invalid_config", `Cannot open log file "${path}": ${why}`, {
      hint: "Point --log-file (log_file) at a regular file of yours",
    });
  };
  const st = fstatSync(fd);
  if (!st.isFile()) throw refuse("it is not a regular file");
  if (uid !== undefined && st.uid !== uid) {
    throw refuse(`it is owned by uid ${st.uid}, not by you (uid ${uid})`);
  }
  if (uid !== undefined && (st.mode & 0o077)) fchmodSync(fd, st.mode & 0o700);
  return fd;
}
