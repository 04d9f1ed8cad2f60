/**
 * Splits a byte stream into lines with a hard length limit: an oversized line is dropped as it
 * streams (never buffered whole) and reported once, and the reader carries on.
 *
 * @module
 */

/** One line, or the report of one that could not be used. */
export type LineItem =
  | { kind: "line"; line: string; lineNo: number }
  | { kind: "too_long"; lineNo: number; bytes: number }
  | { kind: "bad_utf8"; lineNo: number };

/**
 * Reads lines (split on `\n`, a trailing `\r` removed) from chunks of bytes.
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
  const decoder = new TextDecoder("utf-8", { fatal: true });
  let parts: Uint8Array[] = [];
  let size = 0;
  let dropping = false;
  let lineNo = 0;

  const finish = (tail: Uint8Array): LineItem => {
    lineNo++;
    if (dropping) {
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
      parts = [];
      size = 0;
    }
    if (bytes.byteLength > 0 && bytes[bytes.byteLength - 1] === 13) {
      bytes = bytes.subarray(0, bytes.byteLength - 1);
    }
    if (bytes.byteLength > maxBytes) return { kind: "too_long", lineNo, bytes: bytes.byteLength };
    try {
      return { kind: "line", line: decoder.decode(bytes), lineNo };
    } catch {
      return { kind: "bad_utf8", lineNo };
    }
  };

  for await (const chunk of chunks) {
    let start = 0;
    while (start < chunk.byteLength) {
      const nl = chunk.indexOf(10, start);
      if (nl === -1) {
        const rest = chunk.subarray(start);
        if (!dropping) {
          // Keep a copy: the runtime may reuse the chunk's buffer.
          parts.push(rest.slice());
        }
        size += rest.byteLength;
        if (size > maxBytes + 1) {
          dropping = true;
          parts = [];
        }
        break;
      }
      yield finish(chunk.subarray(start, nl));
      start = nl + 1;
    }
  }
  if (size > 0 || parts.length > 0 || dropping) yield finish(new Uint8Array(0));
}
