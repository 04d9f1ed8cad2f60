/**
 * The session loop: one {@linkcode Session} per child session — the pure machine's record and
 * its runtime attachments — in one map. Events go through the machine (`machine/mod.ts`); the
 * effects it returns go to the effect runner (`effect_runner.ts`), which feeds each outcome back
 * as an event. The loop decides nothing itself.
 *
 * Beside the sessions it holds only what serves them all: its context and config (a
 * `bridge.hello` replaces them: `loop_config.ts` says when each key takes effect), the server
 * client and, with a client factory (`deps.server`), the status poller and the warm-up of what
 * `opencode attach` asks the server first.
 *
 * @module
 */

import type { Config } from "../config/config.ts";
import type { OpencodeClient } from "../opencode/client.ts";
import { originOf } from "../opencode/origin.ts";
import { StatusPoller } from "../opencode/status_poller.ts";
import { agentOf, cleanTitle, type SessionId } from "../sys/validate.ts";
import { EffectRunner } from "./effect_runner.ts";
import { type AttentionKind, type LoopInput, type PendingList, REQUEST_ID } from "./events.ts";
import { describeConfigChange, machineConfig } from "./loop_config.ts";
import {
  admissions,
  hasPane,
  isBusy,
  isPolled,
  type MachineConfig,
  type MachineEvent,
  newRecord,
  type SessionRecord,
  transition,
} from "./machine/mod.ts";
import { directoryOf } from "./open_pane.ts";
import { ownerAlive } from "../sys/processes.ts";
import { Views } from "./views.ts";
import type { PaneRecord } from "./pane_store.ts";
import {
  type LoopContext,
  type LoopEnv,
  newSession,
  type Session,
  type SessionLoopDeps,
} from "./session.ts";

export type { LoopInput } from "./events.ts";
export type { LoopContext, SessionLoopDeps } from "./session.ts";

/** The most a warm-up request may take (a fresh server on a busy machine: about ten seconds). */
const WARM_TIMEOUT_MS = 60_000;

/** Session status as a server poll reports it. */
export type PolledStatus = "busy" | "running" | "idle" | "absent" | "unknown";

/** Runs every child session's machine. */
export class SessionLoop {
  readonly #deps: SessionLoopDeps;
  #ctx: LoopContext;
  #config: Config;
  #machine: MachineConfig;
  /** The only session state: one record per child session. */
  readonly #sessions = new Map<SessionId, Session>();
  readonly #effects: EffectRunner;
  readonly #poller: StatusPoller<SessionId> | null = null;
  #client: { key: string; url: string; password: string; client: OpencodeClient } | null = null;
  /** The sessions this bridge's TUI showed (`scope: "tui"`: their children are this bridge's). */
  readonly #views = new Views();
  /** Server versions already read, by server URL. */
  readonly #versions = new Map<string, string | null>();
  #shuttingDown = false;
  #admitting = false;
  /** Servers and directories warmed for `opencode attach`, or being warmed (`#warm`). */
  readonly #warmed = new Set<string>();
  /** Ends the warm-ups in flight at shutdown. */
  readonly #warming = new AbortController();
  #settled: Array<() => void> = [];

