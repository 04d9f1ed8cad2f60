/**
 * The session loop: one {@linkcode SessionRecord} per child session, advanced by the pure
 * machine in `session_machine.ts`, whose effects this loop runs against a {@linkcode Backend}.
 *
 * It owns the only session state (`records`), the timers (through the injected clock), the
 * spawn queue (spawns and layouts run one at a time, so bursts never race the multiplexer), the
 * pane watch (a pane that vanished is reported `gone`), and the durable pane records. With a
 * server client (`deps.server`) it also runs readiness before each pane attaches, polls the
 * server's status map while children are tracked, and rechecks a child before an idle close.
 *
 * @module
 */

import { attachArgv, attachEnv, type Credentials } from "../opencode/attach.ts";
import type { Backend, SpawnRequest } from "../backend/backend.ts";
import { type Clock, type TimerId } from "../sys/clock.ts";
import { closePane, terminateSurvivor } from "./close_pane.ts";
import type { Config } from "../config.ts";
import { isMuxError, MuxError, toMuxError } from "../sys/errors.ts";
import type { Logger } from "../sys/log.ts";
import type { PaneRecord, PaneStore } from "./pane_store.ts";
import type { OpencodeClient } from "../opencode/client.ts";
import type { Processes } from "../sys/processes.ts";
import type { CloseReason, OutMessage, SessionInfo, SkipReason } from "../bridge/protocol.ts";
import { waitUntilReady } from "../opencode/readiness.ts";
import {
  type Effect,
  hasPane,
  isBusy,
  isTracked,
  type MachineConfig,
  type MachineEvent,
  newRecord,
  type SessionRecord,
  transition,
} from "./machine.ts";
import { type PollTarget, StatusPoller } from "../opencode/status_poller.ts";
import {
  type LostSpawnDeps,
  type PendingRecord,
  resolveLostSpawn,
  spawnRecorded,
} from "./lost_spawns.ts";
import { cleanTitle, SESSION_ID, validateDirectory } from "../validate.ts";
import { originOf } from "../opencode/origin.ts";

/** Where panes go and what they attach to; replaced by a `bridge.hello`. */
export interface LoopContext {
  /** The backend, or null when none is usable. */
  backend: Backend | null;
  /** Why there is no backend (for `pane.skipped`). */
  noBackend?: { reason: SkipReason; hint: string };
  /** The OpenCode server URL (normalised), or null when none was given. */
  serverUrl: string | null;
  /** The bridge's directory: the fallback for a child without one. */
  directory: string;
  /** Credentials for the server; they reach panes only through the backend's environment. */
  auth?: Credentials;
}

/** Session status as a server poll reports it. */
export type PolledStatus = "busy" | "idle" | "absent" | "unknown";

/** What the loop is built from. */
export interface SessionLoopDeps {
  /** The clock. */
  clock: Clock;
  /** Logs. */
  log: Logger;
  /** Writes one protocol message. */
  emit: (message: OutMessage) => void;
  /** The resolved config. */
  config: Config;
  /** Durable pane records. */
  store: PaneStore;
  /** The process seam (surviving pane programs). */
  processes: Processes;
  /** The owner stamp written into marks and records. */
  owner: string;
  /**
   * Builds a client for the OpenCode server. With it the loop waits for readiness before a pane
   * attaches, polls `/session/status` while children are tracked, and rechecks a child before an
   * idle close; without it (tests, the demo) none of these happen.
   */
  server?: (url: string, auth?: Credentials) => OpencodeClient;
}

/**
 * The machine timing derived from config.
 *
 * @param config The resolved config.
 * @param server Whether a server client is there (readiness, polls and rechecks).
 * @param backend The backend, whose own minimum pane lifetime may raise the config's.
 * @returns The machine config.
 */
export function machineConfig(
  config: Config,
  server: boolean,
  backend?: Pick<Backend, "minPaneLifetimeMs"> | null,
): MachineConfig {
  return {
    idleCloseDelayMs: config.idle_close_delay_ms,
    minPaneLifetimeMs: Math.max(config.min_pane_lifetime_ms, backend?.minPaneLifetimeMs ?? 0),
    closeRetries: 2,
    closeRetryDelayMs: Math.max(100, config.close_grace_ms),
    recheck: server,
    readiness: server,
  };
}

/** A session event the loop handles. */
export type LoopInput =
  | { kind: "created" | "updated" | "deleted"; info: SessionInfo }
  | { kind: "status"; sessionId: string; status: "busy" | "idle" }
  | { kind: "job"; sessionId: string; running: boolean };

