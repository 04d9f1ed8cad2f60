/** trackOutput(): flush waits for every write's callback, and a broken stream never blocks. */

import assert from "node:assert/strict";
import { type OutputStream, trackOutput } from "../../lib/sys/output.ts";

/** A stream that holds each write's callback until the test releases it (as a full pipe does). */
function heldStream() {
  const held: Array<{ text: string; done: (err?: Error | null) => void }> = [];
  let onError: ((err: Error) => void) | undefined;
  const stream: OutputStream = {
    write(text, done) {
      // Bun's behaviour for an empty write: the callback runs at once, ahead of queued data.
      if (text === "") done();
      else held.push({ text, done });
      return true;
    },
    on(_event, listener) {
      onError = listener;
    },
  };
  return { stream, held, fail: (err: Error) => onError?.(err) };
}

Deno.test("trackOutput() flush waits until every write so far is written", async () => {
  const { stream, held } = heldStream();
  const out = trackOutput(stream);
  out.write("a\n");
  out.write("bye\n");
  out.write(""); // nothing to write: not waited for
  let flushed = false;
  const flushing = out.flush().then(() => (flushed = true));
  await Promise.resolve();
  assert.deepEqual(held.map((h) => h.text), ["a\n", "bye\n"]);
  held[0].done();
  await Promise.resolve();
  assert.equal(flushed, false, "one write is still queued");
  held[1].done();
  await flushing;
  assert.equal(flushed, true);
  // Nothing pending: at once.
  await out.flush();
});

Deno.test("trackOutput() a stream that broke releases flush and drops later writes", async () => {
  const { stream, held, fail } = heldStream();
  const out = trackOutput(stream);
  out.write("a\n");
  const flushing = out.flush();
  fail(Object.assign(new Error("write EPIPE"), { code: "EPIPE" }));
  await flushing;
  assert.equal(out.broken, true);
  out.write("b\n");
  assert.deepEqual(held.map((h) => h.text), ["a\n"], "nothing is written once broken");
  await out.flush();
});

Deno.test("trackOutput() a write that throws or fails in its callback marks the stream broken", async () => {
  const throwing = trackOutput({
    write() {
      throw new Error("EPIPE");
    },
    on() {},
  });
  throwing.write("a\n");
  assert.equal(throwing.broken, true);
  await throwing.flush();

  const { stream, held } = heldStream();
  const failing = trackOutput(stream);
  failing.write("a\n");
  failing.write("b\n");
  const flushing = failing.flush();
  held[0].done(new Error("EPIPE"));
  await flushing;
  assert.equal(failing.broken, true);
});
