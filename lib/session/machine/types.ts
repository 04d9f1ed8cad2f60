/**
 * The machine's data: a session's record and state union, the events it reacts to, the effects
 * it asks for, and its timing.
 *
 * @module
 */

import type { PaneId, SessionId } from "../../sys/validate.ts";
import type { AttentionKind, CloseReason, PaneMessage, SkipReason } from "../events.ts";

/**
 * Why a session has no pane. `unreachable`: skipped because the server gave no answer in time
 * (a slow or restarting server, a loaded machine); its status is polled, and a poll that finds it
 * busy opens the pane, as a busy signal would. `skipped`: any other reason a pane cannot be.
 */
export type Dormancy =
  | "new"
  | "idle"
  | "gone"
  | "failed"
  | "skipped"
  | "unreachable"
  | "excluded"
  | "shutdown";

/** What a child is doing, as far as muxbridge can tell. */
export type LiveState = "unknown" | "busy" | "retry" | "idle" | "error";

/** A child's live state, for its pane and for `list`. */
export interface Live {
  /** The state. */
  readonly state: LiveState;
  /** For `retry`: the attempt, from 1. */
  readonly attempt?: number;
  /** When this state began (clock ms). */
  readonly since: number;
  /** When a status event last spoke of the child: a poll sent before it is older news. */
  readonly at: number;
}

/** A request the child waits on the user for. */
export interface OpenRequest {
  /** The request's id. */
  readonly id: string;
  /** What it asks for. */
  readonly what: AttentionKind;
  /** When muxbridge learnt of it (clock ms). */
  readonly since: number;
}

/**
 * What a child waits on the user for: the permission requests and questions it has open. While
 * one is open the child is `waiting` (its pane says so), whatever its status says (OpenCode keeps
 * it busy). Each ends with its reply, rejection or cancellation; all end when the child goes idle
 * or is deleted, and a server's list of pending requests corrects a missed event either way.
 */
export interface Attention {
  /** The open requests, oldest first (at most {@linkcode MAX_OPEN_REQUESTS}). */
  readonly requests: readonly OpenRequest[];
  /** When an attention event last spoke of the child: a list or poll sent before is older news. */
  readonly at: number;
  /** This wait was announced (the `attend` effect); the next wait is announced anew. */
  readonly announced: boolean;
}

/** The most open requests one child keeps; more are not recorded (it waits all the same). */
export const MAX_OPEN_REQUESTS = 64;

/** What a pane can show: the live state, `waiting` (for the user) or `failed` (its program). */
export type ViewState = LiveState | "waiting" | "failed";

/** What a pane shows of its child: the title (marker included) and the state. */
export interface PaneView {
  /** The pane title: the live-state marker (unless `status_in_title` is off) and the title. */
  readonly title: string;
  /**
   * The state; `waiting`: a permission request or question of the child waits for the user;
   * `failed`: the pane's program failed and the pane is held to show why.
   */
  readonly state: ViewState;
  /** For `waiting`: what the oldest open request asks for. */
  readonly waitingFor?: AttentionKind;
  /** For `retry`: the attempt. */
  readonly attempt?: number;
  /** For `failed`: the program's exit code. */
  readonly exitCode?: number;
  /** When the state began (clock ms). */
  readonly since: number;
}

/** The view a pane was last given, and the rate limit around it. */
export interface Shown {
  /** The view sent last (null: none known, such as for an adopted pane). */
  readonly view: PaneView | null;
  /** When it was sent (clock ms). */
  readonly at: number;
  /** The status timer is armed: the next view goes out when it fires (the last one wins). */
  readonly due: boolean;
}

/** What happens after a close completes. */
export type AfterClose = "dormant" | "reopen" | "delete" | "exit";

/** Where a session's pane is. */
export type SessionState =
  | { readonly kind: "dormant"; readonly why: Dormancy }
  /** Waiting for a free pane (`max_panes`); `reported`: its `pane.skipped` went out. */
  | { readonly kind: "queued"; readonly since: number; readonly reported: boolean }
  | { readonly kind: "awaiting"; readonly idleSince: number | null }
  | {
    readonly kind: "opening";
    readonly idleSince: number | null;
    readonly then: "keep" | "delete" | "shutdown";
  }
  | {
    readonly kind: "open";
    readonly paneId: PaneId;
    readonly openedAt: number;
    readonly idleSince: number | null;
    /** The status read that confirms the idle close is out. */
    readonly rechecking: boolean;
    /** What the pane shows. */
    readonly shown: Shown;
  }
  /** The pane's program failed: the pane stays, showing why, until `failed_pane_hold_ms` ends. */
  | {
    readonly kind: "held";
    readonly paneId: PaneId;
    /** The program's exit code. */
    readonly exitCode: number;
    /** When the failure was seen. */
    readonly since: number;
    /** What the pane shows. */
    readonly shown: Shown;
  }
  | {
    readonly kind: "closing";
    readonly paneId: PaneId;
    readonly reason: CloseReason;
    readonly attempt: number;
    readonly waiting: boolean;
    readonly then: AfterClose;
  }
  | { readonly kind: "stuck"; readonly paneId: PaneId; readonly deleted: boolean }
  | { readonly kind: "deleted" };

