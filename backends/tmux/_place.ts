/**
 * Private to the tmux backend: where a new pane goes. Pure: given a listing of the anchor's
 * session, it names the pane to split (and which way) or the window index to open, so the rules
 * are tested without a server.
 *
 * @module
 */

import { columnHeightWithOneMore, tiledCell } from "./_window_layout.ts";
import type { PaneRow } from "./_parse.ts";
import { SESSION_ID } from "../../lib/sys/validate.ts";

/**
 * The smallest pane muxbridge makes by splitting: below this an OpenCode TUI shows little more
 * than its input line, so the child goes to a window of its own instead (policy, not a tmux
 * limit: tmux itself splits down to 1×1).
 */
export const MIN_COLS = 20;
/** See {@linkcode MIN_COLS}. */
export const MIN_ROWS = 5;

/** A listing of the anchor's session. */
export interface SessionView {
  /** The anchor pane (`%N`). */
  anchor: string;
  /** Every pane of the anchor's session. */
  rows: PaneRow[];
  /** The anchor's own row. */
  anchorRow: PaneRow;
}

/** Where a new pane goes. */
export type Placement =
  | {
    /** Split `target`; `overflow`: it is in a muxbridge window, which is tiled afterwards. */
    kind: "split";
    target: PaneRow;
    direction: "-h" | "-v";
    overflow: boolean;
  }
  | {
    /** A new overflow window at this index of the anchor's session. */
    kind: "window";
    sessionId: string;
    index: number;
  };

/** A pane carrying muxbridge's ownership mark (a junk value set by someone else does not count). */
export const isMarked = (row: PaneRow): boolean => SESSION_ID.test(row.session);

/** Whether splitting `pane` along `direction` leaves both halves at least the minimum size. */
function roomFor(pane: PaneRow, direction: "-h" | "-v"): boolean {
  // A split takes one cell for the border: halves of (size - 1).
  return direction === "-h"
    ? Math.floor((pane.width - 1) / 2) >= MIN_COLS
    : Math.floor((pane.height - 1) / 2) >= MIN_ROWS;
}

/** tmux cannot split a pane below 3 cells along the split (two 1-cell panes and a border). */
const splittable = (pane: PaneRow, direction: "-h" | "-v") =>
  (direction === "-h" ? pane.width : pane.height) >= 3;

/** Pane or window number of `%N`/`@N` (tmux never reuses one in a server's life). */
const idNumber = (id: string) => Number(id.slice(1));

/** The largest pane by area; ties go to the oldest (lowest `%N`), for a stable choice. */
function largest(panes: readonly PaneRow[]): PaneRow {
  return [...panes].sort((a, b) =>
    b.width * b.height - a.width * a.height || idNumber(a.paneId) - idNumber(b.paneId)
  )[0];
}

/**
 * Picks where the next pane goes, skipping windows known to be full.
 *
 * In the anchor's window the first child splits the anchor to the right, and later ones split
 * the largest owned pane of that window downwards: the user's own panes are split at most once,
 * and owned panes stay in one column of even-ish panes (halving the newest pane instead left
 * 1-row slivers and overflowed after 5 children in a 40-row window, observed live). A split
 * that would leave a pane under {@linkcode MIN_COLS}×{@linkcode MIN_ROWS} is not tried: the
 * child goes to the newest overflow window, split along the longer side of its largest pane and
 * tiled, or else to a new overflow window.
 *
 * @param view The session listing.
 * @param mode `split` (the anchor's window first) or `window` (overflow windows only).
 * @param full Windows where tmux already answered "no space".
 * @returns The placement.
 */
export function planPlacement(
  view: SessionView,
  mode: "split" | "window",
  full: ReadonlySet<string> = new Set(),
): Placement {
  const { anchor, rows, anchorRow } = view;
  if (mode === "split" && !full.has(anchorRow.windowId)) {
    const owned = rows.filter((r) =>
      r.windowId === anchorRow.windowId && r.paneId !== anchor && isMarked(r)
    );
    const target = owned.length === 0 ? anchorRow : largest(owned);
    const direction = owned.length === 0 ? "-h" : "-v";
    // In a column of owned panes the layout evens the heights out after the split, so the
    // column's share per pane is what counts; elsewhere the split's halves are.
    const evened = owned.length === 0 ? null : columnHeightWithOneMore(
      anchorRow.windowLayout,
      target.paneId,
      new Set(owned.map((r) => r.paneId)),
    );
    const room = evened === null
      ? roomFor(target, direction)
      : evened >= MIN_ROWS && splittable(target, direction);
    if (room) return { kind: "split", target, direction, overflow: false };
  }
  // The newest overflow window of the anchor's session, if any.
  const overflow = rows.filter((r) => r.overflow && r.windowId !== anchorRow.windowId);
  const window = overflow.map((r) => r.windowId).sort((a, b) => idNumber(b) - idNumber(a))[0];
  if (window && !full.has(window)) {
    // Split the window's largest pane along its longer side (a cell is about twice as tall as
    // wide) or else the other, then tile the window: the tiled grid decides the size.
    const panes = overflow.filter((r) => r.windowId === window);
    const target = largest(panes);
    const cell = tiledCell(panes.length + 1, target.windowWidth, target.windowHeight);
    const longer = target.width >= 2 * target.height ? "-h" : "-v";
    const direction = cell.width >= MIN_COLS && cell.height >= MIN_ROWS
      ? ([longer, longer === "-h" ? "-v" : "-h"] as const).find((d) => splittable(target, d))
      : undefined;
    if (direction) return { kind: "split", target, direction, overflow: true };
  }
  const index = Math.max(...rows.map((r) => r.windowIndex)) + 1;
  return { kind: "window", sessionId: anchorRow.sessionId, index };
}
