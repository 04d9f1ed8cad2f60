/**
 * What a pane shows of its child ({@linkcode PaneView}) and the rate limit on sending it: at most
 * one view per `statusIntervalMs` per pane; a change inside the interval arms the status timer,
 * and when it fires the view as it is *then* goes out, so under flapping the last state wins.
 * A child that starts waiting for the user is shown at once: it happens at most once per wait,
 * and the end of the wait waits for the interval again.
 *
 * @module
 */

import { MAX_TITLE } from "../../sys/validate.ts";
import { fitColumns } from "./_columns.ts";
import type {
  Effect,
  MachineConfig,
  PaneView,
  SessionRecord,
  SessionState,
  Shown,
  Transition,
  ViewState,
} from "./types.ts";

/** The least time between two views of one pane unless configured. */
export const STATUS_INTERVAL_MS = 1000;

/** A pane state that shows a view. */
type Showing = Extract<SessionState, { shown: Shown }>;

/**
 * The marker a state puts before the title: `[busy]`, `[retry 2]`, `[idle]`, `[error]`,
 * `[needs you]` (waiting for the user), `[failed]`; none before anything is known.
 *
 * @param state The state.
 * @param attempt For `retry`, the attempt (0 or none: not known).
 * @returns The marker, or "".
 */
export function marker(state: ViewState, attempt?: number): string {
  switch (state) {
    case "unknown":
      return "";
    case "retry":
      return attempt === undefined || attempt < 1 ? "[retry]" : `[retry ${attempt}]`;
    case "waiting":
      return "[needs you]";
    default:
      return `[${state}]`;
  }
}

/**
 * The pane title: the marker and the (clean) title, at most {@linkcode MAX_TITLE} columns of a
 * terminal (a wide character counts two); the marker is always whole.
 *
 * @param title The clean session title.
 * @param mark The marker ("" for none).
 * @returns The title.
 *
 * @example
 * ```ts
 * import { paneTitle } from "./_view.ts";
 * paneTitle("fix the parser", "[needs you]"); // "[needs you] fix the parser"
 * ```
 */
export function paneTitle(title: string, mark: string): string {
  const full = mark === "" ? title : title === "" ? mark : `${mark} ${title}`;
  return fitColumns(full, MAX_TITLE);
}

/**
 * The view of a record's pane as it should be now.
 *
 * @param record The record.
 * @param config The machine config (`statusInTitle`).
 * @returns The view.
 */
export function viewOf(
  record: SessionRecord,
  config: Pick<MachineConfig, "statusInTitle">,
): PaneView {
  const on = config.statusInTitle ?? true;
  const s = record.state;
  if (s.kind === "held") {
    return {
      title: paneTitle(record.title, on ? marker("failed") : ""),
      state: "failed",
      exitCode: s.exitCode,
      since: s.since,
    };
  }
  const [oldest] = record.attention.requests;
  if (oldest !== undefined) {
    return {
      title: paneTitle(record.title, on ? marker("waiting") : ""),
      state: "waiting",
      waitingFor: oldest.what,
      since: oldest.since,
    };
  }
  const { state, attempt, since } = record.live;
  return {
    title: paneTitle(record.title, on ? marker(state, attempt) : ""),
    state,
    ...(attempt === undefined ? {} : { attempt }),
    since: Number.isFinite(since) ? since : 0,
  };
}

/**
 * Whether two views are the same.
 *
 * @param a A view.
 * @param b Another, or null.
 * @returns Whether they are equal.
 */
export function sameView(a: PaneView, b: PaneView | null): boolean {
  return b !== null && a.title === b.title && a.state === b.state &&
    a.waitingFor === b.waitingFor && a.attempt === b.attempt &&
    a.exitCode === b.exitCode &&
    a.since === b.since;
}

function showing(state: SessionState): state is Showing {
  return state.kind === "open" || state.kind === "held";
}

/**
 * The transition with its pane's view brought up to date: sent now when the rate limit allows,
 * else the status timer armed; the timer disarmed when the pane stops showing views.
 *
 * @param before The state before the transition.
 * @param t The transition.
 * @param now The time.
 * @param config The machine config.
 * @param due The status timer just fired.
 * @returns The transition with the view's effects appended.
 */
export function refreshView(
  before: SessionState,
  t: Transition,
  now: number,
  config: MachineConfig,
  due = false,
): Transition {
  const s = t.record.state;
  const armed = showing(before) && before.shown.due && !due;
  if (!showing(s)) {
    return armed ? { ...t, effects: [...t.effects, { type: "disarm_status" }] } : t;
  }
  const shown = due ? { ...s.shown, due: false } : s.shown;
  const view = viewOf(t.record, config);
  let next: Shown = shown;
  const effects: Effect[] = [...t.effects];
  // The start of a wait for the user goes out at once, even over a view the timer holds back.
  const urgent = view.state === "waiting" && shown.view?.state !== "waiting";
  if (urgent && !sameView(view, shown.view)) {
    next = { view, at: now, due: false };
    if (shown.due) effects.push({ type: "disarm_status" });
    effects.push({ type: "set_status", paneId: s.paneId, view });
  } else if (!sameView(view, shown.view) && !shown.due) {
    const at = shown.at + (config.statusIntervalMs ?? STATUS_INTERVAL_MS);
    if (now >= at) {
      next = { view, at: now, due: false };
      effects.push({ type: "set_status", paneId: s.paneId, view });
    } else {
      next = { ...shown, due: true };
      effects.push({ type: "arm_status", at });
    }
  }
  if (next === s.shown) return effects.length === t.effects.length ? t : { ...t, effects };
  return { record: { ...t.record, state: { ...s, shown: next } }, effects };
}
