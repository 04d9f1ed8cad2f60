/**
 * The real bridge I/O over the process's stdin, stdout and signals (`node:` APIs, so the same
 * code runs under Deno and under Bun).
 *
 * @module
 */

import process from "node:process";
import { processStdout } from "./output.ts";

/** The bridge's input, output and signals. */
export interface BridgeIO {
  /** stdin as byte chunks. */
  input: AsyncIterable<Uint8Array>;
  /** Writes one complete line (with its newline) to stdout. */
  write(line: string): void;
  /** Resolves once everything written has been flushed. */
  flush(): Promise<void>;
  /** Calls `handler` on SIGTERM, SIGINT or SIGHUP; returns an unsubscribe function. */
  onSignal(handler: (signal: string) => void): () => void;
}

/** The signals that end the bridge in an orderly way. */
const STOP_SIGNALS = ["SIGTERM", "SIGINT", "SIGHUP"] as const;

/**
 * Creates the bridge's I/O over the real process.
 *
 * @returns The I/O.
 */
export function processBridgeIO(): BridgeIO {
  // Tracked, so that `flush` waits for every line written (see lib/sys/output.ts); once the
  // reader is gone (EPIPE) lines are dropped and the shutdown still closes the panes.
  const stdout = processStdout();
  return {
    input: process.stdin as unknown as AsyncIterable<Uint8Array>,
    write: (line) => stdout.write(line),
    flush: () => stdout.flush(),
    onSignal(handler) {
      const listeners = STOP_SIGNALS.map((sig) => {
        const listener = () => handler(sig);
        process.on(sig, listener);
        return [sig, listener] as const;
      });
      return () => listeners.forEach(([sig, l]) => process.off(sig, l));
    },
  };
}
