import assert from "node:assert/strict";
import { type LineItem, readLines } from "../lib/line_reader.ts";
import { MAX_LINE_BYTES } from "../lib/protocol.ts";

const encode = (text: string) => new TextEncoder().encode(text);

async function* fromChunks(chunks: Iterable<Uint8Array>): AsyncGenerator<Uint8Array> {
  for (const chunk of chunks) yield chunk;
}

async function collect(chunks: Iterable<Uint8Array>, max = 64): Promise<LineItem[]> {
  const items: LineItem[] = [];
  for await (const item of readLines(fromChunks(chunks), max)) items.push(item);
  return items;
}

const line = (text: string, lineNo: number): LineItem => ({ kind: "line", line: text, lineNo });

/** Every way of cutting `bytes` into two chunks. */
function* twoCuts(bytes: Uint8Array): Generator<Uint8Array[]> {
  for (let i = 0; i <= bytes.byteLength; i++) yield [bytes.slice(0, i), bytes.slice(i)];
}

Deno.test("readLines() reads nothing from empty input", async () => {
  assert.deepEqual(await collect([]), []);
  assert.deepEqual(await collect([new Uint8Array(0), new Uint8Array(0)]), []);
});

Deno.test("readLines() numbers lines from 1", async () => {
  assert.deepEqual(await collect([encode("a\nb\nc\n")]), [
    line("a", 1),
    line("b", 2),
    line("c", 3),
  ]);
});

Deno.test("readLines() keeps empty lines", async () => {
  assert.deepEqual(await collect([encode("\n\nx\n")]), [line("", 1), line("", 2), line("x", 3)]);
});

Deno.test("readLines() reads a final line without a newline", async () => {
  assert.deepEqual(await collect([encode("a\nlast")]), [line("a", 1), line("last", 2)]);
});

Deno.test("readLines() removes the CR of CRLF line ends", async () => {
  assert.deepEqual(await collect([encode("a\r\nb\r\nc\r")]), [
    line("a", 1),
    line("b", 2),
    line("c", 3),
  ]);
});

Deno.test("readLines() keeps a CR inside a line", async () => {
  assert.deepEqual(await collect([encode("a\rb\n")]), [line("a\rb", 1)]);
});

Deno.test("readLines() gives the same lines however the input is cut into two chunks", async () => {
  const bytes = encode('{"a":1}\r\n\nzwei ü 🙂\nend');
  const want = [line('{"a":1}', 1), line("", 2), line("zwei ü 🙂", 3), line("end", 4)];
  for (const chunks of twoCuts(bytes)) assert.deepEqual(await collect(chunks), want);
});

Deno.test("readLines() joins a multi-byte character split across chunks", async () => {
  const bytes = encode("🙂\n"); // F0 9F 99 82 0A
  const oneByteChunks = Array.from(bytes, (b) => Uint8Array.of(b));
  assert.deepEqual(await collect(oneByteChunks), [line("🙂", 1)]);
  assert.deepEqual(await collect([bytes.slice(0, 2), bytes.slice(2, 3), bytes.slice(3)]), [
    line("🙂", 1),
  ]);
});

Deno.test("readLines() copies chunk bytes, so a reused buffer does not corrupt lines", async () => {
  const buffer = new Uint8Array(4);
  async function* reusing() {
    for (const part of ["ab", "cd\n", "ef\n"]) {
      buffer.fill(0);
      const bytes = encode(part);
      buffer.set(bytes);
      yield buffer.subarray(0, bytes.byteLength);
    }
  }
  const items: LineItem[] = [];
  for await (const item of readLines(reusing(), 64)) items.push(item);
  assert.deepEqual(items, [line("abcd", 1), line("ef", 2)]);
});

