/**
 * The real bridge I/O over the process's stdin, stdout and signals (`node:` APIs, so the same
 * code runs under Deno and under Bun).
 *
 * @module
 */

import process from "node:process";
import type { BridgeIO } from "./bridge.ts";

/** The signals that end the bridge in an orderly way. */
export const STOP_SIGNALS = ["SIGTERM", "SIGINT", "SIGHUP"] as const;

/**
 * Creates the bridge's I/O over the real process.
 *
 * @returns The I/O.
 */
export function processBridgeIO(): BridgeIO {
  return {
    input: process.stdin as unknown as AsyncIterable<Uint8Array>,
    write(line) {
      process.stdout.write(line);
    },
    flush() {
      return new Promise((resolve) => process.stdout.write("", () => resolve()));
    },
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
