/**
 * The seam for long-lived programs muxbridge talks to line by line over a pipe (a pane provider
 * speaking JSON-RPC on its stdin and stdout): argv only (never a shell), stdin and stdout piped,
 * stdout read as lines with a hard length limit (an oversized line is dropped as it streams and
 * reported, never buffered whole), stderr read as lines too, its last 4 KiB kept for the exit
 * report. One-shot programs go through `lib/sys/exec.ts` instead.
 *
 * The program runs in a process group of its own (`detached`): a Ctrl+C typed at the terminal
 * that reaches muxbridge does not also end the program before muxbridge has closed its panes
 * through it, and {@linkcode LineProcess.stop} ends the whole group, so nothing the program
 * started is left running. When muxbridge dies, the program sees end of input on its stdin.
 *
 * The seam arms no timers of its own: {@linkcode LineProcess.stop} waits on the caller's clock,
 * and every other wait (an answer to a request) is the caller's to bound.
 *
 * `node:child_process` (argv, `shell: false`) runs under Deno and Bun alike.
 *
 * @module
 */

import { spawn as nodeSpawn } from "node:child_process";
import process from "node:process";
import { type Clock, waitFor } from "./clock.ts";
import { type LineItem, readLines } from "./line_reader.ts";

/** How a line process ended. */
export interface LineProcessExit {
  /** The exit code, or null when a signal ended it or it never started. */
  code: number | null;
  /** The signal that ended it, if any. */
  signal: string | null;
  /** The last of what it wrote to stderr (at most 4 KiB). */
  stderr: string;
  /** Why it could not start (`ENOENT`, `EACCES`…), when it never ran. */
  startError?: string;
}

/** Options of one line process. */
export interface LineProcessOptions {
  /** Variables added to (or replacing in) the inherited environment. */
  env?: Readonly<Record<string, string>>;
  /** The longest stdout line accepted, in bytes (without its newline). */
  maxLineBytes: number;
  /** Called with every stdout line (or the report of one that could not be used), in order. */
  onItem(item: LineItem): void;
  /** Called with every stderr line (cut to 4 KiB), in order. */
  onStderr?(line: string): void;
  /** Called once, when the program has exited and its output is read, or could not start. */
  onExit(exit: LineProcessExit): void;
}

/** A running long-lived program. */
export interface LineProcess {
  /** Its process id (undefined when it could not start). */
  readonly pid: number | undefined;
  /** Settles once with how it ended (see {@linkcode LineProcessOptions.onExit}). */
  readonly exited: Promise<LineProcessExit>;
  /**
   * Writes text to its stdin.
   *
   * @returns False when it has ended or its stdin is closed (nothing was written).
   */
  write(text: string): boolean;
  /** Closes its stdin (the polite request to end). */
  end(): void;
  /** Sends a signal to its whole process group; ignored once it has exited. */
  kill(signal?: "SIGTERM" | "SIGKILL"): void;
  /**
   * Ends it for good: closes its stdin and waits up to `graceMs` for it to exit, then SIGTERM to
   * its process group and up to `graceMs` more, then SIGKILL to the group.
   *
   * @returns How it ended, or null when it outlived SIGKILL by another `graceMs` (never seen
   *   on Linux; the caller logs it).
   */
  stop(clock: Clock, graceMs: number): Promise<LineProcessExit | null>;
}

/** Starts a line process: runs `argv[0]` with `argv.slice(1)`. */
export type LineProcessOpener = (
  argv: readonly string[],
  options: LineProcessOptions,
) => LineProcess;

const MAX_STDERR = 4096;

/**
 * Creates the real opener.
 *
 * @returns An opener over `node:child_process`.
 *
 * @example Start a program and read its lines
 * ```ts
 * import { createLineProcessOpener } from "./line_process.ts";
 * const open = createLineProcessOpener();
 * const child = open(["cat"], {
 *   maxLineBytes: 1024,
 *   onItem: (item) => console.log(item),
 *   onExit: (exit) => console.log("ended", exit.code),
 * });
 * child.write("hello\n");
 * child.end();
 * await child.exited;
 * ```
 */