/** A state kind. */
export type StateKind = SessionState["kind"];

/** The state of one kind. */
export type StateOf<K extends StateKind> = Extract<SessionState, { kind: K }>;

/** Everything muxbridge knows of one child session. */
export interface SessionRecord {
  /** The session id. */
  readonly id: SessionId;
  /** The parent session (for the log; "unknown" for an adopted pane whose server did not say). */
  readonly parentId: string;
  /** The clean pane title. */
  readonly title: string;
  /** The session's directory, when an event gave one. */
  readonly directory?: string;
  /** The agent the child runs (`explore`), when an event said; `exclude` patterns match it. */
  readonly agent?: string;
  /** The last status seen; statuses are level-triggered. */
  readonly activity: "unknown" | "busy" | "idle";
  /** When `activity` last changed; a poll sent before it is stale and ignored. */
  readonly activityAt: number;
  /** A background job of this session runs (an idle close waits for it). */
  readonly jobRunning: boolean;
  /** What the child is doing (what its pane shows). */
  readonly live: Live;
  /** What the child waits on the user for (its pane shows `waiting` while any is open). */
  readonly attention: Attention;
  /** Where the pane is. */
  readonly state: SessionState;
}

/** What the machine reacts to. */
export type MachineEvent =
  | { readonly type: "created" }
  | {
    readonly type: "updated";
    readonly title: string;
    readonly directory?: string;
    readonly agent?: string;
  }
  /** `retry`: busy, retrying a failed model request (the attempt). */
  | { readonly type: "status"; readonly status: "busy" | "idle"; readonly retry?: number }
  /** `session.error`: shown until the child is busy again. */
  | { readonly type: "error" }
  /** A request for the user opened or ended (see {@linkcode Attention}). */
  | {
    readonly type: "attention";
    readonly requestId: string;
    readonly what: AttentionKind;
    readonly open: boolean;
  }
  /**
   * The child's requests in the server's lists of pending requests, as a poll sent at `at` saw
   * them (none: it waits for nothing).
   */
  | {
    readonly type: "pending";
    readonly requests: ReadonlyArray<
      { readonly id: string; readonly what: AttentionKind }
    >;
    readonly at: number;
  }
  | { readonly type: "deleted" }
  | { readonly type: "job"; readonly running: boolean }
  | { readonly type: "timer" }
  | {
    readonly type: "spawned";
    readonly paneId: PaneId;
    readonly backend: string;
    /** The backend applied the layout with the open: no layout pass follows. */
    readonly arranged?: boolean;
    /** The pending record written before the spawn (its pane id), now replaced. */
    readonly pending?: PaneId;
    /** What the pane was opened showing (its title and state). */
    readonly view?: PaneView;
  }
  /** A busy session's pane left by a bridge that died, taken over by this one. */
  | { readonly type: "adopted"; readonly paneId: PaneId; readonly backend: string }
  | {
    readonly type: "spawn_failed";
    readonly code: string;
    readonly message: string;
    readonly skip?: { readonly reason: SkipReason; readonly hint: string };
    /** The multiplexer may still make the pane: the watch looks for it. */
    readonly lost?: boolean;
  }
  | { readonly type: "closed" }
  | { readonly type: "close_failed"; readonly code: string; readonly message: string }
  | {
    readonly type: "recheck";
    readonly status: "busy" | "idle" | "absent" | "deleted" | "unknown";
  }
  | {
    readonly type: "poll";
    /** `running`: active, without saying whether it is retrying (a retry seen stays). */
    readonly status: "busy" | "running" | "idle" | "absent";
    readonly at: number;
    /** Busy, retrying (the attempt). */
    readonly retry?: number;
  }
  | { readonly type: "ready" }
  | { readonly type: "unready"; readonly reason: SkipReason; readonly hint: string }
  | { readonly type: "gone"; readonly paneId: PaneId }
  /**
   * The pane's program exited with a failure (`code` > 0); `present`: the pane is still there
   * (held by its start command), else it went with its program.
   */
  | {
    readonly type: "exited";
    readonly paneId: PaneId;
    readonly code: number;
    readonly present: boolean;
  }
  /** The status timer fired: the view waiting for the rate limit may go out. */
  | { readonly type: "status_due" }
  /** A free pane for a queued child (`max_panes`). */
  | { readonly type: "admitted" }
  /** A queued child's place in the queue (1: next). */
  | { readonly type: "waiting"; readonly position: number }
  | { readonly type: "shutdown"; readonly closePanes: boolean }
  /**
   * The pane's program holds credentials the server no longer takes (the server's password
   * changed: an OpenCode 2.x service restarted with a new one): close it, and open it again
   * with the new ones while the child is busy.
   */
  | { readonly type: "stale" };

