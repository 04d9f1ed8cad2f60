/**
 * The bounded queue between OpenCode's event callbacks and the bridge's stdin: callbacks never
 * wait, the oldest lines go first when the bridge stops reading, and every drop is counted.
 *
 * @module
 */

import { Buffer } from "node:buffer";
import type { Log } from "./values.ts";

/** The bridge refuses longer lines (contract: at most 1 MiB a line). */
const MAX_LINE_BYTES = 1024 * 1024;

/** Where queued lines go: the bridge's stdin while its pipe takes more. */
export interface Sink {
  /** Whether a bridge runs and its pipe takes more (no pending drain). */
  takes(): boolean;
  /** Writes one line (never blocks; the pipe may then stop taking more). */
  send(line: string): void;
}

/**
 * The bounded queue between the event hook and the bridge: at most `maxBytes` held; when full,
 * the oldest lines go first, counted. Statuses are level-triggered, so the newest line carries
 * the state the bridge needs; the oldest is the most likely to be stale already.
 */
export class LineQueue {
  readonly #lines: string[] = [];
  readonly #maxBytes: number;
  readonly #log: Log;
  #bytes = 0;
  #dropped = 0;
  #reported = 0;

  constructor(maxBytes: number, log: Log) {
    this.#maxBytes = maxBytes;
    this.#log = log;
  }

  /** Counts a line lost before it reached the queue. */
  countDrop(): void {
    this.#dropped++;
  }

  /** Queues a line, dropping the oldest over the bound; false (and counted) when too long. */
  push(line: string): boolean {
    const bytes = Buffer.byteLength(line);
    if (bytes > MAX_LINE_BYTES) {
      this.#dropped++;
      return false;
    }
    this.#lines.push(line);
    this.#bytes += bytes;
    while (this.#bytes > this.#maxBytes && this.#lines.length > 0) {
      if (this.#dropped === this.#reported) {
        this.#log(
          `queue full (${this.#maxBytes} bytes): the bridge is not reading; dropping oldest events`,
        );
      }
      this.#bytes -= Buffer.byteLength(this.#lines.shift()!);
      this.#dropped++;
    }
    return true;
  }

  /** Writes lines while `sink` takes them; once empty, says how many a stall cost. */
  drain(sink: Sink | null): void {
    while (sink?.takes() && this.#lines.length > 0) {
      const line = this.#lines.shift()!;
      this.#bytes -= Buffer.byteLength(line);
      sink.send(line);
    }
    if (this.#lines.length === 0 && this.#dropped > this.#reported) {
      const n = this.#dropped - this.#reported;
      this.#log(`bridge caught up; ${n} events were dropped while it stalled`);
      this.#reported = this.#dropped;
    }
  }

  /** Forgets every queued line (nobody will read them). */
  clear(): void {
    this.#lines.length = 0;
    this.#bytes = 0;
  }

  /** Logs the drops not reported yet. */
  reportTotal(): void {
    if (this.#dropped > this.#reported) {
      this.#log(`${this.#dropped - this.#reported} events were dropped in total`);
    }
  }
}
