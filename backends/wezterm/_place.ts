/**
 * Private to the wezterm backend: where a new pane splits (docs/backends/wezterm.md §1). WezTerm
 * has no command that arranges existing panes, so the layout is chosen split by split.
 *
 * @module
 */

import type { LayoutResult } from "../../lib/backend/backend.ts";
import type { LayoutName } from "../../lib/config/config.ts";
import type { WeztermPane } from "./_parse.ts";

/** Where a new pane splits, and how big it is. */
export interface SplitPlace {
  /** The pane to split. */
  target: string;
  /** The side the new pane goes. */
  side: "right" | "bottom";
  /** The new pane's share of the split pane, percent. */
  percent: number;
}

/**
 * The first pane splits the anchor (to the right, or below for `main-horizontal` and
 * `even-vertical`), taking `100 − main_pane_size` percent for the `main-*` layouts and half
 * otherwise; later ones split, in half, the largest pane muxbridge opened in the anchor's tab
 * (below for `main-vertical`/`even-vertical`, to the right for `main-horizontal`/
 * `even-horizontal`, along the longer side for `tiled`).
 *
 * @param panes Every pane `list` shows.
 * @param anchor The pane muxbridge runs in.
 * @param opened The panes this backend opened.
 * @param layout The `layout` config.
 * @param mainPaneSize The `main_pane_size` config.
 * @returns The split.
 */
export function splitPlan(
  panes: readonly WeztermPane[],
  anchor: WeztermPane,
  opened: ReadonlySet<string>,
  layout: LayoutName,
  mainPaneSize: number,
): SplitPlace {
  const ours = panes.filter((p) => p.tabId === anchor.tabId && opened.has(p.paneId));
  const largest = ours.reduce<WeztermPane | undefined>(
    (a, p) => (!a || p.area > a.area ? p : a),
    undefined,
  );
  if (!largest) {
    const stacked = layout === "main-horizontal" || layout === "even-vertical";
    const main = layout === "main-vertical" || layout === "main-horizontal";
    return {
      target: anchor.paneId,
      side: stacked ? "bottom" : "right",
      percent: main ? 100 - mainPaneSize : 50,
    };
  }
  const side = layout === "main-horizontal" || layout === "even-horizontal"
    ? "right"
    : layout === "tiled" && largest.size.cols > largest.size.rows * 2
    ? "right"
    : "bottom";
  return { target: largest.paneId, side, percent: 50 };
}

/**
 * `applyLayout`: nothing to run, and why.
 *
 * @param config The `layout` and `main_pane_size` config.
 * @returns Not applied, with the reason.
 */
export function layoutResult(config: { layout: LayoutName; main_pane_size: number }): LayoutResult {
  return {
    applied: false,
    detail:
      `WezTerm has no command that arranges panes: new panes split by layout ${config.layout} and main_pane_size ${config.main_pane_size}`,
  };
}
