/**
 * Private to the provider backend: the restart backoff of the provider client. A stopped or
 * crashed provider is started again by the next call, after a delay that doubles with each
 * failure in a row (capped) and resets once a call succeeds.
 *
 * @module
 */

import type { Clock } from "../../lib/sys/clock.ts";
import { MuxError } from "../../lib/sys/errors.ts";
import type { Logger } from "../../lib/sys/log.ts";

/** Options of {@linkcode createRestartBackoff}. */
export interface RestartBackoffOptions {
  /** The clock the delay runs on. */
  clock: Clock;
  /** Logs each failure. */
  log: Logger;
  /** The provider, as logs name it (`argv[0]`). */
  name: string;
  /** The first restart delay after a failure; it doubles per failure in a row. */
  backoffMs: number;
  /** The longest restart delay. */
  maxBackoffMs: number;
}

/** The failures in a row of one provider client and when it may start the provider again. */
export interface RestartBackoff {
  /** Counts a failure, moves the next start out, and logs why. */
  fail(why: string): void;
  /** Forgets the failures: a call succeeded. */
  reset(): void;
  /**
   * How long a start must wait before it may run (0: at once).
   *
   * @param deadline When the call that starts the provider must be done.
   * @returns The delay in ms.
   * @throws {MuxError} `backend_unreachable` when the delay would pass the deadline.
   */
  delay(deadline: number): number;
}

/**
 * Creates the backoff of one client, with no failure yet.
 *
 * @param options Clock, log, bounds.
 * @returns The backoff.
 */
export function createRestartBackoff(options: RestartBackoffOptions): RestartBackoff {
  const { clock, log, name, backoffMs, maxBackoffMs } = options;
  let failures = 0;
  let retryAt = 0;
  return {
    fail(why) {
      failures++;
      retryAt = clock.now() + Math.min(backoffMs * 2 ** (failures - 1), maxBackoffMs);
      log.warn(`provider ${name}: ${why}`);
    },
    reset() {
      failures = 0;
      retryAt = 0;
    },
    delay(deadline) {
      const wait = retryAt - clock.now();
      if (wait > 0 && clock.now() + wait >= deadline) {
        throw new MuxError(
          "backend_unreachable",
          `Cannot reach the provider: it failed ${failures} time(s) in a row and restarts in ${wait} ms`,
          { hint: "Check `muxbridge doctor` and the provider's stderr (debug log)" },
        );
      }
      return Math.max(0, wait);
    },
  };
}
