/**
 * What OpenCode says about a session, in muxbridge's own words: the few facts its events carry
 * that matter for a child's pane, whichever OpenCode line sent them. Each line's decoder
 * (`v1/events.ts`, `v2/events.ts`) turns its wire events into these; the session core takes them
 * as they are. Plain data: ids are checked where an event is decoded.
 *
 * @module
 */

import type { SessionId } from "../sys/validate.ts";

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
   * The agent the session runs, raw: the event's agent, else the `(@<agent> subagent)` suffix
   * OpenCode 1.x puts on a task child's title (cleaned by the loop).
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

/**
 * One fact about a session.
 *
 * - `created`/`updated`/`deleted`: the session as the event describes it (`updated` may change
 *   the title; a 2.x rename arrives as `updated` with the id and the new title only).
 * - `status`: busy or idle; `retry`: busy retrying a failed model request, this attempt (from 1;
 *   0 when the event did not say); `failed`: idle because the turn ended in an error (2.x says
 *   both in one event, where 1.x sends `session.error` and then idle).
 * - `error`: the session's turn failed (a stop the user asked for is no error: it arrives as
 *   idle).
 * - `attention`: a request for the user opened (`open`: asked) or ended (replied, rejected,
 *   cancelled); the child waits while one is open (1.x: `permission.asked`/`replied`,
 *   `question.asked`/`replied`/`rejected`; 2.x: `permission.asked`/`replied`,
 *   `form.created`/`replied`/`cancelled`).
 */
export type OpencodeEvent =
  | { kind: "created" | "updated" | "deleted"; info: SessionInfo }
  | {
    kind: "status";
    sessionId: SessionId;
    status: "busy" | "idle";
    retry?: number;
    failed?: true;
  }
  | { kind: "error"; sessionId: SessionId }
  | {
    kind: "attention";
    sessionId: SessionId;
    requestId: string;
    what: AttentionKind;
    open: boolean;
  };

/**
 * An event that cannot be used: `invalid_json` or `invalid_message`, with its message.
 *
 * @internal
 */
export interface InvalidEvent {
  /** The kind. */
  kind: "invalid";
  /** The error code of the bridge's `error` line. */
  code: "invalid_json" | "invalid_message";
  /** What is wrong with it. */
  message: string;
  /** A child whose id cannot be used: it gets `pane.skipped` (`invalid_id`) with this hint. */
  skip?: { sessionID: string; hint: string };
}

/**
 * What an event line means: a fact for the session core, an event that cannot be used, or one
 * muxbridge does not act on (other types, root sessions, errors of no session).
 */
export type DecodedEvent = OpencodeEvent | InvalidEvent | { kind: "ignored"; type: string };