/** Runtime handles of one open pane (not state: what the loop needs to act on the pane). */
interface PaneHandle {
  backend: Backend;
  /** The pane program's pid, kept only while it ran when the pane opened. */
  pid?: number;
  /** Its start stamp then, so a reused pid is never signalled (undefined off Linux). */
  pidStart?: string;
}

const LAYOUT_DEBOUNCE_MS = 30;

/** Runs every child session's machine. */
export class SessionLoop {
  readonly #deps: SessionLoopDeps;
  #ctx: LoopContext;
  readonly #records = new Map<string, SessionRecord>();
  readonly #timers = new Map<string, TimerId>();
  readonly #handles = new Map<string, PaneHandle>();
  readonly #readiness = new Map<string, AbortController>();
  readonly #versions = new Map<string, string | null>();
  readonly #poller: StatusPoller | null = null;
  #client: { key: string; client: OpencodeClient } | null = null;
  #machine: MachineConfig;
  #queue: Promise<void> = Promise.resolve();
  #layoutTimer: TimerId | null = null;
  #layoutPending = false;
  #watchTimer: TimerId | null = null;
  #watching = false;
  #shuttingDown = false;
  #closedAtShutdown = 0;
  #settled: Array<() => void> = [];
  /** Terminations of programs that outlived a gone pane, still running. */
  readonly #reaping = new Set<Promise<void>>();
  /** Failed spawns whose pane may still show up, by spawn token (see lost_spawns.ts). */
  readonly #lostSpawns = new Map<string, { backend: Backend; record: PendingRecord }>();
  #sweeping: Promise<void> = Promise.resolve();
  #warnedUnreachable = false;

