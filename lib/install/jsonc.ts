/**
 * Just enough JSONC for OpenCode's config files: parse JSON with comments and trailing commas
 * (what OpenCode accepts in `opencode.json` and `opencode.jsonc`), keeping where each value
 * sits in the text, so that an edit can replace the bytes of one value and keep every other
 * byte (comments, layout, key order) as the user wrote it.
 *
 * @module
 */

/** A parsed value and where its text starts and ends (`end` exclusive). */
export type JsoncNode =
  | { kind: "object"; start: number; end: number; props: JsoncProp[] }
  | { kind: "array"; start: number; end: number; items: JsoncNode[]; commas: number[] }
  | { kind: "string"; start: number; end: number; value: string }
  | { kind: "number" | "literal"; start: number; end: number; value: unknown };

/** One member of an object. */
export interface JsoncProp {
  /** The key. */
  key: string;
  /** The value. */
  value: JsoncNode;
}

/**
 * Parses JSONC text.
 *
 * @param text The file's text.
 * @returns The root value with its offsets.
 * @throws {SyntaxError} With the line and column of the first error.
 *
 * @example
 * ```ts
 * import { parseJsonc } from "./jsonc.ts";
 * const root = parseJsonc('{ "plugin": ["a", ], // note\n}');
 * ```
 */
export function parseJsonc(text: string): JsoncNode {
  let i = 0;
  const fail = (what: string): never => {
    const before = text.slice(0, i);
    const line = before.split("\n").length;
    const column = i - before.lastIndexOf("\n");
    throw new SyntaxError(`${what} at line ${line}, column ${column}`);
  };
  const skip = () => {
    for (;;) {
      const c = text[i];
      if (c === " " || c === "\t" || c === "\n" || c === "\r" || c === "\uFEFF") i++;
      else if (c === "/" && text[i + 1] === "/") {
        while (i < text.length && text[i] !== "\n") i++;
      } else if (c === "/" && text[i + 1] === "*") {
        const close = text.indexOf("*/", i + 2);
        if (close < 0) fail("Unterminated comment");
        i = close + 2;
      } else return;
    }
  };
  const string = (): JsoncNode => {
    const start = i;
    i++;
    while (i < text.length && text[i] !== '"') {
      if (text[i] === "\\") i++;
      else if (text.charCodeAt(i) < 0x20) fail("Control character in a string");
      i++;
    }
    if (i >= text.length) fail("Unterminated string");
    i++;
    let value: string;
    try {
      value = JSON.parse(text.slice(start, i));
    } catch {
      return fail("Invalid escape in a string");
    }
    return { kind: "string", start, end: i, value };
  };
  const value = (): JsoncNode => {
    skip();
    const start = i;
    const c = text[i];
    if (c === "{") {
      i++;
      const props: JsoncProp[] = [];
      for (;;) {
        skip();
        if (text[i] === "}") break;
        if (text[i] !== '"') fail("Expected a key or '}'");
        const key = string();
        skip();
        if (text[i] !== ":") fail("Expected ':'");
        i++;
        props.push({ key: (key as { value: string }).value, value: value() });
        skip();
        if (text[i] === ",") i++;
        else if (text[i] !== "}") fail("Expected ',' or '}'");
      }
      i++;
      return { kind: "object", start, end: i, props };
    }
    if (c === "[") {
      i++;
      const items: JsoncNode[] = [];
      const commas: number[] = [];
      for (;;) {
        skip();
        if (text[i] === "]") break;
        items.push(value());
        skip();
        if (text[i] === ",") commas.push(i++);
        else if (text[i] !== "]") fail("Expected ',' or ']'");
      }
      i++;
      return { kind: "array", start, end: i, items, commas };
    }
    if (c === '"') return string();
    const m = /^(?:-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null)/.exec(
      text.slice(i, i + 400),
    );
    if (!m) return fail(i >= text.length ? "Unexpected end of text" : "Unexpected character");
    i += m[0].length;
    const parsed: unknown = JSON.parse(m[0]);
    return typeof parsed === "number"
      ? { kind: "number", start, end: i, value: parsed }
      : { kind: "literal", start, end: i, value: parsed };
  };
  const root = value();
  skip();
  if (i < text.length) fail("Unexpected text after the value");
  return root;
}

/**
 * Removes array items from JSONC text, keeping every other byte: each item goes with the comma
 * that follows it (or, for the last item, the one before it).
 *
 * @param text The file's text.
 * @param array The array node (from {@linkcode parseJsonc} of the same text).
 * @param indexes The items to remove.
 * @returns The new text.
 */
export function removeItems(text: string, array: JsoncNode, indexes: readonly number[]): string {
  if (array.kind !== "array") throw new TypeError("removeItems() needs an array node");
  const { items, commas } = array;
  const remove = new Set(indexes.filter((k) => k >= 0 && k < items.length));
  if (remove.size === 0) return text;
  let cuts: Array<[number, number]> = [];
  const last = items.length - 1;
  const tailEnd = commas[last] !== undefined ? commas[last] + 1 : items[last].end;
  const kept = items.flatMap((_, k) => (remove.has(k) ? [] : [k]));
  if (kept.length === 0) {
    cuts.push([items[0].start, tailEnd]);
  } else {
    const lastKept = kept[kept.length - 1];
    for (const k of remove) {
      if (k > lastKept) continue; // the removed tail is cut in one piece below
      let end = commas[k] + 1;
      while (text[end] === " " || text[end] === "\t") end++;
      cuts.push([items[k].start, end]);
    }
    // Items after the last kept one go with the comma before them (and a trailing comma).
    if (lastKept < last) cuts.push([commas[lastKept], tailEnd]);
  }
  cuts.sort((a, b) => a[0] - b[0]);
  const merged: Array<[number, number]> = [];
  for (const cut of cuts) {
    const prev = merged.at(-1);
    if (prev && cut[0] <= prev[1]) prev[1] = Math.max(prev[1], cut[1]);
    else merged.push([...cut]);
  }
  cuts = merged;
  let out = text;
  for (const [from, to] of cuts.reverse()) out = out.slice(0, from) + out.slice(to);
  return out;
}

/**
 * Converts a node to its plain value.
 *
 * @param node A parsed node.
 * @returns The value as `JSON.parse` would give it.
 */
export function plain(node: JsoncNode): unknown {
  switch (node.kind) {
    case "object":
      return Object.fromEntries(node.props.map((p) => [p.key, plain(p.value)]));
    case "array":
      return node.items.map(plain);
    default:
      return node.value;
  }
}
