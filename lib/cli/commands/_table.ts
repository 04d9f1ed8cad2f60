/**
 * Plain-text tables for people: a header row and columns padded to the widest cell, measured in
 * terminal columns (a CJK character or an emoji takes two, a combining mark none), so a title
 * in any script keeps the columns after it straight.
 *
 * @module
 */

/** Wide (two-column) ranges: East Asian Wide and Fullwidth, and the emoji blocks. */
const WIDE: ReadonlyArray<readonly [number, number]> = [
  [0x1100, 0x115f],
  [0x2e80, 0x303e],
  [0x3041, 0x33ff],
  [0x3400, 0x4dbf],
  [0x4e00, 0x9fff],
  [0xa000, 0xa4cf],
  [0xac00, 0xd7a3],
  [0xf900, 0xfaff],
  [0xfe30, 0xfe4f],
  [0xff00, 0xff60],
  [0xffe0, 0xffe6],
  [0x1f300, 0x1f64f],
  [0x1f900, 0x1f9ff],
  [0x20000, 0x3fffd],
];

const ZERO_WIDTH = /^[\p{Mn}\p{Me}]$/u;

/** Columns one code point takes in a terminal. */
function charWidth(ch: string): number {
  if (ZERO_WIDTH.test(ch)) return 0;
  const cp = ch.codePointAt(0)!;
  return WIDE.some(([from, to]) => cp >= from && cp <= to) ? 2 : 1;
}

/**
 * The terminal columns a text takes (control characters are not expected: muxbridge's records
 * refuse them).
 *
 * @param text The text.
 * @returns Its width.
 *
 * @example
 * ```ts
 * import { displayWidth } from "./_table.ts";
 * displayWidth("review"); // 6
 * displayWidth("レビュー"); // 8
 * ```
 */
export function displayWidth(text: string): number {
  let width = 0;
  for (const ch of text) width += charWidth(ch);
  return width;
}

/**
 * Cuts a text to at most `max` columns, ending it with `…` when something was cut.
 *
 * @param text The text.
 * @param max The widest it may be (at least 1).
 * @returns The text, or its start and `…`.
 *
 * @example
 * ```ts
 * import { truncate } from "./_table.ts";
 * truncate("map the whole repository", 10); // "map the w…"
 * ```
 */
export function truncate(text: string, max: number): string {
  if (displayWidth(text) <= max) return text;
  let out = "";
  let width = 0;
  for (const ch of text) {
    const w = charWidth(ch);
    if (width + w > max - 1) break;
    out += ch;
    width += w;
  }
  return `${out}…`;
}

/**
 * Lays out rows under a header, two spaces between columns, no blanks at the end of a line.
 *
 * @param header The column names.
 * @param rows The cells, as many per row as the header has.
 * @returns The lines, each ending in a newline.
 *
 * @example
 * ```ts
 * import { renderTable } from "./_table.ts";
 * renderTable(["PANE", "STATE"], [["%3", "busy"], ["%12", "idle"]]);
 * // "PANE  STATE\n%3    busy\n%12   idle\n"
 * ```
 */
export function renderTable(
  header: readonly string[],
  rows: ReadonlyArray<readonly string[]>,
): string {
  const all = [header, ...rows];
  const widths = header.map((_, i) => Math.max(...all.map((r) => displayWidth(r[i] ?? ""))));
  return all.map((r) =>
    r.map((cell, i) =>
      i === r.length - 1 ? cell : cell + " ".repeat(widths[i] - displayWidth(cell))
    ).join("  ").trimEnd() + "\n"
  ).join("");
}
