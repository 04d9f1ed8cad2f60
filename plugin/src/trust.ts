/**
 * Whether a file may be run (or read as instructions) by this user: OpenSSH's `StrictModes`
 * rule. The file and every folder above it must be owned by this user or root and writable by
 * nobody else (neither group nor others), both along the path as written (a link counts by its
 * owner) and along the path its links resolve to. One exception, which OpenSSH does not make:
 * a folder with the sticky bit (like `/tmp`) may be writable by others, because nobody else can
 * rename or remove what this user owns in it.
 *
 * Without it, another local user who can create the recorded binary's path (after its folder
 * was removed, or in a folder others can write to) would have the plugin run their program as
 * this user, with OpenCode's environment and secrets.
 *
 * @module
 */

import { lstatSync, realpathSync, type Stats } from "node:fs";
import { dirname, isAbsolute, resolve } from "node:path";
import process from "node:process";

/** Why one path entry is not trusted, or null. */
function entryProblem(path: string, st: Stats, uid: number): string | null {
  if (st.uid !== uid && st.uid !== 0) {
    return `${path} is owned by uid ${st.uid}, not by you or root`;
  }
  if (st.isSymbolicLink()) return null; // a link's own mode means nothing; its owner does
  const writable = st.mode & 0o022;
  if (writable === 0) return null;
  if (st.isDirectory() && (st.mode & 0o1000) !== 0) return null; // sticky, like /tmp
  const who = writable === 0o022
    ? "its group and others"
    : writable & 0o020
    ? "its group"
    : "others";
  return `${path} is writable by ${who} (chmod go-w ${JSON.stringify(path)})`;
}

/**
 * Checks `path` and each folder above it. A missing last entry is no problem by itself (running
 * it then fails with ENOENT), but every folder above it still has to pass.
 */
function chainProblem(path: string, uid: number): string | null {
  let p = path;
  let first = true;
  for (;;) {
    let st: Stats | null = null;
    try {
      st = lstatSync(p);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (!first || (code !== "ENOENT" && code !== "ENOTDIR")) {
        return `${p} cannot be checked (${code ?? err})`;
      }
    }
    if (st) {
      const problem = entryProblem(p, st, uid);
      if (problem) return problem;
    }
    const up = dirname(p);
    if (up === p) return null;
    p = up;
    first = false;
  }
}

/**
 * Why this user must not run (or read instructions from) `path`, or null when it may.
 *
 * @param path An absolute path.
 * @param uid The user (default: this process's effective uid; no check where there is none).
 * @returns The reason, naming the offending path, or null.
 *
 * @example
 * ```ts
 * import { trustProblem } from "./trust.ts";
 * trustProblem("/bin/sh"); // null: root's, and writable by nobody else
 * trustProblem("relative/path"); // "relative/path is not an absolute path"
 * ```
 */
export function trustProblem(path: string, uid?: number): string | null {
  const me = uid ?? (typeof process.geteuid === "function" ? process.geteuid() : undefined);
  if (!isAbsolute(path)) return `${path} is not an absolute path`;
  if (me === undefined) return null; // no owners to compare (Windows)
  const written = resolve(path);
  const problem = chainProblem(written, me);
  if (problem) return problem;
  let real: string;
  try {
    real = realpathSync(written);
  } catch {
    return null; // missing: nothing to run; the folders above it passed
  }
  return real === written ? null : chainProblem(real, me);
}

/**
 * Why this user must not run a recorded command, or null: its program and every absolute path
 * among its arguments that exists (the script and config a runtime would load) must pass
 * {@linkcode trustProblem}, and the program must be named by an absolute path.
 *
 * @param command The argv prefix.
 * @param uid The user (default: this process's effective uid).
 * @returns The reason, or null.
 */
export function commandTrustProblem(command: readonly string[], uid?: number): string | null {
  const [program, ...args] = command;
  if (program === undefined) return "the command is empty";
  const first = trustProblem(program, uid);
  if (first) return first;
  for (const arg of args) {
    if (!isAbsolute(arg)) continue;
    try {
      lstatSync(arg);
    } catch {
      continue; // not a file: an argument, not code
    }
    const problem = trustProblem(arg, uid);
    if (problem) return problem;
  }
  return null;
}