  /**
   * Creates a loop.
   *
   * @param deps Clock, logger, output, config, store, processes, owner.
   * @param ctx Backend, server and directory.
   */
  constructor(deps: SessionLoopDeps, ctx: LoopContext) {
    this.#deps = deps;
    this.#ctx = ctx;
    this.#config = deps.config;
    this.#machine = machineConfig(deps.config, deps.server !== undefined, ctx.backend);
    this.#effects = new EffectRunner({
      env: () => this.#env(),
      sessions: () => this.#all(),
      feed: (id, event) => this.#feed(id, event),
    });
    if (deps.server) {
      const config = () => this.#config;
      this.#poller = new StatusPoller({
        clock: deps.clock,
        log: deps.log,
        get intervalMs() {
          return config().poll_interval_ms;
        },
        active: () => this.#all().some((s) => isPolled(s.record.state)),
        targets: () =>
          this.#all().flatMap((s) =>
            isPolled(s.record.state)
              ? [{ sessionId: s.record.id, directory: directoryOf(s.record, this.#env()) }]
              : []
          ),
        client: () => this.#serverClient(),
        observe: (id, status, at, retry) => this.observe(id, status, at, retry),
        observePending: (ids, requests, at) => this.observePending(ids, { requests }, at),
      });
    }
    this.#warm(ctx.directory);
  }

  /**
   * Replaces backend, server and directory (after a `bridge.hello`), and the config when one is
   * given. Open panes keep their own backend; every other key applies from its next use, and a
   * change while sessions are tracked is logged in one line saying which keys take effect when.
   *
   * @param ctx The new context.
   * @param config The new config, if the hello brought one.
   */
  setContext(ctx: LoopContext, config: Config = this.#config): void {
    const change = config === this.#config ? null : describeConfigChange(this.#config, config);
    if (change !== null && this.#sessions.size > 0) {
      this.#deps.log.info(
        `bridge.hello config applies while ${this.#sessions.size} child sessions are tracked: ${change}`,
      );
    }
    this.#ctx = ctx;
    this.#config = config;
    this.#machine = machineConfig(config, this.#deps.server !== undefined, ctx.backend);
    this.#poller?.update();
    this.#warm(ctx.directory);
    // A higher (or no) max_panes frees places for the children already queued.
    this.#admit();
  }

  /** The current context. */
  get context(): LoopContext {
    return this.#ctx;
  }

  /** The current config. */
  get config(): Config {
    return this.#config;
  }

  /** A snapshot of every record (for tests and `list`). */
  records(): SessionRecord[] {
    return this.#all().map((s) => s.record);
  }

  /** Whether status polls are scheduled or in flight. */
  get polling(): boolean {
    return this.#poller?.running ?? false;
  }

  /**
   * Handles one session event (its ids were checked where it was decoded).
   *
   * @param input The event.
   */
  handle(input: LoopInput): void {
    if (this.#shuttingDown) return;
    switch (input.kind) {
      case "created":
      case "updated": {
        const { info } = input;
        if (!info.parentId) return; // root sessions get no pane, silently
        if (!this.#sessions.has(info.id) && !this.#drives(info.parentId)) {
          if (input.kind === "created") this.#notDriven(info.id, info.parentId);
          return;
        }
        const title = cleanTitle(info.title);
        const agent = agentOf(info.title, info.agent);
        if (!this.#sessions.has(info.id)) {
          if (this.#sessions.size >= this.#config.max_tracked_sessions) {
            return this.#overLimit(info.id, input.kind === "created");
          }
          const record = newRecord(info.id, info.parentId, title, info.directory, agent);
          this.#sessions.set(info.id, newSession(record));
        } else {
          this.#feed(info.id, {
            type: "updated",
            title,
            ...(info.directory ? { directory: info.directory } : {}),
            ...(agent === undefined ? {} : { agent }),
          });
        }
        if (input.kind === "created") {
          this.#warm(directoryOf(this.#sessions.get(info.id)!.record, this.#env()));
          this.#feed(info.id, { type: "created" });
        }
        return;
      }
      case "deleted":
        if (this.#views.forget(input.info.id)) this.#release(input.info.id);
        return this.#feedKnown(input.info.id, { type: "deleted" });
      case "view":
        return this.#view(input.sessionId);
      case "status":
        // 2.x ends a failed turn in one event; the machine hears the error, then the idle.
        if (input.failed) this.#feedKnown(input.sessionId, { type: "error" });
        return this.#feedKnown(input.sessionId, {
          type: "status",
          status: input.status,
          ...(input.retry === undefined ? {} : { retry: input.retry }),
        });
      case "error":
        return this.#feedKnown(input.sessionId, { type: "error" });
      case "job":
        return this.#feedKnown(input.sessionId, { type: "job", running: input.running });
      case "attention":
        return this.#feedKnown(input.sessionId, {
          type: "attention",
          requestId: input.requestId,
          what: input.what,
          open: input.open,
        });
      default: {
        const never: never = input;
        throw new TypeError(`Unknown loop input ${JSON.stringify(never)}`);
      }
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
    if (this.#sessions.has(pane.sessionId)) return false;
    // Only a pane of this bridge's own server: its polls (with this bridge's credentials) must
    // be about the adopted session, and a record naming another server gets none of them.
    const origin = originOf(this.#ctx.serverUrl);
    if (origin === null || originOf(pane.server) !== origin) return false;
    if (this.#sessions.size >= this.#config.max_tracked_sessions) return false;
    const session = newSession(newRecord(pane.sessionId, parentId, pane.title, pane.directory));
    // The recorded pid is trusted only while its start stamp still matches.
    const { pid: _pid, pidStart: _start, ...rest } = pane;
    const trusted = pane.pid !== undefined && pane.pidStart !== undefined &&
      this.#deps.processes.startTime(pane.pid) === pane.pidStart;
    session.pane = { backend, record: { ...(trusted ? pane : rest), owner: this.#deps.owner } };
    this.#sessions.set(pane.sessionId, session);
    this.#feed(pane.sessionId, { type: "adopted", paneId: pane.paneId, backend: backend.name });
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
   * @param retry Busy, retrying: the attempt (0: not known).
   */
  observe(
    sessionId: SessionId,
    status: PolledStatus,
    at: number = this.#deps.clock.now(),
    retry?: number,
  ): void {
    if (this.#shuttingDown || status === "unknown") return;
    this.#feed(sessionId, {
      type: "poll",
      status,
      at,
      ...(status === "busy" && retry !== undefined ? { retry } : {}),
    });
  }

  /**
   * Applies what a server's lists of pending requests said, to the sessions polled with them:
   * each one's open requests become the ones the lists name (none: it waits for nothing). A
   * request whose id is not of the expected form is left out.
   *
   * @param sessionIds The sessions polled in the lists' directory.
   * @param list The requests (the server's strings; those of other sessions are ignored).
   * @param at When the lists were asked for; older than the last attention event: ignored.
   */
  observePending(
    sessionIds: readonly SessionId[],
    list: PendingList,
    at: number = this.#deps.clock.now(),
  ): void {
    if (this.#shuttingDown) return;
    const bySession = new Map<string, Array<{ id: string; what: AttentionKind }>>();
    for (const r of list.requests) {
      if (!REQUEST_ID.test(r.requestId)) continue;
      const of = bySession.get(r.sessionId) ?? [];
      of.push({ id: r.requestId, what: r.kind });
      bySession.set(r.sessionId, of);
    }
    for (const id of sessionIds) {
      this.#feed(id, { type: "pending", requests: bySession.get(id) ?? [], at });
    }
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
      this.#warming.abort();
      for (const id of this.#views.all()) this.#release(id);
      this.#poller?.stop();
      this.#effects.stop();
      for (const id of [...this.#sessions.keys()]) this.#feed(id, { type: "shutdown", closePanes });
    }
    await this.#whenSettled();
    await this.#effects.finish();
    return this.#effects.closedAtShutdown;
  }

  /** The panes this loop holds (open, closing or stuck), for `bye` accounting and tests. */
  panes(): Array<{ sessionId: string; paneId: string; state: string }> {
    return this.records().flatMap((r) =>
      hasPane(r.state) ? [{ sessionId: r.id, paneId: r.state.paneId, state: r.state.kind }] : []
    );
  }

  /**
   * Whether a child of `parentId` is this bridge's: always with `scope: "server"`; with
   * `scope: "tui"`, when the parent is a child this bridge tracks, or a session its TUI showed
   * and no other live bridge's TUI showed since.
   */
  #drives(parentId: SessionId): boolean {
    if (this.#ctx.scope !== "tui" || this.#sessions.has(parentId)) return true;
    if (!this.#views.has(parentId)) return false;
    const holder = this.#holder(parentId);
    return holder === null || holder === this.#deps.owner ||
      !ownerAlive(this.#deps.processes, holder);
  }

  /** A child this bridge does not drive: no record, no pane, said once at creation. */
  #notDriven(id: SessionId, parentId: SessionId): void {
    const elsewhere = this.#views.has(parentId);
    this.#deps.log.debug(`${id}: not this TUI's child (parent ${parentId})`);
    this.#deps.emit({
      type: "pane.skipped",
      sessionID: id,
      reason: "not_driven",
      hint: elsewhere
        ? "Another OpenCode TUI showed its parent session more recently; its pane opens there"
        : "Its parent session is not open in this OpenCode TUI (it runs from another TUI, `opencode run`, the web UI or another machine); open the parent here to see its next children",
    });
  }

  /** The TUI shows `id` now: its next children are this bridge's. */
  #view(id: SessionId): void {
    if (!this.#views.show(id)) return;
    try {
      this.#deps.claims?.claim(id);
    } catch (err) {
      this.#deps.log.warn(`cannot record that this TUI shows ${id}: ${(err as Error).message}`);
    }
  }

  #holder(id: SessionId): string | null {
    try {
      return this.#deps.claims?.holder(id) ?? null;
    } catch {
      return null;
    }
  }

  #release(id: SessionId): void {
    try {
      this.#deps.claims?.release(id);
    } catch { /* a claim left behind names a bridge that is gone: it counts for nothing */ }
  }

  /** A new child beyond `max_tracked_sessions`: no record, no pane, said once at creation. */
  #overLimit(id: SessionId, created: boolean): void {
    const max = this.#config.max_tracked_sessions;
    this.#deps.log.debug(`${id}: not tracked: ${max} sessions are (max_tracked_sessions)`);
    if (!created) return;
    this.#deps.emit({
      type: "pane.skipped",
      sessionID: id,
      reason: "limit",
      hint: `This bridge already tracks ${max} child sessions; raise max_tracked_sessions`,
    });
  }

  /**
   * Has the server load what `opencode attach` asks for first (`OpencodeClient.warm`), once per
   * server and directory, in the background: a fresh server takes seconds to answer those the
   * first time, and the first child's pane would wait for them. A failure is retried at the
   * next chance (a later `bridge.hello` or child).
   */
  #warm(directory: string): void {
    if (this.#shuttingDown) return;
    const client = this.#serverClient();
    if (!client?.warm) return;
    const key = `${client.url}\0${directory}`;
    if (this.#warmed.has(key)) return;
    this.#warmed.add(key);
    const { clock, log } = this.#deps;
    const t0 = clock.now();
    client.warm({ directory, signal: this.#warming.signal, timeoutMs: WARM_TIMEOUT_MS }).then(
      () => log.debug(`warmed ${client.url} for ${directory} in ${clock.now() - t0} ms`),
      (err) => {
        this.#warmed.delete(key);
        log.debug(`cannot warm ${client.url} for ${directory}: ${(err as Error).message}`);
      },
    );
  }

  #feedKnown(id: SessionId, event: MachineEvent): void {
    if (!this.#sessions.has(id)) {
      this.#deps.log.debug(`ignoring ${event.type} for untracked session ${id}`);
      return;
    }
    this.#feed(id, event);
  }

  /** Advances one session's machine and runs the effects it returns. */
  #feed(id: SessionId, event: MachineEvent): void {
    const session = this.#sessions.get(id);
    if (!session) return;
    const before = session.record;
    const t = transition(before, event, this.#deps.clock.now(), this.#machine);
    session.record = t.record;
    if (t.record.state.kind !== before.state.kind) {
      this.#deps.log.debug(`${id}: ${before.state.kind} -> ${t.record.state.kind} (${event.type})`);
    }
    for (const effect of t.effects) this.#effects.run(session, effect);
    this.#admit();
    this.#checkSettled();
    this.#poller?.update();
  }

  /**
   * Gives queued children the panes that are free (`max_panes`) and tells the others their
   * place, once; `admissions` decides, in queue order.
   */
  #admit(): void {
    if (this.#admitting || this.#shuttingDown) return;
    this.#admitting = true;
    try {
      const { admit, waiting } = admissions(this.records(), this.#machine.maxPanes);
      for (const id of admit) this.#feed(id, { type: "admitted" });
      for (const { id, position } of waiting) this.#feed(id, { type: "waiting", position });
    } finally {
      this.#admitting = false;
    }
  }

  #all(): Session[] {
    return [...this.#sessions.values()];
  }

  /** What the effect runners work with now. */
  #env(): LoopEnv {
    return {
      deps: this.#deps,
      ctx: this.#ctx,
      config: this.#config,
      client: () => this.#serverClient(),
      versions: this.#versions,
    };
  }

  /** The client for the current server, or null without a server URL or client factory. */
  #serverClient(): OpencodeClient | null {
    const { serverUrl, auth } = this.#ctx;
    if (!serverUrl || !this.#deps.server) return null;
    // The key holds the password only in memory, to notice changed credentials; never logged.
    const key = `${serverUrl}\0${this.#ctx.line ?? ""}\0${auth?.username ?? ""}\0${
      auth?.password ?? ""
    }`;
    if (this.#client?.key !== key) {
      const before = this.#client;
      this.#client = {
        key,
        url: serverUrl,
        password: auth?.password ?? "",
        client: this.#deps.server(serverUrl, auth, this.#ctx.line),
      };
      // The same server with another password: the panes' programs hold the old one.
      if (before && before.url === serverUrl && before.password !== (auth?.password ?? "")) {
        this.#deps.log.info(`the credentials for ${serverUrl} changed: its panes are restarted`);
        queueMicrotask(() => {
          for (const s of this.#all()) if (s.pane) this.#feed(s.record.id, { type: "stale" });
        });
      }
    }
    return this.#client.client;
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

  #inFlight(): boolean {
    return this.#all().some((s) => isBusy(s.record.state));
  }
}
