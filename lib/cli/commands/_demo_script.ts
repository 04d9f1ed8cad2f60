/**
 * Private to `demo.ts`: drives the real bridge with scripted input lines and collects what it
 * writes, so that the demo can wait for each answer (bounded, and at once on Ctrl+C).
 *
 * @module
 */

import type { BridgeIO } from "../../bridge/bridge.ts";
import type { OutMessage } from "../../bridge/protocol.ts";
import { MuxError } from "../../sys/errors.ts";
import type { CliDeps } from "./_command.ts";

/** The longest the demo waits for one answer of the bridge. */
export const WAIT_MS = 15_000;

/** A scripted bridge input plus a record of its output, for driving the real bridge. */
export class Script {
  /** What the bridge wrote and no wait has taken yet. */
  readonly out: OutMessage[] = [];
  #lines: string[] = [];
  #wake: (() => void) | null = null;
  #ended = false;
  #waiters: Array<() => void> = [];

  /**
   * The bridge's I/O: input from {@linkcode Script.send}, output into {@linkcode Script.out}.
   *
   * @param onSignal How the bridge learns of a signal (the demo maps Ctrl+C to it).
   * @returns The I/O.
   */
  io(onSignal: BridgeIO["onSignal"]): BridgeIO {
    return {
      input: this.#input(),
      write: (line) => {
        this.out.push(JSON.parse(line) as OutMessage);
        for (const w of this.#waiters.splice(0)) w();
      },
      flush: () => Promise.resolve(),
      onSignal,
    };
  }

  async *#input(): AsyncGenerator<Uint8Array> {
    const enc = new TextEncoder();
    while (true) {
      while (this.#lines.length) yield enc.encode(this.#lines.shift()!);
      if (this.#ended) return;
      await new Promise<void>((r) => (this.#wake = r));
    }
  }

  /**
   * Sends one input line.
   *
   * @param message The message, as JSON.
   */
  send(message: unknown): void {
    this.#lines.push(`${JSON.stringify(message)}\n`);
    this.#wake?.();
  }

  /** Ends the input. */
  end(): void {
    this.#ended = true;
    this.#wake?.();
  }

  /**
   * Waits for (and takes) the first output message that matches.
   *
   * @param what What is awaited, for the error.
   * @param pred The match.
   * @param deps The clock and the Ctrl+C signal.
   * @returns The message.
   * @throws {MuxError} `interrupted` on Ctrl+C, `command_failed` when a child got no pane,
   *   `timed_out` after {@linkcode WAIT_MS}.
   */
  async until<T extends OutMessage>(
    what: string,
    pred: (m: OutMessage) => m is T,
    deps: CliDeps,
  ): Promise<T> {
    const deadline = deps.clock.now() + WAIT_MS;
    while (true) {
      const hit = this.out.find(pred);
      if (hit) {
        this.out.splice(this.out.indexOf(hit), 1);
        return hit;
      }
      if (deps.signal.aborted) throw new MuxError("interrupted", "Interrupted");
      // A child that got no pane ends the demo at once, saying why.
      const refusal = this.out.find((m) => m.type === "pane.failed" || m.type === "pane.skipped");
      if (refusal) {
        throw new MuxError(
          "command_failed",
          `Cannot finish the demo: no ${what}: ${JSON.stringify(refusal)}`,
        );
      }
      if (deps.clock.now() > deadline) {
        throw new MuxError("timed_out", `Cannot finish the demo: no ${what} within ${WAIT_MS} ms`);
      }
      await new Promise<void>((resolve) => {
        this.#waiters.push(resolve);
        deps.clock.setTimeout(resolve, 100);
        deps.signal.addEventListener("abort", () => resolve(), { once: true });
      });
    }
  }
}
