/**
 * The hands of the session loop: runs the effects the machine returns, one session at a time,
 * and hands every outcome back as an event (`feed`). It owns what serves all sessions while they
 * run — the spawn queue, the layout debouncer, the pane watch, the survivors being ended and the
 * count of panes closed for the shutdown — and nothing that decides.
 *
 * @module
 */

import type { SessionId } from "../sys/validate.ts";
import { Attender } from "./attend.ts";
import { LayoutDebouncer } from "./layout_debouncer.ts";
import { sweepLostSpawns } from "./lost_spawns.ts";
import type { Effect, MachineEvent } from "./machine/mod.ts";
import { awaitReadiness, openPane } from "./open_pane.ts";
import {
  closeSessionPane,
  endSurvivor,
  layoutPass,
  recheckSession,
  storeMarkStuck,
  storePut,
  storeRemove,
} from "./pane_effects.ts";
import { showStatus } from "./pane_status.ts";
import { PaneWatch, type WatchedPane } from "./pane_watch.ts";
import { SerialQueue } from "./serial_queue.ts";
import type { LoopEnv, Session } from "./session.ts";

/** What an {@linkcode EffectRunner} works with. */
export interface EffectRunnerDeps {
  /** The loop's context, config and deps, as they are now. */
  env(): LoopEnv;
  /** Every session. */
  sessions(): Session[];
  /** Advances a session's machine by the outcome of an effect. */
  feed(id: SessionId, event: MachineEvent): void;
}

/** Runs effects against the backend, the server, the store and the clock. */
export class EffectRunner {
  readonly #deps: EffectRunnerDeps;
  /** Spawns and layout passes, one at a time. */
  readonly #queue: SerialQueue;
  /** One look for lost spawns at a time. */
  readonly #sweeps: SerialQueue;
  readonly #layout: LayoutDebouncer;
  readonly #watch: PaneWatch;
  readonly #attender: Attender;
  /** Programs that outlived a gone pane, still being ended. */
  readonly #reaping = new Set<Promise<void>>();
  #closedAtShutdown = 0;

