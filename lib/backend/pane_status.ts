/**
 * What a pane shows of its child beside its title: the child's live state, for backends with a
 * place of their own for it (a tmux pane user option, herdr's agent report). The session core
 * decides what to show and when (at most once a second per pane); a backend only shows it.
 *
 * @module
 */

import type { PaneId, SessionId } from "../sys/validate.ts";

/** The states a pane can show. */
export const PANE_STATES = [
  "unknown",
  "busy",
  "retry",
  "idle",
  "error",
  "waiting",
  "failed",
] as const;

/**
 * A child's state: `busy` (working), `retry` (retrying a failed model request), `idle`, `error`
 * (OpenCode reported an error), `waiting` (a permission request or question of it waits for the
 * user), `failed` (the pane's program failed and the pane is held to show why), `unknown`
 * (nothing heard yet).
 */
export type PaneState = typeof PANE_STATES[number];

/** What a pane is to show: its title and its child's state. */
export interface PaneStatus {
  /** The pane title, marker included (clean, at most 60 characters). */
  readonly title: string;
  /** The child's state. */
  readonly state: PaneState;
  /** For `waiting`: what the child asks the user for. */
  readonly waitingFor?: "permission" | "question";
  /** For `retry`: the attempt (0: not known). */
  readonly attempt?: number;
  /** For `failed`: the exit code of the pane's program. */
  readonly exitCode?: number;
  /** The child session. */
  readonly sessionId: SessionId;
}

/** The status a new pane opens with ({@linkcode SpawnRequest}'s part of it). */
export interface SpawnStatus {
  /**
   * The child's state as the pane opens, for a backend that shows it in the same command that
   * creates the pane (tmux) or right after (herdr); the title is `SpawnRequest.title`.
   */
  status?: PaneStatus;
}

/** A backend's status place ({@linkcode Backend}'s part of it). */
export interface StatusPlace {
  /**
   * Shows a status on a pane: the title and the backend's own status place, in as few calls as
   * it can (the caller falls back to `setTitle` where a backend has no such method).
   *
   * @throws {MuxError} `pane_not_found` when the pane is gone.
   */
  setStatus?(paneId: PaneId, status: PaneStatus, signal?: AbortSignal): Promise<void>;
  /**
   * Brings the pane in front of the user: its window (or tab) selected and the pane focused
   * (`attention_focus`); absent where the multiplexer cannot focus a pane by id.
   *
   * @throws {MuxError} `pane_not_found` when the pane is gone.
   */
  focus?(paneId: PaneId, signal?: AbortSignal): Promise<void>;
  /**
   * Withdraws what the backend's status place says about a pane's child, before the pane closes
   * (herdr's `pane.release_agent`); nothing for a pane it never reported on.
   */
  releaseStatus?(paneId: PaneId, sessionId: SessionId, signal?: AbortSignal): Promise<void>;
}