export function createLineProcessOpener(): LineProcessOpener {
  return openLineProcess;
}

function openLineProcess(argv: readonly string[], options: LineProcessOptions): LineProcess {
  if (argv.length === 0 || argv[0] === "") throw new TypeError("Cannot start an empty argv");
  if (!(options.maxLineBytes > 0)) {
    throw new RangeError(`Cannot start "${argv[0]}": maxLineBytes must be positive`);
  }
  const child = nodeSpawn(argv[0], argv.slice(1), {
    env: options.env ? { ...process.env, ...options.env } : process.env,
    stdio: ["pipe", "pipe", "pipe"],
    shell: false,
    detached: true,
  });
  let stderrTail = "";
  let exit: LineProcessExit | undefined;
  let resolveExited!: (exit: LineProcessExit) => void;
  const exited = new Promise<LineProcessExit>((resolve) => resolveExited = resolve);
  const finish = (e: LineProcessExit) => {
    if (exit) return;
    exit = e;
    options.onExit(e);
    resolveExited(e);
  };

  const stdoutDone = child.stdout
    ? (async () => {
      for await (
        const item of readLines(child.stdout as AsyncIterable<Uint8Array>, options.maxLineBytes)
      ) {
        options.onItem(item);
      }
    })().catch(() => {/* the pipe broke: the exit report says why */})
    : Promise.resolve();
  const stderrDone = child.stderr
    ? (async () => {
      for await (const item of readLines(child.stderr as AsyncIterable<Uint8Array>, MAX_STDERR)) {
        const line = item.kind === "line" ? item.line : `<${item.kind} line>`;
        stderrTail = `${stderrTail}${line}\n`.slice(-MAX_STDERR);
        options.onStderr?.(line);
      }
    })().catch(() => {})
    : Promise.resolve();
  // A write after the program ended fails asynchronously (EPIPE); the exit report covers it.
  child.stdin?.on("error", () => {});
  child.on("error", (err: Error & { code?: string }) => {
    // Never started (ENOENT, EACCES): no output will come.
    if (child.pid === undefined) {
      finish({ code: null, signal: null, stderr: "", startError: err.code ?? err.message });
    }
  });
  child.on("close", (code: number | null, signal: string | null) => {
    // "close" comes after the pipes closed; the line readers may still hold the last lines.
    Promise.all([stdoutDone, stderrDone]).then(() => finish({ code, signal, stderr: stderrTail }));
  });

  const signalGroup = (sig: "SIGTERM" | "SIGKILL") => {
    if (exit || child.pid === undefined) return;
    try {
      process.kill(-child.pid, sig);
    } catch {
      try {
        child.kill(sig);
      } catch { /* already gone */ }
    }
  };

  const ended = (clock: Clock, ms: number) =>
    waitFor(clock, () => exit !== undefined, {
      deadline: clock.now() + ms,
      initialIntervalMs: 5,
      maxIntervalMs: 50,
    });

  return {
    get pid() {
      return child.pid;
    },
    exited,
    write(text) {
      if (exit || !child.stdin || child.stdin.destroyed || child.stdin.writableEnded) return false;
      child.stdin.write(text);
      return true;
    },
    end() {
      if (child.stdin && !child.stdin.writableEnded) child.stdin.end();
    },
    kill(signal = "SIGTERM") {
      signalGroup(signal);
    },
    async stop(clock, graceMs) {
      if (child.stdin && !child.stdin.writableEnded) child.stdin.end();
      if (await ended(clock, graceMs)) return exit!;
      signalGroup("SIGTERM");
      if (await ended(clock, graceMs)) return exit!;
      signalGroup("SIGKILL");
      return (await ended(clock, graceMs)) ? exit! : null;
    },
  };
}
