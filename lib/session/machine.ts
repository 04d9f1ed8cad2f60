/**
 * The life of one child session's pane as a pure state machine.
 *
 * {@linkcode transition} takes a record, an event and the time, and returns the next record and
 * the effects to run as data. It does no I/O, reads no clock and never throws, so every
 * transition is tested without a multiplexer. The session loop runs the effects and feeds their
 * outcomes back as events.
 *
 * States:
 * - `dormant`: no pane. A busy signal (a change to busy) opens one; a new record can also adopt
 *   the pane a dead bridge left for this (busy) session.
 * - `awaiting`: waiting for the server to know the child before the pane attaches (readiness);
 *   a delete or shutdown cancels the wait, and no pane opens.
 * - `opening`: a spawn is in flight; idle, delete and shutdown signals wait in `idleSince`/`then`.
 * - `open`: the pane is up; `idleSince` set means an idle close is pending. Once the idle delay
 *   and the minimum lifetime have passed (and no background job runs), the loop asks the server
 *   for the child's status at once (`recheck`, one bounded read; `rechecking` while it is out):
 *   busy or retry cancels the close, a 404 closes it as deleted, and idle, absent (after the idle
 *   signal that started all this) or no answer within the bound closes it. No poll tick is
 *   waited for. A busy signal or poll cancels a pending close at any time; an idle or absent
 *   poll changes nothing (absence alone is never a reason to close).
 * - `closing`: a close is in flight (or waits to be retried); `then` says what follows.
 * - `stuck`: every close attempt failed; reported, kept for `list` and `cleanup`.
 * - `deleted`: the tombstone; every later event is ignored.
 *
 * @module
 */

import type { CloseReason, OutMessage, SkipReason } from "../bridge/protocol.ts";

/** Why a session has no pane. */
export type Dormancy = "new" | "idle" | "gone" | "failed" | "skipped" | "shutdown";

/** What happens after a close completes. */
export type AfterClose = "dormant" | "reopen" | "delete" | "exit";

/** Where a session's pane is. */
export type SessionState =
  | { readonly kind: "dormant"; readonly why: Dormancy }
  | { readonly kind: "awaiting"; readonly idleSince: number | null }
  | {
    readonly kind: "opening";
    readonly idleSince: number | null;
    readonly then: "keep" | "delete" | "shutdown";
  }
  | {
    readonly kind: "open";
    readonly paneId: string;
    readonly openedAt: number;
    readonly idleSince: number | null;
    /** The status read that confirms the idle close is out. */
    readonly rechecking: boolean;
  }
  | {
    readonly kind: "closing";
    readonly paneId: string;
    readonly reason: CloseReason;
    readonly attempt: number;
    readonly waiting: boolean;
    readonly then: AfterClose;
  }
  | { readonly kind: "stuck"; readonly paneId: string; readonly deleted: boolean }
  | { readonly kind: "deleted" };

/** Everything muxbridge knows of one child session. */
export interface SessionRecord {
  /** The session id (validated). */
  readonly id: string;
  /** The parent session. */
  readonly parentId: string;
  /** The clean pane title. */
  readonly title: string;
  /** The session's directory, when an event gave one. */
  readonly directory?: string;
  /** The last status seen; statuses are level-triggered. */
  readonly activity: "unknown" | "busy" | "idle";
  /** When `activity` last changed; a poll sent before it is stale and ignored. */
  readonly activityAt: number;
  /** A background job of this session runs (an idle close waits for it). */
  readonly jobRunning: boolean;
  /** Where the pane is. */
  readonly state: SessionState;
}

