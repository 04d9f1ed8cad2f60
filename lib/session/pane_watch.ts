/**
 * The pane watch: while panes are open (or a failed spawn may still make one), every poll
 * interval it checks that each open pane is still there. A pane that is gone, or whose program
 * ended while the pane stays (remain-on-exit), is reported gone; what is left of a dead pane is
 * closed first. A pane whose program reported a failed exit (its start command writes the code
 * to a private file named by the spawn token, `pane_program.ts`) is reported `exited`, held or
 * gone. A pane whose id now shows another spawn token (or none, where the backend reads them)
 * is another program's pane, after a restart of the multiplexer: reported gone, never closed.
 * Each tick also looks again for the panes of failed spawns.
 *
 * @module
 */

import type { Backend } from "../backend/backend.ts";
import type { Clock, TimerId } from "../sys/clock.ts";
import type { Logger } from "../sys/log.ts";
import type { Processes } from "../sys/processes.ts";
import type { PaneId, SessionId } from "../sys/validate.ts";
import { closePane } from "./close_pane.ts";

/** One open pane the watch checks. */
export interface WatchedPane {
  /** Its session. */
  readonly sessionId: SessionId;
  /** The pane. */
  readonly paneId: PaneId;
  /** The backend that opened it. */
  readonly backend: Backend;
  /** Its program's pid, when recorded. */
  readonly pid?: number;
  /** That pid's start stamp. */
  readonly pidStart?: string;
  /** Its spawn token (its program's failed exit is reported under it). */
  readonly token?: string;
}

/** What a {@linkcode PaneWatch} works with. */
export interface PaneWatchDeps {
  /** The clock. */
  clock: Clock;
  /** Logs. */
  log: Logger;
  /** The process seam (a dead pane's program is checked when its remains are closed). */
  processes: Processes;
  /** The pause between ticks (`poll_interval_ms`, read at each tick). */
  intervalMs(): number;
  /** The open panes now. */
  panes(): WatchedPane[];
  /** Whether failed spawns may still make a pane. */
  lost(): boolean;
  /** Looks again for the panes of failed spawns. */
  sweep(): Promise<void>;
  /** Told of a pane that is gone. */
  gone(sessionId: SessionId, paneId: PaneId): void;
  /** The failed exits reported so far, by spawn token. @default none */
  exits?(): Map<string, number>;
  /**
   * Told of a pane whose program failed with `code`; `present`: the pane is still there (its
   * start command holds it), else it went with its program.
   */
  exited?(sessionId: SessionId, paneId: PaneId, code: number, present: boolean): void;
}

/**
 * Watches open panes, one tick at a time, only while there is something to watch.
 *
 * @example
 * ```ts
 * import { createRealClock } from "../sys/clock.ts";
 * import { silentLogger } from "../sys/log.ts";
 * import { createProcesses } from "../sys/processes.ts";
 * import { PaneWatch } from "./pane_watch.ts";
 * const watch = new PaneWatch({
 *   clock: createRealClock(),
 *   log: silentLogger,
 *   processes: createProcesses(),
 *   intervalMs: () => 2000,
 *   panes: () => [],
 *   lost: () => false,
 *   sweep: () => Promise.resolve(),
 *   gone: (sessionId, paneId) => console.log(`${sessionId}: ${paneId} is gone`),
 * });
 * watch.ensure(); // after a pane opened
 * watch.stop(); // at shutdown
 * ```
 */
export class PaneWatch {
  readonly #deps: PaneWatchDeps;
  #timer: TimerId | null = null;
  #ticking = false;
  #stopped = false;
  #warned = false;

  /**
   * Creates a watch that does nothing until {@linkcode PaneWatch.ensure}.
   *
   * @param deps Clock, logger, processes and what to watch.
   */
  constructor(deps: PaneWatchDeps) {
    this.#deps = deps;
  }

  /** Schedules the next tick unless one is scheduled. */
  ensure(): void {
    if (this.#timer !== null || this.#stopped) return;
    this.#timer = this.#deps.clock.setTimeout(() => {
      this.#timer = null;
      void this.#tick();
    }, this.#deps.intervalMs());
  }

