/**
 * How many terminal columns a pane title takes: East Asian wide and fullwidth characters and
 * most emoji take two, combining marks none, everything else one (the titles reaching here are
 * clean: no control or format characters). A close reading of Unicode's East Asian Width, enough
 * to keep a title within its columns; not a full `wcwidth`.
 *
 * @module
 */

/** Code point ranges that take two columns (inclusive pairs). */
const WIDE: ReadonlyArray<readonly [number, number]> = [
  [0x1100, 0x115f], // Hangul Jamo initials
  [0x231a, 0x231b],
  [0x2329, 0x232a],
  [0x23e9, 0x23ec],
  [0x23f0, 0x23f0],
  [0x23f3, 0x23f3],
  [0x25fd, 0x25fe],
  [0x2614, 0x2615],
  [0x2648, 0x2653],
  [0x267f, 0x267f],
  [0x2693, 0x2693],
  [0x26a1, 0x26a1],
  [0x26aa, 0x26ab],
  [0x26bd, 0x26be],
  [0x26c4, 0x26c5],
  [0x26ce, 0x26ce],
  [0x26d4, 0x26d4],
  [0x26ea, 0x26ea],
  [0x26f2, 0x26f3],
  [0x26f5, 0x26f5],
  [0x26fa, 0x26fa],
  [0x26fd, 0x26fd],
  [0x2705, 0x2705],
  [0x270a, 0x270b],
  [0x2728, 0x2728],
  [0x274c, 0x274c],
  [0x274e, 0x274e],
  [0x2753, 0x2755],
  [0x2757, 0x2757],
  [0x2795, 0x2797],
  [0x27b0, 0x27b0],
  [0x27bf, 0x27bf],
  [0x2b1b, 0x2b1c],
  [0x2b50, 0x2b50],
  [0x2b55, 0x2b55],
  [0x2e80, 0x303e], // CJK radicals, punctuation
  [0x3041, 0x33ff], // kana, CJK symbols
  [0x3400, 0x4dbf], // CJK extension A
  [0x4e00, 0x9fff], // CJK unified ideographs
  [0xa000, 0xa4cf], // Yi
  [0xa960, 0xa97f],
  [0xac00, 0xd7a3], // Hangul syllables
  [0xf900, 0xfaff], // CJK compatibility ideographs
  [0xfe10, 0xfe19],
  [0xfe30, 0xfe6f], // CJK compatibility forms, small forms
  [0xff00, 0xff60], // fullwidth forms
  [0xffe0, 0xffe6],
  [0x16fe0, 0x16fe4],
  [0x17000, 0x18cff], // Tangut
  [0x1b000, 0x1b2ff], // kana supplement
  [0x1f004, 0x1f004],
  [0x1f0cf, 0x1f0cf],
  [0x1f18e, 0x1f18e],
  [0x1f191, 0x1f19a],
  [0x1f200, 0x1f251],
  [0x1f300, 0x1f64f], // pictographs, emoticons
  [0x1f680, 0x1f6ff], // transport and map
  [0x1f7e0, 0x1f7eb],
  [0x1f90c, 0x1f9ff], // supplemental symbols and pictographs
  [0x1fa70, 0x1faff],
  [0x20000, 0x3fffd], // CJK extensions B and beyond
];

const ZERO = /^[\p{Mn}\p{Me}\u200b-\u200f\ufe00-\ufe0f]$/u;

/**
 * The columns one character takes.
 *
 * @param char One code point.
 * @returns 0, 1 or 2.
 */
export function charColumns(char: string): number {
  const cp = char.codePointAt(0) ?? 0;
  if (cp < 0x1100) return cp >= 0x300 && ZERO.test(char) ? 0 : 1;
  if (ZERO.test(char)) return 0;
  let lo = 0;
  let hi = WIDE.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const [a, b] = WIDE[mid];
    if (cp < a) hi = mid - 1;
    else if (cp > b) lo = mid + 1;
    else return 2;
  }
  return 1;
}

/**
 * A text cut to at most `max` columns and at most `max` characters (code points), whole
 * characters only: a wide character takes two columns, and characters that take none (combining
 * marks, of which a hostile title can hold any number) still count as characters.
 *
 * @param text The text.
 * @param max The most columns, and the most characters.
 * @returns The text, or its longest prefix that fits.
 *
 * @example
 * ```ts
 * import { fitColumns } from "./_columns.ts";
 * fitColumns("abc", 2); // "ab"
 * fitColumns("修复解析器", 5); // "修复"
 * ```
 */
export function fitColumns(text: string, max: number): string {
  let used = 0;
  let chars = 0;
  let out = "";
  for (const char of text) {
    used += charColumns(char);
    if (used > max || ++chars > max) break;
    out += char;
  }
  return out;
}
