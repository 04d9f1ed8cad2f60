/**
 * "Did you mean …?" for a mistyped command or flag: the closest known name by edit distance
 * (insertions, deletions, substitutions and swaps of two neighbouring letters each count one),
 * or the one name the input starts, and nothing when no name is close enough to be a guess
 * worth printing.
 *
 * @module
 */

/**
 * The optimal-string-alignment distance between two strings: the Levenshtein distance where
 * swapping two adjacent characters also costs one (`lsit` → `list` is one edit, not two).
 *
 * @param a One string.
 * @param b The other.
 * @returns The number of edits.
 *
 * @example
 * ```ts
 * import { editDistance } from "./suggest.ts";
 * editDistance("lsit", "list"); // 1
 * editDistance("doctr", "doctor"); // 1
 * ```
 */
export function editDistance(a: string, b: string): number {
  const x = Array.from(a);
  const y = Array.from(b);
  // d[i][j]: distance between the first i characters of x and the first j of y.
  const d: number[][] = Array.from({ length: x.length + 1 }, (_, i) => {
    const row = new Array<number>(y.length + 1).fill(0);
    row[0] = i;
    return row;
  });
  for (let j = 0; j <= y.length; j++) d[0][j] = j;
  for (let i = 1; i <= x.length; i++) {
    for (let j = 1; j <= y.length; j++) {
      const cost = x[i - 1] === y[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && x[i - 1] === y[j - 2] && x[i - 2] === y[j - 1]) {
        d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[x.length][y.length];
}

/** How many edits a guess may be away: one for short words, up to three for long ones. */
function allowedEdits(input: string): number {
  const n = Array.from(input).length;
  return n <= 4 ? 1 : n <= 8 ? 2 : 3;
}

/**
 * The known name a mistyped one most likely meant.
 *
 * Case is ignored. The closest name within the allowed edits wins (one edit for inputs of up to
 * four characters, two up to eight, three beyond), the earlier one in `known` on a tie;
 * failing that, the only name that starts with the input (at least two characters), so `doc`
 * finds `doctor` but `de` (`detect` or `demo`) finds nothing.
 *
 * @param input What was typed.
 * @param known The names it may have meant, in the order ties are broken.
 * @returns The suggestion, or undefined when none is close enough.
 *
 * @example
 * ```ts
 * import { suggest } from "./suggest.ts";
 * suggest("lsit", ["install", "list", "layout"]); // "list"
 * suggest("doc", ["detect", "doctor", "demo"]); // "doctor"
 * suggest("frobnicate", ["list"]); // undefined
 * ```
 */
export function suggest(input: string, known: readonly string[]): string | undefined {
  const typed = input.toLowerCase();
  if (typed === "") return undefined;
  let best: { name: string; distance: number } | undefined;
  for (const name of known) {
    const distance = editDistance(typed, name.toLowerCase());
    if (distance <= allowedEdits(typed) && (best === undefined || distance < best.distance)) {
      best = { name, distance };
    }
  }
  if (best) return best.name;
  if (Array.from(typed).length < 2) return undefined;
  const starts = known.filter((name) => name.toLowerCase().startsWith(typed));
  return starts.length === 1 ? starts[0] : undefined;
}
