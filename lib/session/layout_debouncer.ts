/**
 * Coalesces layout requests: one pass is pending at a time, it starts a short while after the
 * first request, and it runs in the spawn queue after the spawns already queued, so a burst of
 * opens costs one layout pass.
 *
 * @module
 */

import type { Clock, TimerId } from "../sys/clock.ts";
import type { SerialQueue } from "./serial_queue.ts";

/** How long requests gather before the pass is queued. */
export const LAYOUT_DEBOUNCE_MS = 30;

/** What a {@linkcode LayoutDebouncer} works with. */
export interface LayoutDebouncerDeps {
  /** The clock. */
  clock: Clock;
  /** The queue the pass runs in (behind the spawns). */
  queue: SerialQueue;
  /** One layout pass. */
  pass(): Promise<void>;
  /** How long requests gather. @default LAYOUT_DEBOUNCE_MS */
  delayMs?: number;
}

/**
 * One layout pass for any number of requests made close together.
 *
 * @example
 * ```ts
 * import { createRealClock } from "../sys/clock.ts";
 * import { LayoutDebouncer } from "./layout_debouncer.ts";
 * import { SerialQueue } from "./serial_queue.ts";
 * let passes = 0;
 * const layout = new LayoutDebouncer({
 *   clock: createRealClock(),
 *   queue: new SerialQueue(() => {}),
 *   pass: async () => void passes++,
 * });
 * layout.request();
 * layout.request(); // joins the pending pass
 * ```
 */
export class LayoutDebouncer {
  readonly #deps: LayoutDebouncerDeps;
  #timer: TimerId | null = null;
  #pending = false;
  #stopped = false;

  /**
   * Creates a debouncer with no pass pending.
   *
   * @param deps Clock, queue and the pass.
   */
  constructor(deps: LayoutDebouncerDeps) {
    this.#deps = deps;
  }

  /** Asks for a layout pass; joins the pending one if there is one. */
  request(): void {
    if (this.#pending || this.#stopped) return;
    this.#pending = true;
    this.#timer = this.#deps.clock.setTimeout(() => {
      this.#timer = null;
      void this.#deps.queue.run(() => {
        this.#pending = false;
        return this.#stopped ? Promise.resolve() : this.#deps.pass();
      });
    }, this.#deps.delayMs ?? LAYOUT_DEBOUNCE_MS);
  }

  /** Stops for good: no pass starts any more. */
  stop(): void {
    this.#stopped = true;
    if (this.#timer !== null) this.#deps.clock.clearTimeout(this.#timer);
    this.#timer = null;
  }
}
