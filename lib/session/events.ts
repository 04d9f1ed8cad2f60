/**
 * What goes in and out of the session core, independent of any wire format: the session events
 * the loop takes ({@linkcode LoopInput}) and the pane reports it gives ({@linkcode PaneMessage}).
 * The bridge protocol (`lib/bridge/protocol.ts`) decodes its lines into these and writes these as
 * lines; its zod schemas are built from the reason lists here.
 *
 * @module
 */

import type { SessionId } from "../sys/validate.ts";

/** Why a pane closed. */
export const CLOSE_REASONS = ["idle", "deleted", "shutdown", "orphan", "gone", "failed"] as const;

/** A close reason. */
export type CloseReason = typeof CLOSE_REASONS[number];

/** Why a child got no pane. */
export const SKIP_REASONS = [
  "no_backend",
  "server_unreachable",
  "auth_failed",
  "auth_unsupported",
  "no_space",
  "invalid_id",
  "unsupported_version",
  "backend_unreachable",
  "session_not_found",
  "limit",
  "excluded",
  "max_panes",
] as const;

/** A skip reason. */
export type SkipReason = typeof SKIP_REASONS[number];

/** A pane opened for a child. */
export interface PaneOpened {
  /** The message type. */
  type: "pane.opened";
  /** The child session. */
  sessionID: string;
  /** The backend's pane id. */
  paneId: string;
  /** The backend that opened it. */
  backend: string;
}

/** A pane of a child closed. */
export interface PaneClosed {
  /** The message type. */
  type: "pane.closed";
  /** The child session. */
  sessionID: string;
  /** The backend's pane id. */
  paneId: string;
  /** Why it closed. */
  reason: CloseReason;
}

/** A child that gets no pane, and why. */
export interface PaneSkipped {
  /** The message type. */
  type: "pane.skipped";
  /** The child session (as the input named it: an `invalid_id` may be no session id). */
  sessionID: string;
  /** Why. */
  reason: SkipReason;
  /** What a user can do about it. */
  hint: string;
  /** For `max_panes`: the child's place in the queue of children waiting for a pane (1: next). */
  position?: number;
}

/** An open or close that failed. */
export interface PaneFailed {
  /** The message type. */
  type: "pane.failed";
  /** The child session. */
  sessionID: string;
  /** What failed. */
  op: "open" | "close";
  /** The error code (`lib/sys/errors.ts`). */
  code: string;
  /** What went wrong. */
  message: string;
}

/** Every report the session core gives about a child's pane. */
export type PaneMessage = PaneOpened | PaneClosed | PaneSkipped | PaneFailed;

/** A session as an event describes it, its ids checked where the event was decoded. */
export interface SessionInfo {
  /** The session id. */
  id: SessionId;
  /** The parent's id; absent for root sessions. */
  parentId?: SessionId;
  /** The raw title (cleaned by the loop). */
  title: string;
  /** The session's directory, when given (checked where it is used). */
  directory?: string;
  /**
   * The agent the session runs, raw: `info.agent`, else the `(@<agent> subagent)` suffix OpenCode
   * puts on a task child's title (cleaned by the loop).
   */
  agent?: string;
}

/**
 * What a child can wait on the user for: a `permission` request (a tool call the config says to
 * ask about) or a `question` (OpenCode's question tool; a form on the 2.x line).
 */
export const ATTENTION_KINDS = ["permission", "question"] as const;

/** What a child waits on the user for. */
export type AttentionKind = typeof ATTENTION_KINDS[number];

/**
 * The form of a request id muxbridge keeps (`per_…`, `que_…`, `frm_…`): it is only ever a
 * key, never an argument, but a line that names something else is refused where it is decoded.
 */
export const REQUEST_ID: RegExp = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,199}$/;

/** One request a child waits on, as a server's list of pending requests names it. */
export interface PendingRequest {
  /** The session that asked, as the server wrote it (only ever compared with tracked ids). */
  readonly sessionId: string;
  /** The request's id (the same the asked and answered events carry). */
  readonly requestId: string;
  /** What it asks for. */
  readonly kind: AttentionKind;
}

/**
 * What a server's lists of pending requests said in one poll of one project directory: every
 * request still waiting for the user there (`GET /permission` and `GET /question` on the 1.x
 * line). Requests of sessions muxbridge does not track are left out by the loop.
 */
export interface PendingList {
  /** The requests, in any order. */
  readonly requests: readonly PendingRequest[];
}

/** A session event the loop handles. */
export type LoopInput =
  | { kind: "created" | "updated" | "deleted"; info: SessionInfo }
  /**
   * `retry`: the session is busy retrying a failed model request, this attempt (from 1; 0 when
   * the event did not say).
   */
  | { kind: "status"; sessionId: SessionId; status: "busy" | "idle"; retry?: number }
  /** `session.error` (an aborted request is no error: it arrives as idle). */
  | { kind: "error"; sessionId: SessionId }
  | { kind: "job"; sessionId: SessionId; running: boolean }
  /**
   * A request for the user opened (`open`: asked) or ended (replied, rejected, cancelled): the
   * child waits while one is open (`permission.asked`/`replied`, `question.asked`/`replied`/
   * `rejected` on the 1.x line; `form.created`/`replied`/`cancelled` on the 2.x line).
   */
  | {
    kind: "attention";
    sessionId: SessionId;
    requestId: string;
    what: AttentionKind;
    open: boolean;
  };
