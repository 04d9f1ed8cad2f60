/**
 * Human-readable logs: one line each, to stderr or a log file, never to stdout (stdout belongs to
 * the bridge protocol and to `--json` output).
 *
 * @module
 */

import { writeSync } from "node:fs";
import { processStderr } from "./output.ts";
import { openPrivateLog } from "./private_fs.ts";

/** A log level, least severe first. */
export type LogLevel = "debug" | "info" | "warn" | "error";

const RANK: Record<LogLevel, number> = { debug: 0, info: 1, warn: 2, error: 3 };

/** Writes log lines. */
export interface Logger {
  /** Detail for debugging. */
  debug(message: string): void;
  /** Something happened that a user may want to know. */
  info(message: string): void;
  /** Something is wrong but muxbridge goes on. */
  warn(message: string): void;
  /** Something failed. */
  error(message: string): void;
}

/** A sink for finished log lines. */
export type LogSink = (line: string) => void;

/**
 * Creates a logger.
 *
 * @param level The least severe level written.
 * @param sink Where lines go. @default stderr
 * @param now Clock for timestamps. @default Date.now
 * @returns The logger.
 *
 * @example
 * ```ts
 * import { createLogger } from "./log.ts";
 * const lines: string[] = [];
 * createLogger("info", (l) => lines.push(l)).debug("not written");
 * ```
 */
export function createLogger(
  level: LogLevel,
  sink: LogSink = stderrSink,
  now: () => number = Date.now,
): Logger {
  const write = (at: LogLevel, message: string) => {
    if (RANK[at] < RANK[level]) return;
    sink(`${new Date(now()).toISOString()} muxbridge ${at}: ${message}\n`);
  };
  return {
    debug: (m) => write("debug", m),
    info: (m) => write("info", m),
    warn: (m) => write("warn", m),
    error: (m) => write("error", m),
  };
}

/** Writes to the process's stderr (tracked: `flushOutput` waits for it before exit). */
export const stderrSink: LogSink = (line) => {
  processStderr().write(line);
};

/**
 * A sink that appends to a file (synchronously, so a crash loses nothing already logged). The
 * file is opened once, `O_APPEND|O_CREAT|O_NOFOLLOW`, created 0600, and refused unless it is a
 * regular file of this user; a mode that lets others in is narrowed to 0600, never widened
 * (logs hold titles, paths and the server URL).
 *
 * @param path The log file.
 * @returns The sink. When the file cannot be used, one line on stderr says why and the sink
 *   writes to stderr; a failed write also falls back to stderr.
 */
export function fileSink(path: string): LogSink {
  let fd: number;
  try {
    fd = openPrivateLog(path);
  } catch (err) {
    processStderr().write(`muxbridge: ${(err as Error).message}; logging to stderr instead\n`);
    return stderrSink;
  }
  return (line) => {
    try {
      writeSync(fd, line);
    } catch {
      processStderr().write(line);
    }
  };
}

/** A logger that drops everything (tests). */
export const silentLogger: Logger = {
  debug: () => {},
  info: () => {},
  warn: () => {},
  error: () => {},
};
