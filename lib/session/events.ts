/**
 * What goes in and out of the session core, independent of any wire format: the session events
 * the loop takes ({@linkcode LoopInput}) and the pane reports it gives ({@linkcode PaneMessage}).
 * The bridge protocol (`lib/bridge/protocol.ts`) decodes its lines into these and writes these as
 * lines; its zod schemas are built from the reason lists here.
 *
 * @module
 */

import type { OpencodeEvent } from "../opencode/events.ts";
import type { SessionId } from "../sys/validate.ts";

export type {
  AttentionKind,
  PendingList,
  PendingRequest,
  SessionInfo,
} from "../opencode/events.ts";
export { ATTENTION_KINDS, REQUEST_ID } from "../opencode/events.ts";

/** Why a pane closed. */
export const CLOSE_REASONS = [
  "idle",
  "deleted",
  "shutdown",
  "orphan",
  "gone",
  "failed",
  "restart",
] as const;

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
  "not_driven",
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

/**
 * What the loop takes: OpenCode's facts about a session (`lib/opencode/events.ts`, decoded from
 * either line's events), and what the plugin adds: a background job of a session running or not
 * (`bridge.job`), and which session the plugin's TUI shows (`bridge.view`).
 */
export type LoopInput =
  | OpencodeEvent
  | { kind: "job"; sessionId: SessionId; running: boolean }
  | { kind: "view"; sessionId: SessionId };