/**
 * What the loop must do; every effect concerns the record's own session. Each is one piece of
 * I/O (or bookkeeping of the loop's own) whose outcome, if any, comes back as an event.
 */
export type Effect =
  /** Wait until the server knows the child (`ready` or `unready` follows). */
  | { readonly type: "await_ready" }
  /** Give up the readiness wait in flight. */
  | { readonly type: "cancel_ready" }
  /** Open the pane (queued; `spawned` or `spawn_failed` follows). */
  | { readonly type: "spawn" }
  /** Close the pane (`closed` or `close_failed` follows). */
  | { readonly type: "close"; readonly paneId: PaneId; readonly reason: CloseReason }
  /**
   * Show the child's state on its pane (title, the backend's status place) and in its durable
   * record (`gone` follows when the pane is not there). At most one per `statusIntervalMs`.
   */
  | { readonly type: "set_status"; readonly paneId: PaneId; readonly view: PaneView }
  /** Arm the session's status timer (`status_due` follows). */
  | { readonly type: "arm_status"; readonly at: number }
  /** Disarm it. */
  | { readonly type: "disarm_status" }
  /** Arm the session's timer (`timer` follows). */
  | { readonly type: "arm"; readonly at: number }
  /** Disarm it. */
  | { readonly type: "disarm" }
  /** Read the child's status to confirm an idle close (`recheck` follows). */
  | { readonly type: "recheck" }
  /** Lay out the panes (debounced; run after the queued spawns). */
  | { readonly type: "layout" }
  /** Write a report. */
  | { readonly type: "emit"; readonly message: PaneMessage }
  /**
   * Write the pane's durable record (from what the spawn or adoption gave the loop), then remove
   * the pending record it `replaces` (kept when the write fails: a record of the pane remains).
   */
  | { readonly type: "store_put"; readonly paneId: PaneId; readonly replaces?: PaneId }
  /** Remove a durable record (the pane's, or a pending spawn's); a pane's handle goes too. */
  | { readonly type: "store_remove"; readonly paneId: PaneId }
  /** Mark the pane's durable record stuck, for `list` and `cleanup`. */
  | { readonly type: "store_mark_stuck"; readonly paneId: PaneId }
  /** End the program of a pane that went away, should it have survived it. */
  | { readonly type: "end_survivor"; readonly paneId: PaneId }
  /** Keep the pane watch running (a pane is open, or a failed spawn may still make one). */
  | { readonly type: "watch" }
  /** One more pane closed for the shutdown (`bye`'s `closed`). */
  | { readonly type: "count_close" }
  /**
   * The child started waiting for the user and its pane is open: ring the pane's bell and, as
   * configured, focus the pane and run `attention_command` (the runner rate-limits these across
   * children). At most once per wait.
   */
  | {
    readonly type: "attend";
    readonly paneId: PaneId;
    readonly what: AttentionKind;
  };

/** The timing the machine works with. */
export interface MachineConfig {
  /** `idle_close_delay_ms`. */
  readonly idleCloseDelayMs: number;
  /** `min_pane_lifetime_ms` (or the backend's longer minimum). */
  readonly minPaneLifetimeMs: number;
  /** Close attempts after the first before giving up. */
  readonly closeRetries: number;
  /** `close_retry_delay_ms`: the pause before the first retry; it doubles each time. */
  readonly closeRetryDelayMs: number;
  /** Confirm an idle close with a status read when it is due (a server is known). */
  readonly recheck: boolean;
  /** Wait until the server knows the child before spawning (`await_ready`). */
  readonly readiness: boolean;
  /** `status_in_title`. @default true */
  readonly statusInTitle?: boolean;
  /** The least time between two views sent to one pane. @default 1000 */
  readonly statusIntervalMs?: number;
  /** `failed_pane_hold_ms`. @default 30000 */
  readonly failedHoldMs?: number;
  /** `max_panes`: above it children queue (`queued`). @default no limit */
  readonly maxPanes?: number;
  /** `exclude`: a child whose agent or title one matches gets no pane. @default none */
  readonly exclude?: readonly ExcludePattern[];
}

/** One `exclude` pattern, compiled. */
export interface ExcludePattern {
  /** The pattern as configured (for the hint). */
  readonly pattern: string;
  /** Whether it matches all of a text (ignoring case). */
  test(text: string): boolean;
}

/** The result of a transition. */
export interface Transition {
  /** The next record. */
  readonly record: SessionRecord;
  /** The effects to run, in order. */
  readonly effects: readonly Effect[];
}
