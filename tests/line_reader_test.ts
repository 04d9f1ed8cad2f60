import assert from "node:assert/strict";
import { type LineItem, readLineBatches, readLines } from "../lib/line_reader.ts";
import { createRandom } from "./helpers/hostile.ts";

async function* from(chunks: Uint8Array[]) {
  yield* chunks;
}

async function collect(chunks: Uint8Array[], max: number): Promise<LineItem[]> {
  return await Array.fromAsync(readLines(from(chunks), max));
}

const enc = (s: string) => new TextEncoder().encode(s);

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

Deno.test("readLines() splits on \\n, drops a trailing \\r, counts a final line without newline", async () => {
  assert.deepEqual(await collect([enc("a\r\nb\n\nc")], 10), [
    { kind: "line", line: "a", lineNo: 1 },
    { kind: "line", line: "b", lineNo: 2 },
    { kind: "line", line: "", lineNo: 3 },
    { kind: "line", line: "c", lineNo: 4 },
  ]);
});

Deno.test("readLines() reports an oversized line once, across chunks, without buffering it, and goes on", async () => {
  const big = new Uint8Array(100).fill(0x61);
  const items = await collect([enc("ok\nxx"), big, big, enc("yy\nnext\n")], 50);
  assert.deepEqual(items, [
    { kind: "line", line: "ok", lineNo: 1 },
    { kind: "too_long", lineNo: 2, bytes: 204 },
    { kind: "line", line: "next", lineNo: 3 },
  ]);
});

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
