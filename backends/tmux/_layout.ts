/**
 * Private to the tmux backend: the layout plan. Pure: given the panes of the anchor's session, it
 * returns the tmux commands to run and what they do, so the rules are tested without a server.
 *
 * The rule: muxbridge never reshapes a pane it does not own. `select-layout` rearranges every
 * pane of a window, so it runs only on a window that holds the anchor and owned panes and nothing
 * else. In a window that also holds the user's panes, only containers of the window's layout
 * tree whose every child is an owned pane are evened out with `resize-pane`: a resize moves the
 * border between siblings of the pane's parent container and nothing outside it
 * (`layout_resize_pane`, tmux 3.3a `layout.c`), so the user's panes keep their size.
 *
 * @module
 */

import semver from "semver";
import type { LayoutName } from "../../lib/config/config.ts";
import { type PaneRow, parseTmuxVersion } from "./_parse.ts";
import { type LayoutCell, parseWindowLayout, withSplit } from "./_window_layout.ts";

/**
 * A pane as the layout plan sees it: a listed row, or one the same tmux call is about to make,
 * named by its tmux target (`@W.N`) instead of a pane id.
 */
type LayoutRow = Omit<PaneRow, "paneId"> & { paneId: string };

/** Sizes that sum to `total`, differing by at most one, larger first. */
function evenSizes(total: number, n: number): number[] {
  return Array.from({ length: n }, (_, i) => Math.floor(total / n) + (i < total % n ? 1 : 0));
}

/**
 * The `resize-pane` commands that even out every container whose children are all owned panes.
 * Each command fixes one child; later children absorb the change, so the commands run in order,
 * twice (a grow may take from an earlier sibling when a later one is at its minimum).
 */
function evenOwnedContainers(root: LayoutCell, owned: ReadonlySet<string>): string[][] {
  const commands: string[][] = [];
  const visit = (cell: LayoutCell) => {
    if (cell.kind === "pane") return;
    cell.children.forEach(visit);
    const panes = cell.children.filter((c) => c.kind === "pane" && owned.has(c.paneId));
    if (panes.length < 2 || panes.length !== cell.children.length) return;
    const axis = cell.kind === "tb" ? "height" : "width";
    const sizes = panes.map((p) => p[axis]);
    if (Math.max(...sizes) - Math.min(...sizes) <= 1) return;
    const targets = evenSizes(sizes.reduce((a, b) => a + b, 0), panes.length);
    const pass = panes.slice(0, -1).map((p, i) => [
      "resize-pane",
      "-t",
      (p as { paneId: string }).paneId,
      axis === "height" ? "-y" : "-x",
      String(targets[i]),
    ]);
    commands.push(...pass, ...pass);
  };
  visit(root);
  return commands;
}

/**
 * A pane a split is about to make, in the same tmux call as the layout (so the rows do not show
 * it yet): the plan counts it as owned, right after the pane it splits.
 */
export interface AddedPane {
  /** How the later commands of that call name it (`@W.N`: the new pane's index). */
  target: string;
  /** The pane being split (`%N`). */
  after: string;
  /** The split: `-h` side by side, `-v` stacked. */
  direction: "-h" | "-v";
}

/** What {@linkcode planLayout} is given. */
export interface LayoutInput {
  /** Every pane of the anchor's session. */
  rows: readonly LayoutRow[];
  /** The anchor pane (`%N`). */
  anchor: string;
  /** Panes muxbridge owns (the caller's and every pane carrying an ownership mark). */
  owned: ReadonlySet<string>;
  /** The requested layout. */
  layout: LayoutName;
  /** Percent of the window for the main pane. */
  mainPaneSize: number;
  /** A pane the same tmux call makes first (see {@linkcode AddedPane}). */
  added?: AddedPane;
  /** Plan only the anchor's window (a split there touches no other). @default false */
  anchorWindowOnly?: boolean;
}

/** The commands for one window. */
export interface LayoutStep {
  /** The window (`@N`); the commands touch no other. */
  window: string;
  /** tmux commands (each an argv after the server flags), to run in order. */
  commands: string[][];
}

/** What to run and what it means. */
export interface LayoutPlan {
  /** Every step's commands, in order. */
  commands: string[][];
  /** The commands by window, for a caller that guards each window on its own. */
  steps: LayoutStep[];
  /** One phrase per decision. */
  detail: string[];
}

