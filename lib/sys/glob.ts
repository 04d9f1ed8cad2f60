/**
 * Glob patterns for the `exclude` config key: the shell's pattern language on one string, with
 * no path rules (`/` is an ordinary character). `*` matches any run of characters, `?` one
 * character, `[abc]`, `[a-z]` and `[!abc]` (or `[^abc]`) one character of (or not of) a set, and
 * `\` makes the next character literal. A pattern matches the whole string, ignoring case.
 *
 * @module
 */

/** The longest pattern accepted, in characters. */
export const MAX_GLOB = 256;

/**
 * Why a glob pattern is not valid, or null when it is.
 *
 * @param pattern The pattern.
 * @returns The problem in a few words, or null.
 *
 * @example
 * ```ts
 * import { globProblem } from "./glob.ts";
 * globProblem("explore"); // null
 * globProblem("[abc"); // "a [ is never closed"
 * ```
 */
export function globProblem(pattern: string): string | null {
  try {
    compileGlob(pattern);
    return null;
  } catch (err) {
    return (err as SyntaxError).message.replace(/^Cannot use glob "[^]*": /, "");
  }
}

/** A compiled glob pattern. */
export interface Glob {
  /** The pattern as given. */
  readonly source: string;
  /**
   * Whether the pattern matches all of `text` (ignoring case). Time is at most the product of
   * the two lengths, whatever the pattern: no backtracking blow-up.
   */
  test(text: string): boolean;
}

type Token =
  | { readonly kind: "star" }
  | { readonly kind: "one" }
  | { readonly kind: "char"; readonly c: string }
  | {
    readonly kind: "set";
    readonly negated: boolean;
    readonly ranges: ReadonlyArray<readonly [string, string]>;
  };

/**
 * Compiles a glob pattern.
 *
 * @param pattern The pattern (1 to {@linkcode MAX_GLOB} characters).
 * @returns The compiled pattern.
 * @throws {SyntaxError} For an empty or too long pattern, a `[` never closed, a range whose ends
 *   are reversed, or a pattern ending in a lone `\`.
 *
 * @example
 * ```ts
 * import { compileGlob } from "./glob.ts";
 * compileGlob("*review*").test("Code Review of lib"); // true
 * compileGlob("explore").test("explorer"); // false
 * ```
 */
export function compileGlob(pattern: string): Glob {
  const bad = (why: string) =>
    new SyntaxError(`Cannot use glob ${JSON.stringify(pattern)}: ${why}`);
  const chars = Array.from(pattern);
  if (chars.length === 0) throw bad("it is empty");
  if (chars.length > MAX_GLOB) throw bad(`it is longer than ${MAX_GLOB} characters`);
  const tokens: Token[] = [];
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i];
    if (c === "*") {
      if (tokens.at(-1)?.kind !== "star") tokens.push({ kind: "star" });
    } else if (c === "?") {
      tokens.push({ kind: "one" });
    } else if (c === "\\") {
      if (i + 1 >= chars.length) throw bad("it ends in a lone \\");
      tokens.push({ kind: "char", c: fold(chars[++i]) });
    } else if (c === "[") {
      const set = readSet(chars, i + 1, bad);
      tokens.push(set.token);
      i = set.end;
    } else {
      tokens.push({ kind: "char", c: fold(c) });
    }
  }
  return { source: pattern, test: (text) => matches(tokens, Array.from(text, fold)) };
}

/** One character, case folded. */
function fold(c: string): string {
  return c.toLowerCase();
}

/** Whether one token (not a star) takes this character. */
function takes(token: Exclude<Token, { kind: "star" }>, c: string): boolean {
  switch (token.kind) {
    case "one":
      return true;
    case "char":
      return token.c === c;
    case "set": {
      const upper = c.toUpperCase();
      const hit = token.ranges.some(([from, to]) =>
        (c >= from && c <= to) || (upper >= from && upper <= to)
      );
      return hit !== token.negated;
    }
  }
}

/** The classic wildcard match: one pass, falling back to the last star (O(text × pattern)). */
function matches(tokens: readonly Token[], text: readonly string[]): boolean {
  let t = 0;
  let p = 0;
  let star = -1;
  let resume = 0;
  while (t < text.length) {
    const token = tokens[p];
    if (token !== undefined && token.kind !== "star" && takes(token, text[t])) {
      t++;
      p++;
    } else if (token?.kind === "star") {
      star = p++;
      resume = t;
    } else if (star >= 0) {
      p = star + 1;
      t = ++resume;
    } else {
      return false;
    }
  }
  while (tokens[p]?.kind === "star") p++;
  return p === tokens.length;
}

/** Reads a `[...]` set starting after its `[`; returns it and the index of its `]`. */
function readSet(
  chars: readonly string[],
  start: number,
  bad: (why: string) => SyntaxError,
): { token: Token; end: number } {
  let i = start;
  const negated = chars[i] === "!" || chars[i] === "^";
  if (negated) i++;
  const ranges: Array<readonly [string, string]> = [];
  let first = true;
  for (; i < chars.length; i++) {
    let c = chars[i];
    // A `]` first in the set is a member, as in the shell.
    if (c === "]" && !first) return { token: { kind: "set", negated, ranges }, end: i };
    first = false;
    if (c === "\\") {
      if (i + 1 >= chars.length) break;
      c = chars[++i];
    }
    if (chars[i + 1] === "-" && i + 2 < chars.length && chars[i + 2] !== "]") {
      let to = chars[i + 2];
      i += 2;
      if (to === "\\") {
        if (i + 1 >= chars.length) break;
        to = chars[++i];
      }
      if (to.codePointAt(0)! < c.codePointAt(0)!) throw bad(`the range ${c}-${to} is reversed`);
      ranges.push([fold(c), fold(to)], [c.toUpperCase(), to.toUpperCase()]);
    } else {
      ranges.push([fold(c), fold(c)]);
    }
  }
  throw bad("a [ is never closed");
}
