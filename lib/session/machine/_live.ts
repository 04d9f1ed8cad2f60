/**
 * A child's live state ({@linkcode Live}) from what muxbridge sees: status events, polls and
 * `session.error`. Last state wins; an error stays until the child is busy again (OpenCode
 * follows `session.error` with idle, which must not hide it).
 *
 * @module
 */

import type { Live, LiveState } from "./types.ts";

/** A child muxbridge has heard nothing about yet. */
export const UNKNOWN: Live = {
  state: "unknown",
  since: Number.NEGATIVE_INFINITY,
  at: Number.NEGATIVE_INFINITY,
};

/**
 * The live state after a status was seen.
 *
 * @param live The current live state.
 * @param status What was seen: busy, idle, or busy retrying (`retry`, the attempt).
 * @param now When.
 * @param event A status event (its time marks later polls sent before it as stale); false for
 *   a poll.
 * @returns The next live state (the same object when nothing changed).
 */
export function seeStatus(
  live: Live,
  status: { status: "busy" | "idle"; retry?: number },
  now: number,
  event: boolean,
): Live {
  const state: LiveState = status.status === "idle"
    ? (live.state === "error" ? "error" : "idle")
    : status.retry !== undefined
    ? "retry"
    : "busy";
  return become(live, state, state === "retry" ? status.retry : undefined, now, event);
}

/**
 * The live state after `session.error`.
 *
 * @param live The current live state.
 * @param now When.
 * @returns The next live state.
 */
export function seeError(live: Live, now: number): Live {
  return become(live, "error", undefined, now, true);
}

function become(
  live: Live,
  state: LiveState,
  attempt: number | undefined,
  now: number,
  event: boolean,
): Live {
  const at = event ? now : live.at;
  if (live.state === state && live.attempt === attempt) {
    return at === live.at ? live : { ...live, at };
  }
  return attempt === undefined ? { state, since: now, at } : { state, attempt, since: now, at };
}
