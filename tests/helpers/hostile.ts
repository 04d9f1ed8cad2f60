/**
 * Seeded random hostile strings for property tests: shell and tmux syntax, control and escape
 * sequences, bidi and zero-width characters, leading dashes, astral characters and very long
 * values. The seed comes from `MUXBRIDGE_SEED` when set (to replay a failure), else from the
 * clock, and the test prints it.
 *
 * @module
 */

/** A seeded pseudo-random source (mulberry32). */
export interface Random {
  /** The seed it started from. */
  readonly seed: number;
  /** A float in [0, 1). */
  next(): number;
  /** An integer in [0, n). */
  int(n: number): number;
  /** One element. */
  pick<T>(items: readonly T[]): T;
}

/**
 * Creates a seeded random source.
 *
 * @param seed The seed; default `MUXBRIDGE_SEED` or the clock.
 * @returns The source.
 */
export function createRandom(seed?: number): Random {
  const fromEnv = Number(Deno.env.get("MUXBRIDGE_SEED"));
  const s = seed ?? (Number.isInteger(fromEnv) && fromEnv > 0 ? fromEnv : Date.now() % 2 ** 31);
  let a = s >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    seed: s,
    next,
    int: (n) => Math.floor(next() * n),
    pick: (items) => items[Math.floor(next() * items.length)],
  };
}

/** Fragments that mean something to a shell, to tmux's parser or formats, or to a terminal. */
export const FRAGMENTS: readonly string[] = [
  "'",
  '"',
  "\\",
  "\\\\",
  "$(touch pwned)",
  "`touch pwned`",
  "${HOME}",
  "$HOME",
  "~",
  "~root",
  ";",
  " ; ",
  "\\;",
  "&&",
  "|",
  ">",
  "<",
  "*",
  "?",
  "[a]",
  "#",
  "#{pane_id}",
  "##",
  "#(touch pwned)",
  "#[fg=red]",
  "%if",
  "%hidden X=1",
  "%endif",
  "{",
  "}",
  "=",
  "X=1",
  "-",
  "--",
  "-e",
  "-rf",
  "--help",
  " ",
  "  ",
  "\t",
  "\n",
  "\r",
  "\r\n",
  "\x1b]0;evil\x07",
  "\x1b[31m",
  "\x1bP",
  "\x07",
  "\x08",
  "\x7f",
  "\x01",
  "\x1e",
  "\x1f",
  "\u0085",
  "\u009b",
  "\u2028",
  "\u2029",
  "\u202e",
  "\u202d",
  "\u2066",
  "\u2069",
  "\u200b",
  "\u200d",
  "\u200e",
  "\ufeff",
  "\u00e9",
  "\u6f22",
  "\u{1f600}",
  "\u{1f468}\u200d\u{1f469}",
  "\ufffd",
  "ses_",
  "%1",
  "@1",
  "$1",
  "muxbridge-sync-1",
  "%end 1 2 1",
  "a",
  "Z",
  "0",
  "/",
  "..",
  ".",
];

/** Options of {@linkcode hostileString}. */
export interface HostileOptions {
  /** Most fragments in one string. @default 12 */
  maxParts?: number;
  /** Chance of a very long value (thousands of characters). @default 0.05 */
  longChance?: number;
  /** Chance of a leading dash. @default 0.15 */
  dashChance?: number;
  /** Allow NUL characters. @default false */
  nul?: boolean;
}

/**
 * A random hostile string.
 *
 * @param r The random source.
 * @param options Shape.
 * @returns The string (never empty).
 */
export function hostileString(r: Random, options: HostileOptions = {}): string {
  const parts: string[] = [];
  const n = 1 + r.int(options.maxParts ?? 12);
  for (let i = 0; i < n; i++) {
    const roll = r.next();
    if (roll < 0.6) parts.push(r.pick(FRAGMENTS));
    else if (roll < 0.85) parts.push(String.fromCharCode(0x20 + r.int(0x5f)));
    else if (options.nul && roll < 0.88) parts.push("\0");
    else parts.push(String.fromCodePoint(randomCodePoint(r)));
  }
  let s = parts.join("");
  if (r.next() < (options.longChance ?? 0.05)) {
    s = s.repeat(Math.ceil(4000 / Math.max(1, s.length)));
  }
  if (r.next() < (options.dashChance ?? 0.15)) s = `-${s}`;
  return s === "" ? "x" : s;
}

/** Any code point except surrogates (and NUL, added only on request). */
function randomCodePoint(r: Random): number {
  while (true) {
    const roll = r.next();
    const cp = roll < 0.3
      ? 1 + r.int(0x7f)
      : roll < 0.6
      ? 0x80 + r.int(0x780)
      : roll < 0.9
      ? 0x800 + r.int(0xf800)
      : 0x10000 + r.int(0x100000);
    if (cp < 0xd800 || cp > 0xdfff) return cp;
  }
}