  /** Stops for good. */
  stop(): void {
    this.#stopped = true;
    if (this.#timer !== null) this.#deps.clock.clearTimeout(this.#timer);
    this.#timer = null;
  }

  async #tick(): Promise<void> {
    if (this.#ticking || this.#stopped) return;
    this.#ticking = true;
    try {
      const exits = this.#exits();
      const byBackend = new Map<Backend, WatchedPane[]>();
      for (const pane of this.#deps.panes()) {
        const code = pane.token === undefined ? undefined : exits.get(pane.token);
        if (code !== undefined) {
          this.#deps.exited?.(pane.sessionId, pane.paneId, code, true);
          continue;
        }
        byBackend.set(pane.backend, [...(byBackend.get(pane.backend) ?? []), pane]);
      }
      await Promise.all([...byBackend].map(([backend, open]) => this.#checkAll(backend, open)));
      if (this.#deps.lost()) await this.#deps.sweep();
    } finally {
      this.#ticking = false;
    }
    if (this.#deps.panes().length > 0 || this.#deps.lost()) this.ensure();
  }

  async #checkAll(backend: Backend, open: WatchedPane[]): Promise<void> {
    // One listing of the marked panes instead of one call per pane (20 panes were 20 tmux
    // processes per poll); only a pane missing from it or dead is inspected, so a wrong listing
    // can never by itself make muxbridge treat a live pane as gone.
    let suspects = open;
    if (backend.capabilities.marks) {
      try {
        const live = new Map((await backend.listOwned()).map((p) => [p.paneId, p]));
        suspects = open.filter((p) => live.get(p.paneId)?.dead !== false);
        this.#warned = false;
      } catch { /* inspect each pane below */ }
    }
    await Promise.all(suspects.map((pane) => this.#check(pane)));
  }

  /** The failed exits reported, or none when they cannot be read (said once). */
  #exits(): Map<string, number> {
    try {
      return this.#deps.exits?.() ?? new Map();
    } catch (err) {
      if (!this.#warned) {
        this.#warned = true;
        this.#deps.log.warn(`cannot read the exits of pane programs: ${(err as Error).message}`);
      }
      return new Map();
    }
  }

  /** Reports a pane gone, as failed when its program reported a failure before it went. */
  #went(pane: WatchedPane): void {
    const code = pane.token === undefined ? undefined : this.#exits().get(pane.token);
    if (code !== undefined && this.#deps.exited) {
      return this.#deps.exited(pane.sessionId, pane.paneId, code, false);
    }
    this.#deps.gone(pane.sessionId, pane.paneId);
  }

  /** Inspects one pane; a pane that is gone or dead is reported gone. */
  async #check(pane: WatchedPane): Promise<void> {
    const { backend, paneId } = pane;
    try {
      const info = await backend.inspect(paneId);
      if (info === null) return this.#went(pane);
      if (pane.token !== undefined && info.token !== undefined && info.token !== pane.token) {
        // Another program in a pane with this id: a restarted multiplexer handed the id out
        // again. Muxbridge's pane is gone; this one is left alone.
        this.#deps.log.warn(
          `pane ${paneId} now runs a program muxbridge did not start (the multiplexer was restarted?): its pane is gone, this one is left alone`,
        );
        return this.#went(pane);
      }
      if (info.dead) {
        // Its program exited but the pane stays (remain-on-exit): close what is left.
        await closePane(backend, paneId, {
          graceMs: 0,
          clock: this.#deps.clock,
          processes: this.#deps.processes,
          pid: pane.pid,
          pidStart: pane.pidStart,
          token: pane.token,
        });
        return this.#went(pane);
      }
      this.#warned = false;
    } catch (err) {
      if (!this.#warned) {
        this.#warned = true;
        this.#deps.log.warn(`cannot check pane ${paneId}: ${(err as Error).message}`);
      }
    }
  }
}
