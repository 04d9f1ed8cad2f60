/**
 * A queue that runs async jobs one at a time, in the order they were queued: spawns and layout
 * passes go through one, so a burst of opens never races the multiplexer, and a layout runs after
 * the spawns queued before it.
 *
 * @module
 */

/**
 * Runs jobs one at a time. A job that throws is reported to `onError` and the queue goes on.
 *
 * @example
 * ```ts
 * import { SerialQueue } from "./serial_queue.ts";
 * const order: number[] = [];
 * const queue = new SerialQueue((err) => console.error(err));
 * void queue.run(async () => void order.push(1));
 * await queue.run(async () => void order.push(2));
 * order; // [1, 2]
 * ```
 */
export class SerialQueue {
  readonly #onError: (err: unknown) => void;
  #tail: Promise<void> = Promise.resolve();

  /**
   * Creates an empty queue.
   *
   * @param onError Told of each job that throws (the queue goes on).
   */
  constructor(onError: (err: unknown) => void) {
    this.#onError = onError;
  }

  /**
   * Queues a job after every job queued before it.
   *
   * @param job The job.
   * @returns Resolves once the job has run (never rejects).
   */
  run(job: () => Promise<void>): Promise<void> {
    this.#tail = this.#tail.then(job).catch((err) => this.#onError(err));
    return this.#tail;
  }

  /**
   * Waits for every job queued so far.
   *
   * @returns Resolves when they have run.
   */
  idle(): Promise<void> {
    return this.#tail;
  }
}
