/**
 * The process's stdout and stderr as outputs whose writes can be awaited, so that nothing written
 * is lost when the process exits.
 *
 * `process.exit()` ends the process at once, and whatever the runtime still holds for a pipe
 * whose reader is slower than the writer is dropped. Waiting on an empty write
 * (`write("", cb)`) is not enough: under Bun (1.4.5) its callback runs at once, ahead of the data
 * still queued, so a bridge whose reader lagged lost its last lines, `bye` among them (seen:
 * 2,550 of 20,002 lines arrived, the last one cut). A non-empty write's callback runs once its
 * data reached the pipe, under Deno, Node and Bun alike; {@linkcode TrackedOutput.flush} waits
 * for the callbacks of every write made so far.
 *
 * @module
 */

import process from "node:process";

/** The part of a `node:` writable stream a {@linkcode TrackedOutput} uses. */
export interface OutputStream {
  /** Writes text; `done` runs once it is written (or failed). */
  write(text: string, done: (err?: Error | null) => void): unknown;
  /** Subscribes to the stream's error event (EPIPE when the reader is gone). */
  on(event: "error", listener: (err: Error) => void): unknown;
}

/** An output whose writes can be awaited. */
export interface TrackedOutput {
  /** Writes text (nothing once the stream broke: nobody can read it). */
  write(text: string): void;
  /** Resolves once every write so far is written, or the stream broke. */
  flush(): Promise<void>;
  /** Whether the stream failed (its reader went away). */
  readonly broken: boolean;
}

/**
 * Wraps a stream so that its writes can be awaited.
 *
 * @param stream The stream (`process.stdout`, `process.stderr`).
 * @returns The tracked output.
 *
 * @example
 * ```ts
 * import process from "node:process";
 * import { trackOutput } from "./output.ts";
 * const out = trackOutput(process.stdout);
 * out.write("done\n");
 * await out.flush();
 * ```
 */
export function trackOutput(stream: OutputStream): TrackedOutput {
  let pending = 0;
  let broken = false;
  const waiters: Array<() => void> = [];
  const release = () => {
    for (const resolve of waiters.splice(0)) resolve();
  };
  const written = (err?: Error | null) => {
    if (err) broken = true;
    pending = Math.max(0, pending - 1);
    if (pending === 0 || broken) release();
  };
  // When the reader is gone, writes fail with EPIPE, thrown or emitted; unhandled, that crashed
  // the bridge in the middle of its shutdown and left panes open (seen in
  // tests/e2e_plugin_test.ts). Nobody can read the lines any more: drop them.
  stream.on("error", () => {
    broken = true;
    release();
  });
  return {
    write(text) {
      if (broken || text === "") return;
      pending++;
      try {
        stream.write(text, written);
      } catch {
        broken = true;
        written();
      }
    },
    flush() {
      if (broken || pending === 0) return Promise.resolve();
      return new Promise((resolve) => waiters.push(resolve));
    },
    get broken() {
      return broken;
    },
  };
}

let stdout: TrackedOutput | undefined;
let stderr: TrackedOutput | undefined;

/**
 * The process's stdout, tracked (one for the whole process: every writer shares it, so one
 * {@linkcode flushOutput} covers them all).
 *
 * @returns The tracked stdout.
 */
export function processStdout(): TrackedOutput {
  return stdout ??= trackOutput(process.stdout);
}

/**
 * The process's stderr, tracked (see {@linkcode processStdout}).
 *
 * @returns The tracked stderr.
 */
export function processStderr(): TrackedOutput {
  return stderr ??= trackOutput(process.stderr);
}

/**
 * Waits until everything written to stdout and stderr through this module is written: call it
 * right before `process.exit()`.
 *
 * @returns Resolves when both are flushed (or broken).
 */
export async function flushOutput(): Promise<void> {
  await Promise.all([stdout?.flush(), stderr?.flush()]);
}