/**
 * The `main-pane-width`/`-height` value: a percentage from tmux 3.2 on, cells before (CHANGES
 * 3.2: "main-pane-width and main-pane-height can be a percentage").
 *
 * @param version The server's `#{version}`.
 * @param cells The window's width (main-vertical) or height (main-horizontal).
 * @param percent The main pane's share.
 * @returns The option value.
 */
export function mainPaneValue(version: string, cells: number, percent: number): string {
  const v = parseTmuxVersion(version);
  if (v === null || semver.gte(v, "3.2.0")) return `${percent}%`;
  return String(Math.max(1, Math.round((cells * percent) / 100)));
}

/**
 * Plans a layout for the anchor's window and muxbridge's overflow windows.
 *
 * @param input The session's panes, the anchor, the owned set and the request.
 * @returns Commands and details; no commands means nothing to change.
 */
export function planLayout(input: LayoutInput): LayoutPlan {
  const { anchor, layout, added } = input;
  const plan: LayoutPlan = { commands: [], steps: [], detail: [] };
  const anchorRow = input.rows.find((r) => r.paneId === anchor);
  if (!anchorRow) return { ...plan, detail: [`anchor ${anchor} not found`] };
  let rows: readonly LayoutRow[] = input.rows;
  let owned = input.owned;
  const split = added && rows.find((r) => r.paneId === added.after);
  if (added && split) {
    // The new pane sits right after the pane it splits (`window_add_pane`, tmux 3.3a).
    rows = [...rows, { ...split, paneId: added.target, index: split.index + 1 }];
    owned = new Set([...owned, added.target]);
  }
  const step = (window: string, commands: string[][]) => {
    if (commands.length === 0) return;
    plan.steps.push({ window, commands });
    plan.commands.push(...commands);
  };
  const win = anchorRow.windowId;
  const inWindow = rows.filter((r) => r.windowId === win);
  const mine = inWindow.filter((r) => r.paneId !== anchor && owned.has(r.paneId));
  const foreign = inWindow.filter((r) => r.paneId !== anchor && !owned.has(r.paneId));
  const isMain = layout === "main-vertical" || layout === "main-horizontal";
  const anchorFirst = inWindow.every((r) => r.index >= anchorRow.index);
  if (anchorRow.windowZoomed) {
    // select-layout and resize-pane unzoom the window (tmux 3.3a): the user chose to zoom.
    plan.detail.push(`window ${win} is zoomed: left as it is`);
  } else if (mine.length === 0) {
    plan.detail.push(`no owned panes in window ${win}`);
  } else if (foreign.length === 0 && (!isMain || anchorFirst)) {
    const commands: string[][] = [];
    if (isMain) {
      const vertical = layout === "main-vertical";
      commands.push([
        "set-window-option",
        "-t",
        win,
        vertical ? "main-pane-width" : "main-pane-height",
        mainPaneValue(
          anchorRow.version,
          vertical ? anchorRow.windowWidth : anchorRow.windowHeight,
          input.mainPaneSize,
        ),
      ]);
    }
    commands.push(["select-layout", "-t", win, layout]);
    step(win, commands);
    plan.detail.push(`${layout} on window ${win}`);
  } else {
    const why = foreign.length > 0
      ? `user panes present in window ${win} (${foreign.map((r) => r.paneId).join(" ")})`
      : `anchor ${anchor} is not the first pane of window ${win}`;
    const parsed = parseWindowLayout(anchorRow.windowLayout);
    const tree = parsed && added && split?.windowId === win
      ? withSplit(parsed, added.after, added.target, added.direction)
      : parsed;
    const even = tree ? evenOwnedContainers(tree, owned) : [];
    step(win, even);
    plan.detail.push(
      even.length > 0
        ? `${why}: ${layout} not applied, owned panes evened out among themselves`
        : `${why}: ${layout} not applied, owned panes left as they are`,
    );
  }
  if (input.anchorWindowOnly) return plan;
  const overflow = new Map<string, LayoutRow[]>();
  for (const r of rows) {
    if (r.windowId !== win && r.overflow) {
      overflow.set(r.windowId, [...(overflow.get(r.windowId) ?? []), r]);
    }
  }
  for (const [id, panes] of overflow) {
    if (panes.length < 2 || panes[0].windowZoomed) continue;
    if (panes.every((p) => owned.has(p.paneId))) {
      step(id, [["select-layout", "-t", id, "tiled"]]);
      plan.detail.push(`tiled on overflow window ${id}`);
    } else plan.detail.push(`user panes present in overflow window ${id}: not arranged`);
  }
  return plan;
}
