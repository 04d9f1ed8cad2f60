/**
 * Private to the tmux backend: a window's layout tree as tmux prints it (`#{window_layout}`), the
 * tree once a pane is split, and the pane sizes a layout gives. Pure: the layout plan
 * (`_layout.ts`) and the placement (`_place.ts`) read windows through it.
 *
 * @module
 */

/** A cell of a window's layout tree. */
export type LayoutCell =
  | { kind: "pane"; paneId: string; width: number; height: number }
  | { kind: "lr" | "tb"; width: number; height: number; children: LayoutCell[] };

/**
 * Parses `#{window_layout}`: `csum,WxH,X,Y` then `,ID` (a pane), `{…}` (left-right) or `[…]`
 * (top-bottom), children joined by commas (tmux `layout-custom.c`, e.g.
 * `5f21,200x50,0,0{119x50,0,0,0,80x50,120,0[80x24,120,0,2,80x25,120,25,3]}`, docs/backends/tmux.md
 * §4).
 *
 * @param text The layout string.
 * @returns The root cell, or null when the text does not parse.
 */
export function parseWindowLayout(text: string): LayoutCell | null {
  const m = /^[0-9a-f]{4},/.exec(text);
  if (!m) return null;
  let at = m[0].length;
  const cell = (): LayoutCell | null => {
    const g = /^(\d+)x(\d+),(\d+),(\d+)/.exec(text.slice(at));
    if (!g) return null;
    at += g[0].length;
    const width = Number(g[1]);
    const height = Number(g[2]);
    const open = text[at];
    if (open === "{" || open === "[") {
      at++;
      const children: LayoutCell[] = [];
      while (true) {
        const child = cell();
        if (!child) return null;
        children.push(child);
        const next = text[at++];
        if (next === ",") continue;
        if (next === (open === "{" ? "}" : "]")) break;
        return null;
      }
      return { kind: open === "{" ? "lr" : "tb", width, height, children };
    }
    const id = /^,(\d+)/.exec(text.slice(at));
    if (!id) return null;
    at += id[0].length;
    return { kind: "pane", paneId: `%${id[1]}`, width, height };
  };
  const root = cell();
  return root && at === text.length ? root : null;
}

/**
 * The layout tree once `paneId` is split: the new cell goes right after it, inside its parent
 * when the parent runs the same way, else together with it in a new container
 * (`layout_split_pane`, tmux 3.3a `layout.c`). Sizes are shared as a split shares them (one cell
 * for the border); the plan needs only the order and the total, which are exact.
 *
 * @param root The tree.
 * @param paneId The pane being split.
 * @param added The new cell's id.
 * @param direction The split.
 * @returns A new tree (the same one when `paneId` is not in it).
 */
export function withSplit(
  root: LayoutCell,
  paneId: string,
  added: string,
  direction: "-h" | "-v",
): LayoutCell {
  const kind = direction === "-v" ? "tb" : "lr";
  const axis = kind === "tb" ? "height" : "width";
  const halves = (cell: LayoutCell & { kind: "pane" }): [LayoutCell, LayoutCell] => {
    const first = Math.ceil((cell[axis] - 1) / 2);
    return [
      { ...cell, [axis]: first },
      {
        kind: "pane",
        paneId: added,
        width: cell.width,
        height: cell.height,
        [axis]: cell[axis] - 1 - first,
      },
    ];
  };
  const visit = (cell: LayoutCell): LayoutCell => {
    if (cell.kind === "pane") {
      if (cell.paneId !== paneId) return cell;
      return { kind, width: cell.width, height: cell.height, children: halves(cell) };
    }
    const at = cell.children.findIndex((c) => c.kind === "pane" && c.paneId === paneId);
    if (at >= 0 && cell.kind === kind) {
      const children = [...cell.children];
      children.splice(at, 1, ...halves(children[at] as LayoutCell & { kind: "pane" }));
      return { ...cell, children };
    }
    return { ...cell, children: cell.children.map(visit) };
  };
  return visit(root);
}

/**
 * The size of each pane after `select-layout tiled` with `n` panes: tmux adds rows, then
 * columns, until the grid holds them all, and shares the window minus the borders
 * (`layout_set_tiled`, tmux 3.3a `layout-set.c`; observed live in a 120x40 window: 12 panes
 * are 3 columns × 4 rows of 39x9, 13 panes 4 × 4 of 29x9).
 *
 * @param n The number of panes.
 * @param width The window's width.
 * @param height The window's height.
 * @returns The size of a (smallest) cell.
 */
export function tiledCell(n: number, width: number, height: number): {
  width: number;
  height: number;
} {
  let rows = 1;
  let columns = 1;
  while (rows * columns < n) {
    rows++;
    if (rows * columns < n) columns++;
  }
  return {
    width: Math.floor((width - (columns - 1)) / columns),
    height: Math.floor((height - (rows - 1)) / rows),
  };
}

/**
 * How tall each pane of the column holding `paneId` would be, evened out, with one pane more:
 * the column is the top-bottom container of the window's layout that holds `paneId` and only
 * owned panes (what muxbridge's splits build and `planLayout` evens out).
 *
 * @param layout The window's `#{window_layout}`.
 * @param paneId An owned pane.
 * @param owned The owned panes.
 * @returns The height, or null when `paneId` is not in such a column.
 */
export function columnHeightWithOneMore(
  layout: string,
  paneId: string,
  owned: ReadonlySet<string>,
): number | null {
  const find = (cell: LayoutCell): LayoutCell | null => {
    if (cell.kind === "pane") return null;
    if (cell.children.some((c) => c.kind === "pane" && c.paneId === paneId)) return cell;
    for (const c of cell.children) {
      const hit = find(c);
      if (hit) return hit;
    }
    return null;
  };
  const tree = parseWindowLayout(layout);
  const column = tree ? find(tree) : null;
  if (
    !column || column.kind !== "tb" ||
    !column.children.every((c) => c.kind === "pane" && owned.has(c.paneId))
  ) return null;
  const n = column.children.length + 1;
  return Math.floor((column.height - (n - 1)) / n);
}
