/**
 * The plugin's log file: private, rotated when big, written asynchronously and in order. Its
 * own lines and the bridge's stderr go there; nothing ever goes to OpenCode's terminal.
 *
 * @module
 */

import {
  closeSync,
  constants,
  fchmodSync,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  renameSync,
  write,
} from "node:fs";
import { dirname } from "node:path";
import process from "node:process";
import type { Log } from "./values.ts";

/** A log file above this size is moved to `<log>.1` when a plugin starts. */
const MAX_LOG_BYTES = 8 * 1024 * 1024;
/** The most log text waiting for the disk; more is dropped (and counted). */
const MAX_LOG_PENDING = 1024 * 1024;

/**
 * Opens the log for appending (rotating a big one), privately: it holds titles, paths and the
 * server URL. Opened once with `O_APPEND|O_CREAT|O_NOFOLLOW`, created 0600; a symbolic link, a
 * non-regular file or another user's file is refused; a mode letting others in is narrowed to
 * 0600, never widened. Null when it cannot be used (the plugin still works, silently).
 */
export function openLog(path: string): number | null {
  try {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    try {
      // lstat: a symbolic link is renamed as a link, never followed.
      if (lstatSync(path).size > MAX_LOG_BYTES) renameSync(path, `${path}.1`);
    } catch { /* no log yet */ }
    const flags = constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT |
      (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);
    const fd = openSync(path, flags, 0o600);
    const st = fstatSync(fd);
    const uid = typeof process.geteuid === "function" ? process.geteuid() : undefined;
    if (!st.isFile() || (uid !== undefined && st.uid !== uid)) {
      closeSync(fd);
      return null;
    }
    if (uid !== undefined && (st.mode & 0o077)) fchmodSync(fd, st.mode & 0o700);
    return fd;
  } catch {
    return null; // nowhere to log; the plugin still works
  }
}

/**
 * The plugin's log over `fd`: asynchronous (a slow disk never blocks OpenCode) and serialised
 * (lines land in the order they were logged, one write in flight at a time; parallel
 * `fs.write` calls landed out of order under Bun).
 */
export class LogWriter {
  /** The log file (the bridge's stderr goes there too); null: nothing is logged. */
  readonly fd: number | null;
  #pending: string[] = [];
  #pendingBytes = 0;
  #dropped = 0;
  #busy = false;
  #idle: Array<() => void> = [];

  constructor(fd: number | null) {
    this.fd = fd;
  }

  /** Queues one line (a timestamp and the plugin's pid are added). */
  readonly line: Log = (message) => {
    if (this.fd === null) return;
    if (this.#pendingBytes > MAX_LOG_PENDING) {
      this.#dropped++;
      return;
    }
    const lost = this.#dropped ? ` (${this.#dropped} earlier log lines were dropped)` : "";
    this.#dropped = 0;
    const line = `${new Date().toISOString()} muxbridge-plugin[${process.pid}] ${message}${lost}\n`;
    this.#pending.push(line);
    this.#pendingBytes += line.length;
    if (!this.#busy) this.#next();
  };

  /** Resolves once every queued line is written. */
  flush(): Promise<void> {
    return new Promise<void>((resolve) => {
      if (!this.#busy && this.#pending.length === 0) return resolve();
      this.#idle.push(resolve);
    });
  }

  /** Flushes, then closes the file. */
  async close(): Promise<void> {
    await this.flush();
    if (this.fd === null) return;
    try {
      closeSync(this.fd);
    } catch { /* already closed */ }
  }

  #next(): void {
    const chunk = this.#pending.join("");
    this.#pending = [];
    this.#pendingBytes = 0;
    if (chunk === "" || this.fd === null) {
      this.#busy = false;
      for (const resolve of this.#idle.splice(0)) resolve();
      return;
    }
    this.#busy = true;
    // A failed log write is not worth a throw; the next chunk tries again.
    write(this.fd, chunk, () => this.#next());
  }
}
