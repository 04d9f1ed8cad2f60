/**
 * Draws a window's panes as a text picture from their geometry (used by `demo`).
 *
 * @module
 */

/** One pane's place in its window, in cells. */
export interface PaneBox {
  /** The pane id. */
  id: string;
  /** Left column. */
  left: number;
  /** Top row. */
  top: number;
  /** Width in cells. */
  width: number;
  /** Height in cells. */
  height: number;
  /** The label drawn inside. */
  label: string;
}

/**
 * Draws boxes scaled into a canvas.
 *
 * @param panes The panes.
 * @param windowWidth The window's width in cells.
 * @param windowHeight The window's height in cells.
 * @param columns The picture's width. @default 78
 * @returns The picture, one string per line.
 */
export function drawPanes(
  panes: readonly PaneBox[],
  windowWidth: number,
  windowHeight: number,
  columns = 78,
): string[] {
  const rows = Math.max(8, Math.round((columns * windowHeight) / windowWidth / 2));
  const sx = (columns - 1) / windowWidth;
  const sy = (rows - 1) / windowHeight;
  const grid = Array.from({ length: rows }, () => Array.from({ length: columns }, () => " "));
  for (const p of panes) {
    const x0 = Math.round(p.left * sx);
    const y0 = Math.round(p.top * sy);
    const x1 = Math.min(columns - 1, Math.round((p.left + p.width + 1) * sx));
    const y1 = Math.min(rows - 1, Math.round((p.top + p.height + 1) * sy));
    for (let x = x0; x <= x1; x++) {
      grid[y0][x] = grid[y0][x] === "|" ? "+" : "-";
      grid[y1][x] = grid[y1][x] === "|" ? "+" : "-";
    }
    for (let y = y0; y <= y1; y++) {
      grid[y][x0] = grid[y][x0] === "-" ? "+" : "|";
      grid[y][x1] = grid[y][x1] === "-" ? "+" : "|";
    }
    for (const [x, y] of [[x0, y0], [x1, y0], [x0, y1], [x1, y1]]) grid[y][x] = "+";
    const inner = Math.max(0, x1 - x0 - 2);
    const lines = [p.id, ...wrap(p.label, inner)].slice(0, Math.max(0, y1 - y0 - 1));
    lines.forEach((text, i) => {
      for (let k = 0; k < Math.min(text.length, inner); k++) grid[y0 + 1 + i][x0 + 2 + k] = text[k];
    });
  }
  return grid.map((r) => r.join("").trimEnd());
}

function wrap(text: string, width: number): string[] {
  if (width <= 0) return [];
  const out: string[] = [];
  for (let i = 0; i < text.length && out.length < 3; i += width) out.push(text.slice(i, i + width));
  return out;
}