  /**
   * Creates a runner with nothing under way.
   *
   * @param deps The loop's environment, its sessions and its feed.
   */
  constructor(deps: EffectRunnerDeps) {
    this.#deps = deps;
    const { clock, log, processes } = deps.env().deps;
    this.#attender = new Attender(() => deps.env());
    this.#queue = new SerialQueue((err) => this.#internal(err));
    this.#sweeps = new SerialQueue((err) => this.#internal(err));
    this.#layout = new LayoutDebouncer({
      clock,
      queue: this.#queue,
      pass: () => layoutPass(deps.sessions(), deps.env()),
    });
    this.#watch = new PaneWatch({
      clock,
      log,
      processes,
      intervalMs: () => deps.env().config.poll_interval_ms,
      panes: () => this.#openPanes(),
      lost: () => deps.sessions().some((s) => s.lostSpawns.length > 0),
      sweep: () => this.sweep(false),
      gone: (id, paneId) => deps.feed(id, { type: "gone", paneId }),
      exits: () => deps.env().deps.store.exits(),
      exited: (id, paneId, code, present) =>
        deps.feed(id, { type: "exited", paneId, code, present }),
    });
  }

  /** How many panes closed for the shutdown (`count_close`). */
  get closedAtShutdown(): number {
    return this.#closedAtShutdown;
  }

  /**
   * Runs one effect of a session.
   *
   * @param session The session.
   * @param effect The effect.
   */
  run(session: Session, effect: Effect): void {
    const env = this.#deps.env();
    const { id } = session.record;
    const then = (outcome: Promise<MachineEvent | null>) =>
      void outcome.then((event) => event && this.#deps.feed(id, event))
        .catch((err) => this.#internal(err));
    switch (effect.type) {
      case "emit":
        return env.deps.emit(effect.message);
      case "count_close":
        this.#closedAtShutdown++;
        return;
      case "arm":
        return this.#arm(session, effect.at);
      case "disarm":
        return this.#disarm(session);
      case "await_ready":
        return then(this.#awaitReady(session));
      case "cancel_ready":
        session.readiness?.abort();
        session.readiness = null;
        return;
      case "spawn":
        return void this.#queue.run(() => this.#spawn(session));
      case "close":
        return then(closeSessionPane(session, effect.paneId, effect.reason, env));
      case "set_status":
        return then(showStatus(session, effect.paneId, effect.view, env));
      case "arm_status":
        return this.#armStatus(session, effect.at);
      case "disarm_status":
        return this.#disarmStatus(session);
      case "recheck":
        return then(recheckSession(session.record, env));
      case "layout":
        return this.#layout.request();
      case "store_put":
        return storePut(session, effect.replaces, env);
      case "store_remove":
        return storeRemove(session, effect.paneId, env);
      case "store_mark_stuck":
        return storeMarkStuck(session, effect.paneId, env);
      case "end_survivor":
        return this.#reap(endSurvivor(session, effect.paneId, env));
      case "watch":
        return this.#watch.ensure();
      case "attend":
        return void this.#attender.attend(session, effect.paneId, effect.what)
          .catch((err) => this.#internal(err));
      default: {
        const never: never = effect;
        throw new TypeError(`Unknown effect ${JSON.stringify(never)}`);
      }
    }
  }

  /** The shutdown began: no layout pass or watch tick starts any more. */
  stop(): void {
    this.#layout.stop();
    this.#watch.stop();
  }

  /**
   * The shutdown's end: waits for the survivors being ended, takes the last look for lost
   * spawns, and ends every wait and timer.
   */
  async finish(): Promise<void> {
    this.stop();
    await Promise.all(this.#reaping);
    // Whatever the close_on_exit setting: such a pane was never opened for the user.
    await this.sweep(true);
    for (const session of this.#deps.sessions()) {
      session.readiness?.abort();
      session.readiness = null;
      this.#disarm(session);
      this.#disarmStatus(session);
    }
  }

  /**
   * Looks again for the panes of failed spawns that the multiplexer may still make (one look at
   * a time).
   *
   * @param final At shutdown: the records of spawns that left nothing go too.
   * @returns Resolves when the look is done.
   */
  sweep(final: boolean): Promise<void> {
    return this.#sweeps.run(async () => {
      const env = this.#deps.env();
      for (const session of this.#deps.sessions()) {
        if (session.lostSpawns.length === 0) continue;
        const looked = session.lostSpawns;
        const left = await sweepLostSpawns(looked, {
          store: env.deps.store,
          clock: env.deps.clock,
          processes: env.deps.processes,
          graceMs: env.config.close_grace_ms,
          survivorGraceMs: env.config.survivor_grace_ms,
          log: env.deps.log,
        }, final);
        // Spawns that failed while this look ran stay for the next one.
        session.lostSpawns = [...left, ...session.lostSpawns.filter((l) => !looked.includes(l))];
      }
    });
  }

  #arm(session: Session, at: number): void {
    this.#disarm(session);
    const { clock } = this.#deps.env().deps;
    session.timer = clock.setTimeout(() => {
      session.timer = null;
      this.#deps.feed(session.record.id, { type: "timer" });
    }, Math.max(0, at - clock.now()));
  }

  #disarm(session: Session): void {
    if (session.timer === null) return;
    this.#deps.env().deps.clock.clearTimeout(session.timer);
    session.timer = null;
  }

  #armStatus(session: Session, at: number): void {
    this.#disarmStatus(session);
    const { clock } = this.#deps.env().deps;
    session.statusTimer = clock.setTimeout(() => {
      session.statusTimer = null;
      this.#deps.feed(session.record.id, { type: "status_due" });
    }, Math.max(0, at - clock.now()));
  }

  #disarmStatus(session: Session): void {
    if (session.statusTimer === null) return;
    this.#deps.env().deps.clock.clearTimeout(session.statusTimer);
    session.statusTimer = null;
  }

  async #awaitReady(session: Session): Promise<MachineEvent | null> {
    if (session.record.state.kind !== "awaiting") return null;
    session.readiness?.abort();
    const abort = new AbortController();
    session.readiness = abort;
    try {
      return await awaitReadiness(session.record, this.#deps.env(), abort.signal);
    } finally {
      if (session.readiness === abort) session.readiness = null;
    }
  }

  async #spawn(session: Session): Promise<void> {
    if (session.record.state.kind !== "opening") return;
    const opened = await openPane(session.record, this.#deps.env());
    if (opened.pane) session.pane = opened.pane;
    if (opened.lost) session.lostSpawns.push(opened.lost);
    this.#deps.feed(session.record.id, opened.event);
  }

  /** Keeps a survivor's termination until it ends; the shutdown waits for it. */
  #reap(ending: Promise<void> | null): void {
    if (ending === null) return;
    const reaping = ending.finally(() => this.#reaping.delete(reaping));
    this.#reaping.add(reaping);
  }

  /** The open panes, for the watch. */
  #openPanes(): WatchedPane[] {
    return this.#deps.sessions().flatMap(({ record, pane }) =>
      record.state.kind === "open" && pane
        ? [{
          sessionId: record.id,
          paneId: record.state.paneId,
          backend: pane.backend,
          ...(pane.record.pid === undefined ? {} : { pid: pane.record.pid }),
          ...(pane.record.pidStart === undefined ? {} : { pidStart: pane.record.pidStart }),
          ...(pane.record.token === undefined ? {} : { token: pane.record.token }),
        }]
        : []
    );
  }

  #internal(err: unknown): void {
    this.#deps.env().deps.log.error(
      `internal error in queued operation: ${(err as Error).stack ?? err}`,
    );
  }
}
