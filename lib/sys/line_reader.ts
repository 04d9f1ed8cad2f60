/**
 * Splits a byte stream into lines with a hard length limit: an oversized line is dropped as it
 * streams (never buffered whole) and reported once, and the reader carries on.
 *
 * This is the bridge's hot path (OpenCode sends hundreds of `message.part.delta` lines a
 * second). Lines come out in batches, one per input chunk, and the complete lines of a chunk are
 * decoded with one `TextDecoder` call rather than one per line; only a chunk holding invalid
 * UTF-8 is decoded line by line, to find the bad lines (`bench/throughput.ts` measures it).
 *
 * @module
 */

/** One line, or the report of one that could not be used. */
export type LineItem =
  | { kind: "line"; line: string; lineNo: number }
  | { kind: "too_long"; lineNo: number; bytes: number }
  | { kind: "bad_utf8"; lineNo: number };

const NL = 10;
const CR = 13;

/**
 * Reads lines (split on `\n`, a trailing `\r` removed) from chunks of bytes, a batch per chunk.
 *
 * @param chunks The byte stream.
 * @param maxBytes The longest line accepted, in bytes, without its newline.
 * @returns Batches of lines in order, numbered from 1 (a chunk without a line end yields
 *   nothing). A final line without a newline counts.
 *
 * @example
 * ```ts
 * import { readLineBatches } from "./line_reader.ts";
 * async function* once() { yield new TextEncoder().encode("a\nb\n"); }
 * for await (const batch of readLineBatches(once(), 10)) console.log(batch.length); // 2
 * ```
 */
export async function* readLineBatches(
  chunks: AsyncIterable<Uint8Array>,
  maxBytes: number,
): AsyncGenerator<LineItem[]> {
  // ignoreBOM: a decoder would drop a BOM at the start of every decode call, hence of some lines
  // and not others; only a BOM that starts the stream is dropped (below).
  const fatal = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
  const unBOM = (line: string, no: number) =>
    no === 1 && line.charCodeAt(0) === 0xfeff ? line.slice(1) : line;
  // The unfinished line carried over from earlier chunks (copied: a runtime may reuse buffers).
  let parts: Uint8Array[] = [];
  let size = 0;
  let dropping = false;
  let lineNo = 0;

  /** One line's bytes (its `\r\n` or `\n` excluded by the caller) as an item. */
  const single = (bytes: Uint8Array): LineItem => {
    lineNo++;
    let b = bytes;
    if (b.byteLength > 0 && b[b.byteLength - 1] === CR) b = b.subarray(0, b.byteLength - 1);
    if (b.byteLength > maxBytes) return { kind: "too_long", lineNo, bytes: b.byteLength };
    try {
      return { kind: "line", line: unBOM(fatal.decode(b), lineNo), lineNo };
    } catch {
      return { kind: "bad_utf8", lineNo };
    }
  };

  /** Ends the carried-over line with `tail`. */
  const finishCarried = (tail: Uint8Array): LineItem => {
    if (dropping) {
      lineNo++;
      const item: LineItem = { kind: "too_long", lineNo, bytes: size + tail.byteLength };
      dropping = false;
      parts = [];
      size = 0;
      return item;
    }
    let bytes = tail;
    if (parts.length > 0) {
      bytes = new Uint8Array(size + tail.byteLength);
      let at = 0;
      for (const p of parts) {
        bytes.set(p, at);
        at += p.byteLength;
      }
      bytes.set(tail, at);
    }
    parts = [];
    size = 0;
    return single(bytes);
  };

  /** Every complete line of `chunk[from, to)` (`to` is just past the last `\n`), in order. */
  const middle = (chunk: Uint8Array, from: number, to: number, out: LineItem[]) => {
    if (from >= to) return;
    if (to - from - 1 <= maxBytes) {
      // No line here can be too long: decode the whole span at once.
      let text: string | null = null;
      try {
        text = fatal.decode(chunk.subarray(from, to - 1));
      } catch {
        text = null; // invalid UTF-8 somewhere: find it line by line below
      }
      if (text !== null) {
        for (const raw of text.split("\n")) {
          lineNo++;
          const line = raw.charCodeAt(raw.length - 1) === CR ? raw.slice(0, -1) : raw;
          out.push({ kind: "line", line: unBOM(line, lineNo), lineNo });
        }
        return;
      }
    }
    let start = from;
    while (start < to) {
      const nl = chunk.indexOf(NL, start);
      out.push(single(chunk.subarray(start, nl)));
      start = nl + 1;
    }
  };

  for await (const chunk of chunks) {
    if (chunk.byteLength === 0) continue;
    const first = chunk.indexOf(NL);
    if (first === -1) {
      // No line ends here: carry it (or count it while dropping an oversized line).
      if (!dropping) parts.push(chunk.slice());
      size += chunk.byteLength;
      if (size > maxBytes + 1) {
        dropping = true;
        parts = [];
      }
      continue;
    }
    const out: LineItem[] = [];
    out.push(finishCarried(chunk.subarray(0, first)));
    const last = chunk.lastIndexOf(NL);
    middle(chunk, first + 1, last + 1, out);
    const rest = chunk.subarray(last + 1);
    if (rest.byteLength > 0) {
      parts.push(rest.slice());
      size = rest.byteLength;
      if (size > maxBytes + 1) {
        dropping = true;
        parts = [];
      }
    }
    yield out;
  }
  if (size > 0 || dropping) yield [finishCarried(new Uint8Array(0))];
}

/**
 * Reads lines one at a time (see {@linkcode readLineBatches}).
 *
 * @param chunks The byte stream.
 * @param maxBytes The longest line accepted, in bytes, without its newline.
 * @returns The lines in order, numbered from 1. A final line without a newline counts.
 *
 * @example
 * ```ts
 * import { readLines } from "./line_reader.ts";
 * async function* once() { yield new TextEncoder().encode("a\nb"); }
 * for await (const item of readLines(once(), 10)) console.log(item);
 * ```
 */
export async function* readLines(
  chunks: AsyncIterable<Uint8Array>,
  maxBytes: number,
): AsyncGenerator<LineItem> {
  for await (const batch of readLineBatches(chunks, maxBytes)) yield* batch;
}