Deno.test("readLines() reports invalid UTF-8 as bad_utf8 and goes on", async () => {
  const bad = Uint8Array.of(0x61, 0xff, 0x62, 0x0a); // "a", 0xFF, "b", "\n"
  const truncated = Uint8Array.of(0xf0, 0x9f, 0x0a); // a cut 4-byte sequence
  const surrogate = Uint8Array.of(0xed, 0xa0, 0x80, 0x0a); // UTF-8 of U+D800
  assert.deepEqual(await collect([bad, truncated, surrogate, encode("ok\n")]), [
    { kind: "bad_utf8", lineNo: 1 },
    { kind: "bad_utf8", lineNo: 2 },
    { kind: "bad_utf8", lineNo: 3 },
    line("ok", 4),
  ]);
});

Deno.test("readLines() accepts a line of exactly the limit, also with CRLF", async () => {
  const max = 8;
  assert.deepEqual(await collect([encode(`${"x".repeat(max)}\n`)], max), [line("x".repeat(8), 1)]);
  assert.deepEqual(await collect([encode("x".repeat(max)), encode("\r\n")], max), [
    line("x".repeat(8), 1),
  ]);
});

Deno.test("readLines() reports a line one byte over the limit as too_long", async () => {
  const max = 8;
  assert.deepEqual(await collect([encode(`${"x".repeat(max + 1)}\nnext\n`)], max), [
    { kind: "too_long", lineNo: 1, bytes: 9 },
    line("next", 2),
  ]);
});

Deno.test("readLines() reports a 1 MiB + 1 line once and reads the next line", async () => {
  const big = encode(`${"x".repeat(MAX_LINE_BYTES + 1)}\n{"type":"bridge.ping"}\n`);
  const items = await collect([big], MAX_LINE_BYTES);
  assert.deepEqual(items, [
    { kind: "too_long", lineNo: 1, bytes: MAX_LINE_BYTES + 1 },
    line('{"type":"bridge.ping"}', 2),
  ]);
});

Deno.test("readLines() reports a 1 MiB + 1 line in small chunks once and reads the next line", async () => {
  const body = encode("y".repeat(MAX_LINE_BYTES + 1));
  const chunks: Uint8Array[] = [encode("first\n")];
  for (let at = 0; at < body.byteLength; at += 1000) chunks.push(body.slice(at, at + 1000));
  chunks.push(encode("\nafter\n"));
  assert.deepEqual(await collect(chunks, MAX_LINE_BYTES), [
    line("first", 1),
    { kind: "too_long", lineNo: 2, bytes: MAX_LINE_BYTES + 1 },
    line("after", 3),
  ]);
});

Deno.test("readLines() reports an oversized final line without a newline", async () => {
  assert.deepEqual(await collect([encode("a\n"), encode("z".repeat(100))], 10), [
    line("a", 1),
    { kind: "too_long", lineNo: 2, bytes: 100 },
  ]);
});

Deno.test("readLines() streams a 64 MiB line in 64 KiB chunks without keeping it", async () => {
  const chunk = new Uint8Array(64 * 1024).fill(0x7a);
  const count = (64 * 1024 * 1024) / chunk.byteLength;
  let yielded = 0;
  async function* stream() {
    // One buffer, yielded over and over: the reader must not keep references past the limit.
    for (let i = 0; i < count; i++) {
      yielded++;
      yield chunk;
    }
    yield encode("\nok\n");
  }
  const before = Deno.memoryUsage().rss;
  let peak = before;
  const items: LineItem[] = [];
  for await (const item of readLines(stream(), MAX_LINE_BYTES)) {
    items.push(item);
    peak = Math.max(peak, Deno.memoryUsage().rss);
  }
  assert.equal(yielded, count);
  assert.deepEqual(items, [
    { kind: "too_long", lineNo: 1, bytes: 64 * 1024 * 1024 },
    line("ok", 2),
  ]);
  // A reader keeping the line would hold 64 MiB more; about 1 MiB is what it may keep.
  assert.ok(peak - before < 16 * 1024 * 1024, `rss grew ${(peak - before) >> 20} MiB`);
});

Deno.test("readLines() counts every byte of a line dropped across chunks", async () => {
  const chunks = [encode("a".repeat(10)), encode("a".repeat(10)), encode("a".repeat(10) + "\n")];
  assert.deepEqual(await collect(chunks, 15), [{ kind: "too_long", lineNo: 1, bytes: 30 }]);
});
