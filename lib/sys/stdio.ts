/**
 * The real bridge I/O over the process's stdin, stdout and signals (`node:` APIs, so the same
 * code runs under Deno and under Bun).
 *
 * @module
 */

import process from "node:process";
import type { BridgeIO } from "../bridge/bridge.ts";

/** The signals that end the bridge in an orderly way. */
const STOP_SIGNALS = ["SIGTERM", "SIGINT", "SIGHUP"] as const;

/**
 * Creates the bridge's I/O over the real process.
 *
 * @returns The I/O.
 */
export function processBridgeIO(): BridgeIO {
  // When the reader of stdout is gone (OpenCode exited or was killed), writes fail with EPIPE,
  // thrown or emitted; unhandled, that crashed the bridge in the middle of its shutdown and left
  // panes open (seen in tests/e2e_plugin_test.ts). Nobody can read the lines any more: drop them
  // and let the shutdown close the panes.
  let broken = false;
  process.stdout.on("error", () => (broken = true));
  return {
    input: process.stdin as unknown as AsyncIterable<Uint8Array>,
    write(line) {
      if (broken) return;
      try {
        process.stdout.write(line);
      } catch {
        broken = true;
      }
    },
    flush() {
      if (broken) return Promise.resolve();
      return new Promise((resolve) => {
        try {
          process.stdout.write("", () => resolve());
        } catch {
          broken = true;
          resolve();
        }
      });
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