/** What the machine reacts to. */
export type MachineEvent =
  | { readonly type: "created" }
  | { readonly type: "updated"; readonly title: string; readonly directory?: string }
  | { readonly type: "status"; readonly status: "busy" | "idle" }
  | { readonly type: "deleted" }
  | { readonly type: "job"; readonly running: boolean }
  | { readonly type: "timer" }
  | {
    readonly type: "spawned";
    readonly paneId: string;
    readonly backend: string;
    /** The backend applied the layout with the open: no layout pass follows. */
    readonly arranged?: boolean;
  }
  /** A busy session's pane left by a bridge that died, taken over by this one. */
  | { readonly type: "adopted"; readonly paneId: string; readonly backend: string }
  | {
    readonly type: "spawn_failed";
    readonly code: string;
    readonly message: string;
    readonly skip?: { readonly reason: SkipReason; readonly hint: string };
  }
  | { readonly type: "closed" }
  | { readonly type: "close_failed"; readonly code: string; readonly message: string }
  | {
    readonly type: "recheck";
    readonly status: "busy" | "idle" | "absent" | "deleted" | "unknown";
  }
  | { readonly type: "poll"; readonly status: "busy" | "idle" | "absent"; readonly at: number }
  | { readonly type: "ready" }
  | { readonly type: "unready"; readonly reason: SkipReason; readonly hint: string }
  | { readonly type: "gone"; readonly paneId: string }
  | { readonly type: "shutdown"; readonly closePanes: boolean };

/** What the loop must do; every effect concerns the record's own session. */
export type Effect =
  | { readonly type: "await_ready" }
  | { readonly type: "cancel_ready" }
  | { readonly type: "spawn" }
  | { readonly type: "close"; readonly paneId: string; readonly reason: CloseReason }
  | { readonly type: "retitle"; readonly paneId: string; readonly title: string }
  | { readonly type: "arm"; readonly at: number }
  | { readonly type: "disarm" }
  | { readonly type: "recheck" }
  | { readonly type: "layout" }
  | { readonly type: "emit"; readonly message: OutMessage };

/** The timing the machine works with. */
export interface MachineConfig {
  /** `idle_close_delay_ms`. */
  readonly idleCloseDelayMs: number;
  /** `min_pane_lifetime_ms`. */
  readonly minPaneLifetimeMs: number;
  /** Close attempts after the first before giving up. */
  readonly closeRetries: number;
  /** Pause before the first retry; it doubles each time. */
  readonly closeRetryDelayMs: number;
  /** Confirm an idle close with a status read when it is due (a server is known). */
  readonly recheck: boolean;
  /** Wait until the server knows the child before spawning (`await_ready`). */
  readonly readiness: boolean;
}

/** The result of a transition. */
export interface Transition {
  /** The next record. */
  readonly record: SessionRecord;
  /** The effects to run, in order. */
  readonly effects: readonly Effect[];
}

/**
 * A new record for a child session, with no pane yet.
 *
 * @param id The validated session id.
 * @param parentId The parent's id.
 * @param title The clean title.
 * @param directory The session's directory.
 * @returns The record, `dormant` ("new").
 */
export function newRecord(
  id: string,
  parentId: string,
  title: string,
  directory?: string,
): SessionRecord {
  const record: SessionRecord = {
    id,
    parentId,
    title,
    activity: "unknown",
    activityAt: Number.NEGATIVE_INFINITY,
    jobRunning: false,
    state: { kind: "dormant", why: "new" },
  };
  return directory === undefined ? record : { ...record, directory };
}

/** When an idle close of an open pane is due. */
export function idleDueAt(
  state: { openedAt: number; idleSince: number },
  config: MachineConfig,
): number {
  return Math.max(
    state.idleSince + config.idleCloseDelayMs,
    state.openedAt + config.minPaneLifetimeMs,
  );
}

/** Whether the record holds a pane muxbridge must still account for. */
export function hasPane(state: SessionState): state is Extract<SessionState, { paneId: string }> {
  return state.kind === "open" || state.kind === "closing" || state.kind === "stuck";
}

/** Whether the session has a pane or is getting one (what status polls are for). */
export function isTracked(state: SessionState): boolean {
  return state.kind === "awaiting" || state.kind === "opening" || state.kind === "open" ||
    state.kind === "closing";
}

/** Whether an operation is in flight (the loop waits for these at shutdown). */
export function isBusy(state: SessionState): boolean {
  return state.kind === "opening" || state.kind === "closing";
}

const emit = (message: OutMessage): Effect => ({ type: "emit", message });