  /**
   * Creates a loop.
   *
   * @param deps Clock, logger, output, config, store, processes, owner.
   * @param ctx Backend, server and directory.
   */
  constructor(deps: SessionLoopDeps, ctx: LoopContext) {
    this.#deps = deps;
    this.#ctx = ctx;
    this.#machine = machineConfig(deps.config, deps.server !== undefined, ctx.backend);
    if (deps.server) {
      this.#poller = new StatusPoller({
        clock: deps.clock,
        log: deps.log,
        intervalMs: deps.config.poll_interval_ms,
        active: () => this.#anyTracked(),
        targets: () => this.#pollTargets(),
        client: () => this.#serverClient(),
        observe: (id, status, at) => this.observe(id, status, at),
      });
    }
  }

  /** Replaces backend, server and directory (after a `bridge.hello`); open panes keep theirs. */
  setContext(ctx: LoopContext): void {
    this.#ctx = ctx;
    this.#machine = machineConfig(this.#deps.config, this.#deps.server !== undefined, ctx.backend);
    this.#poller?.update();
  }

  /** The current context. */
  get context(): LoopContext {
    return this.#ctx;
  }

  /** A snapshot of every record (for tests and `list`). */
  records(): SessionRecord[] {
    return [...this.#records.values()];
  }

  /** Whether status polls are scheduled or in flight. */
  get polling(): boolean {
    return this.#poller?.running ?? false;
  }

  /**
   * Handles one session event.
   *
   * @param input The event.
   * @throws {MuxError} `invalid_argument` for a malformed session id (the bridge reports it).
   */
  handle(input: LoopInput): void {
    if (this.#shuttingDown) return;
    switch (input.kind) {
      case "created":
      case "updated": {
        const { info } = input;
        if (!info.parentId) return; // root sessions get no pane, silently
        this.#checkId(info.id, input.kind === "created");
        const title = cleanTitle(info.title);
        let record = this.#records.get(info.id);
        if (!record) {
          if (this.#records.size >= this.#deps.config.max_tracked_sessions) {
            return this.#overLimit(info.id, input.kind === "created");
          }
          record = newRecord(info.id, info.parentId, title, info.directory);
          this.#records.set(info.id, record);
        } else {
          this.#feed(info.id, {
            type: "updated",
            title,
            ...(info.directory ? { directory: info.directory } : {}),
          });
        }
        if (input.kind === "created") this.#feed(info.id, { type: "created" });
        return;
      }
      case "deleted":
        this.#checkId(input.info.id, false);
        this.#feedKnown(input.info.id, { type: "deleted" });
        return;
      case "status":
        this.#checkId(input.sessionId, false);
        this.#feedKnown(input.sessionId, { type: "status", status: input.status });
        return;
      case "job":
        this.#checkId(input.sessionId, false);
        this.#feedKnown(input.sessionId, { type: "job", running: input.running });
        return;
    }
  }

  /**
   * Takes over the pane a dead bridge left for a session that is still busy, so its idle or
   * delete closes it and a later busy does not open a second pane. Only for a session this loop
   * has not seen, on the loop's own backend and of the loop's own server (origin).
   *
   * @param pane The dead bridge's record of the pane (its session is known busy).
   * @param parentId The session's parent, when the server said.
   * @returns Whether the pane was adopted.
   */
  adopt(pane: PaneRecord, parentId = "unknown"): boolean {
    const backend = this.#ctx.backend;
    if (this.#shuttingDown || !backend || backend.name !== pane.backend) return false;
    if (this.#records.has(pane.sessionId) || !SESSION_ID.test(pane.sessionId)) return false;
    // Only a pane of this bridge's own server: its polls (with this bridge's credentials) must
    // be about the adopted session, and a record naming another server gets none of them.
    const origin = originOf(this.#ctx.serverUrl);
    if (origin === null || originOf(pane.server) !== origin) return false;
    if (this.#records.size >= this.#deps.config.max_tracked_sessions) return false;
    this.#records.set(
      pane.sessionId,
      newRecord(pane.sessionId, parentId, pane.title, pane.directory),
    );
    const handle: PaneHandle = { backend };
    // The recorded pid is trusted only while its start stamp still matches.
    if (
      pane.pid !== undefined && pane.pidStart !== undefined &&
      this.#deps.processes.startTime(pane.pid) === pane.pidStart
    ) {
      handle.pid = pane.pid;
      handle.pidStart = pane.pidStart;
    }
    this.#handles.set(pane.sessionId, handle);
    try {
      this.#deps.store.put({ ...pane, owner: this.#deps.owner });
    } catch (err) {
      this.#deps.log.warn(`cannot record adopted pane ${pane.paneId}: ${(err as Error).message}`);
    }
    this.#feed(pane.sessionId, { type: "adopted", paneId: pane.paneId, backend: backend.name });
    this.#ensureWatch();
    return true;
  }

  /**
   * Applies a status a server poll observed. Busy (or retry) cancels a pending idle close and
   * reopens like a busy event; idle or absent only confirms an idle signal already seen, so a
   * session absent from the status map is never a reason to close by itself.
   *
   * @param sessionId The session.
   * @param status What the poll saw (`unknown` is ignored).
   * @param at When the poll was sent; a poll older than the last status event is ignored.
   */
  observe(sessionId: string, status: PolledStatus, at: number = this.#deps.clock.now()): void {
    if (this.#shuttingDown || status === "unknown" || !this.#records.has(sessionId)) return;
    this.#feed(sessionId, { type: "poll", status, at });
  }

  /**
   * Ends the loop: closes every owned pane (unless `closePanes` is false), waits for operations
   * in flight, and stops all timers.
   *
   * @param closePanes Whether owned panes close (`close_on_exit`).
   * @returns How many panes were closed for the shutdown.
   */
  async shutdown(closePanes: boolean): Promise<number> {
    if (!this.#shuttingDown) {
      this.#shuttingDown = true;
      this.#poller?.stop();
      for (const id of [...this.#records.keys()]) this.#feed(id, { type: "shutdown", closePanes });
    }
    await this.#whenSettled();
    await Promise.all(this.#reaping);
    // Whatever the close_on_exit setting: such a pane was never opened for the user.
    await this.#sweepLostSpawns(true);
    this.#stopTimers();
    return this.#closedAtShutdown;
  }

  #checkId(id: string, created: boolean): void {
    if (SESSION_ID.test(id)) return;
    if (created) {
      this.#deps.emit({
        type: "pane.skipped",
        sessionID: id,
        reason: "invalid_id",
        hint: 'A session id is "ses_" followed by 1-128 letters or digits',
      });
    }
    throw new MuxError(
      "invalid_argument",
      `Cannot use session id ${JSON.stringify(id.slice(0, 80))}`,
    );
  }

  /** A new child beyond `max_tracked_sessions`: no record, no pane, said once at creation. */
  #overLimit(id: string, created: boolean): void {
    const max = this.#deps.config.max_tracked_sessions;
    this.#deps.log.debug(`${id}: not tracked: ${max} sessions are (max_tracked_sessions)`);
    if (!created) return;
    this.#deps.emit({
      type: "pane.skipped",
      sessionID: id,
      reason: "limit",
      hint: `This bridge already tracks ${max} child sessions; raise max_tracked_sessions`,
    });
  }

  #feedKnown(id: string, event: MachineEvent): void {
    if (!this.#records.has(id)) {
      this.#deps.log.debug(`ignoring ${event.type} for untracked session ${id}`);
      return;
    }
    this.#feed(id, event);
  }

  #feed(id: string, event: MachineEvent): void {
    const record = this.#records.get(id);
    if (!record) return;
    const t = transition(record, event, this.#deps.clock.now(), this.#machine);
    this.#records.set(id, t.record);
    if (t.record.state.kind !== record.state.kind) {
      this.#deps.log.debug(`${id}: ${record.state.kind} -> ${t.record.state.kind} (${event.type})`);
    }
    for (const effect of t.effects) this.#run(t.record, effect);
    this.#checkSettled();
    this.#poller?.update();
  }

  #run(record: SessionRecord, effect: Effect): void {
    const id = record.id;
    switch (effect.type) {
      case "emit":
        if (effect.message.type === "pane.closed" && effect.message.reason === "shutdown") {
          this.#closedAtShutdown++;
        }
        this.#deps.emit(effect.message);
        return;
      case "arm": {
        this.#disarm(id);
        const ms = Math.max(0, effect.at - this.#deps.clock.now());
        this.#timers.set(
          id,
          this.#deps.clock.setTimeout(() => {
            this.#timers.delete(id);
            this.#feed(id, { type: "timer" });
          }, ms),
        );
        return;
      }
      case "disarm":
        this.#disarm(id);
        return;
      case "await_ready":
        void this.#awaitReady(id);
        return;
      case "cancel_ready":
        this.#readiness.get(id)?.abort();
        this.#readiness.delete(id);
        return;
      case "spawn":
        this.#enqueue(() => this.#spawn(id));
        return;
      case "close":
        void this.#close(id, effect.paneId, effect.reason);
        return;
      case "retitle":
        void this.#retitle(id, effect.paneId, effect.title);
        return;
      case "recheck":
        void this.#recheck(id);
        return;
      case "layout":
        this.#scheduleLayout();
        return;
      default: {
        const never: never = effect;
        throw new TypeError(`Unknown effect ${JSON.stringify(never)}`);
      }
    }
  }

  #disarm(id: string): void {
    const timer = this.#timers.get(id);
    if (timer !== undefined) {
      this.#deps.clock.clearTimeout(timer);
      this.#timers.delete(id);
    }
  }

  #enqueue(job: () => Promise<void>): void {
    this.#queue = this.#queue.then(job).catch((err) => {
      this.#deps.log.error(`internal error in queued operation: ${(err as Error).stack ?? err}`);
    });
  }

  /** The client for the current server, or null without a server URL or client factory. */
  #serverClient(): OpencodeClient | null {
    const { serverUrl, auth } = this.#ctx;
    if (!serverUrl || !this.#deps.server) return null;
    // The key holds the password only in memory, to notice changed credentials; never logged.
    const key = `${serverUrl}\0${auth?.username ?? ""}\0${auth?.password ?? ""}`;
    if (this.#client?.key !== key) {
      this.#client = { key, client: this.#deps.server(serverUrl, auth) };
    }
    return this.#client.client;
  }

  /**
   * The directory a child's pane starts in and its server calls are scoped to: its own, else
   * the bridge's (`warn`: say so when its own is unusable).
   */
  #directoryOf(record: SessionRecord, warn = false): string {
    if (record.directory) {
      try {
        return validateDirectory(record.directory);
      } catch (err) {
        if (warn) {
          this.#deps.log.warn(
            `${record.id}: ${(err as Error).message}; using ${this.#ctx.directory}`,
          );
        }
      }
    }
    return this.#ctx.directory;
  }

  /**
   * Whether a session has a pane or is getting one; status polling runs while it does. A child
   * whose pane closed for idleness is not polled: its next busy event reopens the pane, and
   * OpenCode keeps finished child sessions, so polling them would never stop.
   */
  #anyTracked(): boolean {
    for (const r of this.#records.values()) if (isTracked(r.state)) return true;
    return false;
  }

  #pollTargets(): PollTarget[] {
    return this.records().flatMap((r) =>
      isTracked(r.state) ? [{ sessionId: r.id, directory: this.#directoryOf(r) }] : []
    );
  }

  /** Waits until the server knows the child, then lets the spawn go ahead (or says why not). */
  async #awaitReady(id: string): Promise<void> {
    const record = this.#records.get(id);
    if (!record || record.state.kind !== "awaiting") return;
    const pre = this.#request(record);
    if ("skip" in pre) {
      this.#feed(id, { type: "unready", reason: pre.skip, hint: pre.hint });
      return;
    }
    const client = this.#serverClient();
    if (!client) {
      this.#feed(id, { type: "ready" });
      return;
    }
    this.#readiness.get(id)?.abort();
    const abort = new AbortController();
    this.#readiness.set(id, abort);
    let outcome;
    try {
      outcome = await waitUntilReady({
        client,
        sessionId: id,
        directory: pre.cwd,
        clock: this.#deps.clock,
        timeoutMs: this.#deps.config.readiness_timeout_ms,
        signal: abort.signal,
        versions: this.#versions,
      });
    } finally {
      if (this.#readiness.get(id) === abort) this.#readiness.delete(id);
    }
    if (abort.signal.aborted) return; // deleted or shutting down: the machine moved on
    if (outcome.ok) {
      this.#deps.log.debug(`${id}: server knows the session after ${outcome.waitedMs} ms`);
      this.#feed(id, { type: "ready" });
      return;
    }
    this.#deps.log.warn(`${id}: no pane: ${outcome.message}`);
    this.#feed(id, { type: "unready", reason: outcome.reason, hint: outcome.hint });
  }

  /** Builds the spawn request, or the reason there can be none. */
  #request(record: SessionRecord): SpawnRequest | { skip: SkipReason; hint: string } {
    const ctx = this.#ctx;
    if (!ctx.backend) {
      return {
        skip: ctx.noBackend?.reason ?? "no_backend",
        hint: ctx.noBackend?.hint ?? "Run OpenCode inside a supported multiplexer or set backend",
      };
    }
    if (!ctx.serverUrl) {
      return {
        skip: "server_unreachable",
        hint:
          "No server URL is known: send bridge.hello with serverUrl or pass --url (the plugin from `muxbridge install` does; or start OpenCode with --port 0)",
      };
    }
    if (ctx.auth && !ctx.backend.capabilities.env) {
      return {
        skip: "auth_unsupported",
        hint: `${ctx.backend.name} cannot pass the server password to a pane without exposing it`,
      };
    }
    const dir = this.#directoryOf(record, true);
    return {
      sessionId: record.id,
      title: record.title,
      argv: attachArgv(this.#deps.config.opencode_bin, ctx.serverUrl, record.id, dir),
      cwd: dir,
      env: attachEnv(ctx.auth),
      owner: this.#deps.owner,
    };
  }

  async #spawn(id: string): Promise<void> {
    const record = this.#records.get(id);
    if (!record || record.state.kind !== "opening") return;
    const req = this.#request(record);
    if ("skip" in req) {
      this.#feed(id, {
        type: "spawn_failed",
        code: req.skip,
        message: req.hint,
        skip: { reason: req.skip, hint: req.hint },
      });
      return;
    }
    const backend = this.#ctx.backend!;
    // The pending record goes first: a pane made by a spawn whose answer is lost is still ours.
    const spawned = await spawnRecorded(backend, req, {
      sessionId: id,
      title: record.title,
      openedAt: new Date(this.#deps.clock.now()).toISOString(),
      owner: this.#deps.owner,
      ...(this.#ctx.serverUrl ? { server: this.#ctx.serverUrl } : {}),
      directory: req.cwd,
    }, this.#lostSpawnDeps());
    if (!spawned.ok) {
      const e = toMuxError(spawned.error);
      this.#deps.log.warn(`${id}: cannot open pane: ${e.message}`);
      const { outcome, pending } = spawned;
      if (outcome.kind === "unresolved" || (outcome.kind === "none" && outcome.kept)) {
        // The multiplexer may still make the pane: look again on each watch tick and at bye.
        this.#lostSpawns.set(pending.token, { backend, record: pending });
        this.#ensureWatch();
      }
      const skip = skipFor(e);
      this.#feed(id, {
        type: "spawn_failed",
        code: e.code,
        message: e.message,
        ...(skip ? { skip: { reason: skip, hint: e.hint ?? e.message } } : {}),
      });
      return;
    }
    const { pane, pending } = spawned;
    const handle = this.#handle(backend, pane.pid);
    this.#handles.set(id, handle);
    try {
      this.#deps.store.put({
        sessionId: id,
        paneId: pane.paneId,
        backend: backend.name,
        title: record.title,
        openedAt: new Date(this.#deps.clock.now()).toISOString(),
        owner: this.#deps.owner,
        ...(this.#ctx.serverUrl ? { server: this.#ctx.serverUrl } : {}),
        directory: req.cwd,
        ...(handle.pid !== undefined ? { pid: handle.pid } : {}),
        ...(handle.pidStart !== undefined ? { pidStart: handle.pidStart } : {}),
      });
      this.#deps.store.remove(backend.name, pending.paneId);
    } catch (err) {
      this.#deps.log.warn(
        `cannot record pane ${pane.paneId} in ${this.#deps.store.dir}: ${(err as Error).message}`,
      );
    }
    this.#feed(id, {
      type: "spawned",
      paneId: pane.paneId,
      backend: backend.name,
      ...(pane.arranged ? { arranged: true } : {}),
    });
    this.#ensureWatch();
  }

  /** What resolving a lost spawn needs. */
  #lostSpawnDeps(): LostSpawnDeps {
    return {
      store: this.#deps.store,
      clock: this.#deps.clock,
      processes: this.#deps.processes,
      graceMs: this.#deps.config.close_grace_ms,
      log: this.#deps.log,
    };
  }

  /**
   * Looks again for the panes of this loop's failed spawns that the multiplexer may still make
   * (one look at a time). `final` (at shutdown) drops the records of spawns that left nothing.
   */
  #sweepLostSpawns(final: boolean): Promise<void> {
    this.#sweeping = this.#sweeping.then(async () => {
      for (const [token, lost] of [...this.#lostSpawns]) {
        const outcome = await resolveLostSpawn(
          lost.backend,
          lost.record,
          this.#lostSpawnDeps(),
          final,
        );
        if (outcome.kind === "closed") {
          this.#deps.log.warn(
            `${lost.record.sessionId}: closed pane ${
              outcome.panes.join(", ")
            }, made late by a spawn whose answer was lost`,
          );
        }
        if (outcome.kind !== "unresolved" && !(outcome.kind === "none" && outcome.kept)) {
          this.#lostSpawns.delete(token);
        }
      }
    });
    return this.#sweeping;
  }

  /** A handle for a new pane; its pid is kept only with evidence it is the pane's program. */
  #handle(backend: Backend, pid: number | undefined): PaneHandle {
    const handle: PaneHandle = { backend };
    // A program that already ended leaves a pid the system may hand out again: drop it.
    if (pid === undefined || !this.#deps.processes.alive(pid)) return handle;
    handle.pid = pid;
    const start = this.#deps.processes.startTime(pid);
    if (start !== undefined) handle.pidStart = start;
    return handle;
  }

  /** The close options that let a close end a surviving program. */
  #programOptions(handle: PaneHandle | undefined) {
    return { processes: this.#deps.processes, pid: handle?.pid, pidStart: handle?.pidStart };
  }

  async #close(id: string, paneId: string, reason: CloseReason): Promise<void> {
    const handle = this.#handles.get(id);
    const backend = handle?.backend ?? this.#ctx.backend;
    if (!backend) {
      this.#feed(id, {
        type: "close_failed",
        code: "no_backend",
        message: "No backend to close the pane with",
      });
      return;
    }
    try {
      const result = await closePane(backend, paneId, {
        graceMs: this.#deps.config.close_grace_ms,
        clock: this.#deps.clock,
        ...this.#programOptions(handle),
      });
      this.#deps.log.debug(`${id}: closed ${paneId} (${reason}) ${JSON.stringify(result)}`);
      this.#forget(id, backend.name, paneId);
      this.#feed(id, { type: "closed" });
    } catch (err) {
      const e = toMuxError(err);
      this.#deps.log.warn(`${id}: cannot close pane ${paneId}: ${e.message}`);
      this.#feed(id, { type: "close_failed", code: e.code, message: e.message });
      const after = this.#records.get(id)?.state;
      if (after?.kind === "stuck") this.#markStuck(id, backend.name, paneId);
    }
  }

  #forget(id: string, backend: string, paneId: string): void {
    this.#handles.delete(id);
    try {
      this.#deps.store.remove(backend, paneId);
    } catch (err) {
      this.#deps.log.warn(`cannot remove the record of pane ${paneId}: ${(err as Error).message}`);
    }
  }

  #markStuck(id: string, backend: string, paneId: string): void {
    const existing = this.#deps.store.list().records.find((r) =>
      r.backend === backend && r.paneId === paneId
    );
    if (existing) {
      try {
        this.#deps.store.put({ ...existing, stuck: true });
      } catch { /* the record stays as it was */ }
    }
    this.#deps.log.error(
      `${id}: giving up on closing pane ${paneId}; \`muxbridge cleanup\` will retry`,
    );
  }

  async #retitle(id: string, paneId: string, title: string): Promise<void> {
    const backend = this.#handles.get(id)?.backend;
    if (!backend?.capabilities.title) return;
    try {
      await backend.setTitle(paneId, title);
    } catch (err) {
      if (isMuxError(err, "pane_not_found")) return this.#noticeGone(id, paneId);
      this.#deps.log.warn(`${id}: cannot retitle pane ${paneId}: ${(err as Error).message}`);
    }
  }

  /**
   * Confirms an idle close the moment it is due, without waiting for a poll tick: one status read
   * of the child, and beside it whether the session still exists, each bounded by half a poll
   * interval (at most 1 s). Busy (or retry) cancels the close; a 404 for the session means it was
   * deleted; idle, absent or no answer in time leaves the idle signal standing.
   */
  async #recheck(id: string): Promise<void> {
    const record = this.#records.get(id);
    const client = this.#serverClient();
    let status: "busy" | "idle" | "absent" | "deleted" | "unknown" = "unknown";
    if (record && client) {
      const call = {
        directory: this.#directoryOf(record),
        timeoutMs: Math.min(1000, Math.max(50, this.#deps.config.poll_interval_ms / 2)),
      };
      const [polled, session] = await Promise.allSettled([
        client.statusMap(call),
        client.session(id, call),
      ]);
      const seen = polled.status === "fulfilled" ? polled.value.get(id) ?? "absent" : "unknown";
      status = seen === "busy"
        ? "busy"
        : session.status === "fulfilled" && session.value === null
        ? "deleted"
        : seen;
      for (const r of [polled, session]) {
        if (r.status === "rejected") {
          this.#deps.log.debug(`${id}: idle confirmation: ${(r.reason as Error).message}`);
        }
      }
    }
    this.#feed(id, { type: "recheck", status });
  }

  /**
   * Coalesces layout requests: one pass is pending at a time, and it runs after the spawns
   * already queued, so a burst of opens costs one layout.
   */
  #scheduleLayout(): void {
    if (this.#layoutPending || this.#shuttingDown) return;
    this.#layoutPending = true;
    this.#layoutTimer = this.#deps.clock.setTimeout(() => {
      this.#layoutTimer = null;
      this.#enqueue(() => {
        this.#layoutPending = false;
        return this.#layout();
      });
    }, LAYOUT_DEBOUNCE_MS);
  }

  async #layout(): Promise<void> {
    const backend = this.#ctx.backend;
    if (!backend?.capabilities.layout || this.#shuttingDown) return;
    const panes = this.records()
      .flatMap((r) =>
        r.state.kind === "open" && this.#handles.get(r.id)?.backend === backend ? [r.state] : []
      )
      .sort((a, b) => a.openedAt - b.openedAt)
      .map((s) => s.paneId);
    if (panes.length === 0) return;
    try {
      const result = await backend.applyLayout({
        layout: this.#deps.config.layout,
        mainPaneSize: this.#deps.config.main_pane_size,
        panes,
      });
      this.#deps.log.debug(
        `layout ${this.#deps.config.layout}: ${
          result.applied ? "applied" : "skipped"
        } (${result.detail})`,
      );
    } catch (err) {
      this.#deps.log.warn(`cannot apply layout: ${(err as Error).message}`);
    }
  }

  /** Starts the pane watch while any pane is open. */
  #ensureWatch(): void {
    if (this.#watchTimer !== null || this.#shuttingDown) return;
    this.#watchTimer = this.#deps.clock.setTimeout(() => {
      this.#watchTimer = null;
      void this.#watch();
    }, this.#deps.config.poll_interval_ms);
  }

  async #watch(): Promise<void> {
    if (this.#watching || this.#shuttingDown) return;
    this.#watching = true;
    try {
      const byBackend = new Map<Backend, Array<{ id: string; paneId: string }>>();
      for (const r of this.records()) {
        const backend = this.#handles.get(r.id)?.backend;
        if (r.state.kind !== "open" || !backend) continue;
        byBackend.set(backend, [...(byBackend.get(backend) ?? []), {
          id: r.id,
          paneId: r.state.paneId,
        }]);
      }
      await Promise.all([...byBackend].map(async ([backend, open]) => {
        // One listing of the marked panes instead of one call per pane (20 panes were 20 tmux
        // processes per poll); only a pane missing from it or dead is inspected, so a wrong
        // listing can never by itself make muxbridge treat a live pane as gone.
        let suspects = open;
        if (backend.capabilities.marks) {
          try {
            const live = new Map<string, { dead: boolean }>(
              (await backend.listOwned()).map((p) => [p.paneId, p]),
            );
            suspects = open.filter((p) => live.get(p.paneId)?.dead !== false);
            this.#warnedUnreachable = false;
          } catch { /* inspect each pane below */ }
        }
        await Promise.all(suspects.map(({ id, paneId }) => this.#check(backend, id, paneId)));
      }));
      if (this.#lostSpawns.size > 0) await this.#sweepLostSpawns(false);
    } finally {
      this.#watching = false;
    }
    if (this.records().some((r) => r.state.kind === "open") || this.#lostSpawns.size > 0) {
      this.#ensureWatch();
    }
  }

  /** Inspects one pane; a pane that is gone or dead is reported `gone`. */
  async #check(backend: Backend, id: string, paneId: string): Promise<void> {
    try {
      const info = await backend.inspect(paneId);
      if (info === null) return this.#noticeGone(id, paneId);
      if (info.dead) {
        // Its program exited but the pane stays (remain-on-exit): close what is left.
        await closePane(backend, paneId, {
          graceMs: 0,
          clock: this.#deps.clock,
          ...this.#programOptions(this.#handles.get(id)),
        });
        return this.#noticeGone(id, paneId);
      }
      this.#warnedUnreachable = false;
    } catch (err) {
      if (!this.#warnedUnreachable) {
        this.#warnedUnreachable = true;
        this.#deps.log.warn(`cannot check pane ${paneId}: ${(err as Error).message}`);
      }
    }
  }

  #noticeGone(id: string, paneId: string): void {
    const record = this.#records.get(id);
    if (record?.state.kind !== "open" || record.state.paneId !== paneId) return;
    const handle = this.#handles.get(id);
    this.#forget(id, handle?.backend.name ?? "", paneId);
    this.#feed(id, { type: "gone", paneId });
    // The pane went away behind muxbridge's back; its program (the OpenCode TUI ignores
    // SIGHUP) or what it started may have survived it. This runs beside the watch, so other
    // panes are still checked on time, and shutdown waits for it.
    if (handle?.pid === undefined) return;
    const pid = handle.pid;
    const reaping = terminateSurvivor(
      this.#deps.processes,
      pid,
      this.#deps.clock,
      this.#deps.config.close_grace_ms,
      handle.pidStart,
    ).then((ended) => {
      if (ended) this.#deps.log.info(`${id}: ended pid ${pid}, which outlived pane ${paneId}`);
    }, (err) => {
      this.#deps.log.warn(`${id}: ${(err as Error).message}`);
    }).finally(() => this.#reaping.delete(reaping));
    this.#reaping.add(reaping);
  }

  #stopTimers(): void {
    this.#poller?.stop();
    for (const abort of this.#readiness.values()) abort.abort();
    this.#readiness.clear();
    for (const id of [...this.#timers.keys()]) this.#disarm(id);
    for (const timer of [this.#layoutTimer, this.#watchTimer]) {
      if (timer !== null) this.#deps.clock.clearTimeout(timer);
    }
    this.#layoutTimer = null;
    this.#watchTimer = null;
  }

  #inFlight(): boolean {
    for (const r of this.#records.values()) if (isBusy(r.state)) return true;
    return false;
  }

  #checkSettled(): void {
    if (this.#settled.length === 0 || this.#inFlight()) return;
    const waiters = this.#settled;
    this.#settled = [];
    for (const resolve of waiters) resolve();
  }

  #whenSettled(): Promise<void> {
    if (!this.#inFlight()) return Promise.resolve();
    return new Promise((resolve) => this.#settled.push(resolve));
  }

  /** The panes this loop holds (open, closing or stuck), for `bye` accounting and tests. */
  panes(): Array<{ sessionId: string; paneId: string; state: string }> {
    return this.records().flatMap((r) =>
      hasPane(r.state) ? [{ sessionId: r.id, paneId: r.state.paneId, state: r.state.kind }] : []
    );
  }
}

/** The skip reason an open failure maps to, when the child simply cannot have a pane now. */
function skipFor(err: MuxError): SkipReason | undefined {
  switch (err.code) {
    case "no_space":
    case "auth_unsupported":
    case "unsupported_version":
    case "backend_unreachable":
      return err.code;
    case "no_backend":
    case "binary_not_found":
      return "no_backend";
    case "invalid_argument":
      return "invalid_id";
    default:
      return undefined;
  }
}
