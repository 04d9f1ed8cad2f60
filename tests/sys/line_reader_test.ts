import assert from "node:assert/strict";
import { type LineItem, readLineBatches, readLines } from "../../lib/sys/line_reader.ts";
import { MAX_LINE_BYTES } from "../../lib/bridge/protocol.ts";
import { createRandom } from "../helpers/hostile.ts";

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

// ------------------------------------------------------------------ batches and chunking

async function* from(chunks: Uint8Array[]) {
  yield* chunks;
}

const enc = encode;

/** What the reader must produce, computed the slow, obvious way from the whole input. */
function reference(all: Uint8Array, max: number): LineItem[] {
  const out: LineItem[] = [];
  const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
  let start = 0;
  let lineNo = 0;
  while (start < all.length) {
    let nl = all.indexOf(10, start);
    const last = nl === -1;
    if (last) nl = all.length;
    let bytes = all.subarray(start, nl);
    if (bytes.length && bytes[bytes.length - 1] === 13) bytes = bytes.subarray(0, -1);
    lineNo++;
    if (bytes.length > max) out.push({ kind: "too_long", lineNo, bytes: bytes.length });
    else {
      try {
        let line = decoder.decode(bytes);
        if (lineNo === 1 && line.startsWith("\ufeff")) line = line.slice(1);
        out.push({ kind: "line", line, lineNo });
      } catch {
        out.push({ kind: "bad_utf8", lineNo });
      }
    }
    start = nl + 1;
  }
  return out;
}

/** Compares items; a too_long line's byte count only has to exceed the limit. */
function assertSame(actual: LineItem[], expected: LineItem[], max: number, seed: number) {
  assert.equal(actual.length, expected.length, `line count, seed ${seed}`);
  actual.forEach((a, i) => {
    const e = expected[i];
    if (a.kind === "too_long" && e.kind === "too_long") {
      assert.equal(a.lineNo, e.lineNo);
      assert.ok(a.bytes > max, `reported size ${a.bytes} is over ${max}`);
    } else assert.deepEqual(a, e, `line ${i + 1}, seed ${seed}`);
  });
}

Deno.test("readLines() reports invalid UTF-8 per line and keeps the good lines of the same chunk", async () => {
  const bad = new Uint8Array([0x7b, 0xff, 0x7d, 10]);
  const items = await collect(
    [enc("a\n"), new Uint8Array([...enc("b\n"), ...bad, ...enc("c\n")])],
    10,
  );
  assert.deepEqual(items, [
    { kind: "line", line: "a", lineNo: 1 },
    { kind: "line", line: "b", lineNo: 2 },
    { kind: "bad_utf8", lineNo: 3 },
    { kind: "line", line: "c", lineNo: 4 },
  ]);
});

Deno.test("readLines() drops a BOM only at the start of the stream", async () => {
  const items = await collect([enc("\ufeff{}\n\ufeff{}\n")], 10);
  assert.deepEqual(items.map((i) => i.kind === "line" ? i.line : i.kind), ["{}", "\ufeff{}"]);
});

Deno.test("readLineBatches() yields one batch per chunk that ends a line", async () => {
  const batches = await Array.fromAsync(
    readLineBatches(from([enc("a\nb\nc"), enc("d"), enc("e\nf\n")]), 10),
  );
  assert.deepEqual(batches.map((b) => b.length), [2, 2]);
});

Deno.test("readLines() gives the same lines however the input is cut into chunks (property)", async () => {
  const r = createRandom();
  const pieces = ["a", "é", "\u{1f600}", "\r", "\n", "\r\n", "{}", "\ufeff", "x".repeat(40)];
  for (let round = 0; round < 300; round++) {
    const max = 1 + r.int(60);
    const parts: Uint8Array[] = [];
    for (let i = 0, n = r.int(40); i < n; i++) {
      parts.push(r.next() < 0.05 ? new Uint8Array([0x80 + r.int(0x40)]) : enc(r.pick(pieces)));
    }
    const all = new Uint8Array(parts.reduce((a, p) => a + p.length, 0));
    let at = 0;
    for (const p of parts) (all.set(p, at), at += p.length);
    const chunks: Uint8Array[] = [];
    for (let i = 0; i < all.length;) {
      const len = 1 + r.int(20);
      chunks.push(all.slice(i, i + len));
      i += len;
    }
    assertSame(await collect(chunks, max), reference(all, max), max, r.seed);
  }
});