/**
 * Advances a record by one event.
 *
 * @param record The current record.
 * @param event What happened.
 * @param now The current time (clock milliseconds).
 * @param config Timing.
 * @returns The next record and the effects to run.
 *
 * @example A created child waits for the server, then opens a pane
 * ```ts
 * import { newRecord, transition } from "./machine.ts";
 * const config = {
 *   idleCloseDelayMs: 3000, minPaneLifetimeMs: 3000, closeRetries: 2, closeRetryDelayMs: 200,
 *   recheck: true, readiness: true,
 * };
 * let t = transition(newRecord("ses_c", "ses_p", "child"), { type: "created" }, 0, config);
 * t.effects; // [{ type: "await_ready" }]
 * t = transition(t.record, { type: "ready" }, 40, config);
 * t.record.state.kind; // "opening"
 * t.effects; // [{ type: "spawn" }]
 * ```
 */
export function transition(
  record: SessionRecord,
  event: MachineEvent,
  now: number,
  config: MachineConfig,
): Transition {
  const s = record.state;
  const to = (state: SessionState, ...effects: Effect[]): Transition => ({
    record: { ...record, state },
    effects,
  });
  const same: Transition = { record, effects: [] };
  const sid = record.id;

  if (s.kind === "deleted") return same;

  switch (event.type) {
    case "created":
      return s.kind === "dormant" && s.why === "new" ? startOpen(record, null, config) : same;

    case "updated": {
      const next: SessionRecord = {
        ...record,
        title: event.title,
        ...(event.directory === undefined ? {} : { directory: event.directory }),
      };
      const retitle = event.title !== record.title && s.kind === "open";
      return {
        record: next,
        effects: retitle ? [{ type: "retitle", paneId: s.paneId, title: event.title }] : [],
      };
    }

    case "status": {
      if (record.activity === event.status) return same;
      const r: SessionRecord = { ...record, activity: event.status, activityAt: now };
      const go = (state: SessionState, ...effects: Effect[]): Transition => ({
        record: { ...r, state },
        effects,
      });
      const keep: Transition = { record: r, effects: [] };
      if (event.status === "busy") {
        switch (s.kind) {
          case "dormant":
            return s.why === "shutdown" ? keep : startOpen(r, null, config);
          case "awaiting":
          case "opening":
            return go({ ...s, idleSince: null });
          case "open":
            return go({ ...s, idleSince: null, rechecking: false }, {
              type: "disarm",
            });
          case "closing":
            return s.then === "dormant" && s.reason === "idle"
              ? go({ ...s, then: "reopen" })
              : keep;
          default:
            return keep;
        }
      }
      switch (s.kind) {
        case "awaiting":
        case "opening":
          return go({ ...s, idleSince: now });
        case "open":
          return go({ ...s, idleSince: now, rechecking: false }, {
            type: "arm",
            at: idleDueAt({ openedAt: s.openedAt, idleSince: now }, config),
          });
        case "closing":
          return s.then === "reopen" ? go({ ...s, then: "dormant" }) : keep;
      }
      return keep;
    }

    case "poll":
      // A poll sent before the last status event is older news than that event. Busy (or
      // retry) cancels a pending idle close and reopens like a busy event; idle or absent
      // changes nothing: the close is confirmed by its own status read when it is due, and
      // absence alone never closes anything.
      if (event.at < record.activityAt || event.status !== "busy") return same;
      return transition(record, { type: "status", status: "busy" }, now, config);

    case "ready":
      return s.kind === "awaiting"
        ? to({ kind: "opening", idleSince: s.idleSince, then: "keep" }, { type: "spawn" })
        : same;

    case "unready":
      return s.kind === "awaiting"
        ? to(
          { kind: "dormant", why: "skipped" },
          emit({ type: "pane.skipped", sessionID: sid, reason: event.reason, hint: event.hint }),
        )
        : same;

    case "deleted":
      switch (s.kind) {
        case "dormant":
          return to({ kind: "deleted" }, { type: "disarm" });
        case "awaiting":
          return to({ kind: "deleted" }, { type: "cancel_ready" });
        case "opening":
          return to({ ...s, then: "delete" });
        case "open":
          return startClose(record, s.paneId, "deleted", "delete");
        case "closing":
          return to({ ...s, then: "delete" });
        case "stuck":
          return to({ ...s, deleted: true });
      }
      return same;

    case "job": {
      const r: SessionRecord = { ...record, jobRunning: event.running };
      if (event.running || s.kind !== "open" || s.idleSince === null || s.rechecking) {
        return { record: r, effects: [] };
      }
      // The job that held the close back ended: close now if the idle close is already due.
      return idleDue(r, s, now, config);
    }

    case "timer":
      if (s.kind === "open" && s.idleSince !== null && !s.rechecking) {
        return idleDue(record, s, now, config);
      }
      if (s.kind === "closing" && s.waiting) {
        return to({ ...s, waiting: false }, { type: "close", paneId: s.paneId, reason: s.reason });
      }
      return same;

    case "recheck":
      if (s.kind !== "open" || !s.rechecking) return same;
      switch (event.status) {
        case "busy":
          return {
            record: {
              ...record,
              activity: "busy",
              activityAt: now,
              state: { ...s, idleSince: null, rechecking: false },
            },
            effects: [],
          };
        case "deleted":
          // `GET /session/:id` said 404: the session is gone, as if session.deleted came.
          return startClose(record, s.paneId, "deleted", "delete");
        default:
          // Idle, absent after an idle signal, or the server cannot tell: the idle signal stands.
          return startClose(record, s.paneId, "idle", "dormant");
      }

    case "adopted":
      // Only a session this bridge has not seen yet: one it tracks already has its own pane.
      if (s.kind !== "dormant" || s.why !== "new") return same;
      return {
        record: {
          ...record,
          activity: "busy",
          activityAt: now,
          state: openState(event.paneId, now, null),
        },
        effects: [paneOpened(sid, event), { type: "layout" }],
      };

    case "spawned":
      if (s.kind !== "opening") return same;
      {
        const opened = paneOpened(sid, event);
        if (s.then === "delete" || s.then === "shutdown") {
          const reason: CloseReason = s.then === "delete" ? "deleted" : "shutdown";
          return to(
            {
              kind: "closing",
              paneId: event.paneId,
              reason,
              attempt: 1,
              waiting: false,
              then: s.then === "delete" ? "delete" : "exit",
            },
            opened,
            { type: "close", paneId: event.paneId, reason },
          );
        }
        const state = openState(event.paneId, now, s.idleSince);
        const effects: Effect[] = event.arranged ? [opened] : [opened, { type: "layout" }];
        if (s.idleSince !== null) {
          effects.push({
            type: "arm",
            at: idleDueAt({ openedAt: now, idleSince: s.idleSince }, config),
          });
        }
        return to(state, ...effects);
      }

    case "spawn_failed": {
      if (s.kind !== "opening") return same;
      const report = event.skip
        ? emit({
          type: "pane.skipped",
          sessionID: sid,
          reason: event.skip.reason,
          hint: event.skip.hint,
        })
        : emit({
          type: "pane.failed",
          sessionID: sid,
          op: "open",
          code: event.code,
          message: event.message,
        });
      if (s.then === "delete") return to({ kind: "deleted" }, report);
      return to({
        kind: "dormant",
        why: s.then === "shutdown" ? "shutdown" : event.skip ? "skipped" : "failed",
      }, report);
    }

    case "closed": {
      if (s.kind !== "closing") return same;
      const closed = emit({
        type: "pane.closed",
        sessionID: sid,
        paneId: s.paneId,
        reason: s.reason,
      });
      switch (s.then) {
        case "delete":
          return to({ kind: "deleted" }, closed, { type: "layout" });
        case "reopen": {
          const t = startOpen(record, null, config);
          return { record: t.record, effects: [closed, ...t.effects] };
        }
        case "exit":
          return to({ kind: "dormant", why: "shutdown" }, closed);
        case "dormant":
          return to({ kind: "dormant", why: "idle" }, closed, { type: "layout" });
      }
      return same;
    }

    case "close_failed": {
      if (s.kind !== "closing") return same;
      if (s.attempt <= config.closeRetries) {
        const delay = config.closeRetryDelayMs * 2 ** (s.attempt - 1);
        return to({ ...s, attempt: s.attempt + 1, waiting: true }, {
          type: "arm",
          at: now + delay,
        });
      }
      return to(
        { kind: "stuck", paneId: s.paneId, deleted: s.then === "delete" },
        emit({
          type: "pane.failed",
          sessionID: sid,
          op: "close",
          code: event.code,
          message: event.message,
        }),
      );
    }

    case "gone":
      if (s.kind !== "open" || s.paneId !== event.paneId) return same;
      return to(
        { kind: "dormant", why: "gone" },
        { type: "disarm" },
        emit({ type: "pane.closed", sessionID: sid, paneId: s.paneId, reason: "gone" }),
        { type: "layout" },
      );

    case "shutdown":
      if (s.kind === "awaiting") {
        // No new pane opens while the bridge ends, whatever close_on_exit says.
        return to({ kind: "dormant", why: "shutdown" }, { type: "cancel_ready" });
      }
      if (!event.closePanes) {
        return s.kind === "opening" && s.then === "shutdown" ? to({ ...s, then: "keep" }) : same;
      }
      switch (s.kind) {
        case "opening":
          return to({ ...s, then: s.then === "delete" ? "delete" : "shutdown" });
        case "open":
          return startClose(record, s.paneId, "shutdown", "exit");
        case "closing":
          return s.waiting
            ? to({ ...s, waiting: false, then: s.then === "delete" ? "delete" : "exit" }, {
              type: "close",
              paneId: s.paneId,
              reason: s.reason,
            })
            : to({ ...s, then: s.then === "delete" ? "delete" : "exit" });
        case "stuck":
          return to(
            {
              kind: "closing",
              paneId: s.paneId,
              reason: "shutdown",
              attempt: config.closeRetries + 1,
              waiting: false,
              then: s.deleted ? "delete" : "exit",
            },
            { type: "close", paneId: s.paneId, reason: "shutdown" },
          );
        default:
          return to({ kind: "dormant", why: "shutdown" });
      }

    default: {
      const never: never = event;
      throw new TypeError(`Unknown machine event ${JSON.stringify(never)}`);
    }
  }
}

/** The state of a pane that just came up (spawned or adopted). */
function openState(paneId: string, now: number, idleSince: number | null): SessionState {
  return { kind: "open", paneId, openedAt: now, idleSince, rechecking: false };
}

/** The report of a pane that just came up. */
function paneOpened(sid: string, pane: { paneId: string; backend: string }): Effect {
  return emit({ type: "pane.opened", sessionID: sid, paneId: pane.paneId, backend: pane.backend });
}

/** Opens a pane: through readiness when the server is consulted, else straight to the spawn. */
function startOpen(
  record: SessionRecord,
  idleSince: number | null,
  config: MachineConfig,
): Transition {
  return config.readiness
    ? {
      record: { ...record, state: { kind: "awaiting", idleSince } },
      effects: [{ type: "await_ready" }],
    }
    : {
      record: { ...record, state: { kind: "opening", idleSince, then: "keep" } },
      effects: [{ type: "spawn" }],
    };
}

function startClose(
  record: SessionRecord,
  paneId: string,
  reason: CloseReason,
  then: AfterClose,
): Transition {
  return {
    record: {
      ...record,
      state: { kind: "closing", paneId, reason, attempt: 1, waiting: false, then },
    },
    effects: [{ type: "disarm" }, { type: "close", paneId, reason }],
  };
}

/** An idle close whose timer fired or whose job ended: confirm it at once, or close. */
function idleDue(
  record: SessionRecord,
  s: Extract<SessionState, { kind: "open" }>,
  now: number,
  config: MachineConfig,
): Transition {
  if (s.idleSince === null) return { record, effects: [] };
  const at = { openedAt: s.openedAt, idleSince: s.idleSince };
  const due = idleDueAt(at, config);
  if (now < due) return { record, effects: [{ type: "arm", at: due }] };
  // A running background job vetoes the close; its end re-evaluates (the `job` event).
  if (record.jobRunning) return { record, effects: [{ type: "disarm" }] };
  if (config.recheck) {
    return {
      record: { ...record, state: { ...s, rechecking: true } },
      effects: [{ type: "disarm" }, { type: "recheck" }],
    };
  }
  return startClose(record, s.paneId, "idle", "dormant");
}
