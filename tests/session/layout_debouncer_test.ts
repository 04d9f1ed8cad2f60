import assert from "node:assert/strict";
import { LAYOUT_DEBOUNCE_MS, LayoutDebouncer } from "../../lib/session/layout_debouncer.ts";
import { SerialQueue } from "../../lib/session/serial_queue.ts";
import { createFakeClock } from "../fakes/fake_clock.ts";

function setup() {
  const clock = createFakeClock();
  const queue = new SerialQueue((err) => assert.fail(String(err)));
  const events: string[] = [];
  const layout = new LayoutDebouncer({
    clock,
    queue,
    pass: () => Promise.resolve(void events.push("layout")),
  });
  return { clock, queue, events, layout };
}

Deno.test("LayoutDebouncer turns a burst of requests into one pass", async () => {
  const h = setup();
  for (let i = 0; i < 20; i++) h.layout.request();
  await h.clock.advance(LAYOUT_DEBOUNCE_MS - 1);
  assert.deepEqual(h.events, [], "not before the debounce ends");
  await h.clock.advance(1);
  assert.deepEqual(h.events, ["layout"]);
  await h.clock.advance(1000);
  assert.deepEqual(h.events, ["layout"], "one pass for the burst");
});

Deno.test("LayoutDebouncer runs its pass after the jobs queued before it", async () => {
  const h = setup();
  let release!: () => void;
  void h.queue.run(() => new Promise<void>((resolve) => (release = resolve)));
  void h.queue.run(() => Promise.resolve(void h.events.push("spawn")));
  h.layout.request();
  await h.clock.advance(LAYOUT_DEBOUNCE_MS);
  assert.deepEqual(h.events, [], "the pass waits behind the spawn in flight");
  release();
  await h.clock.flush();
  assert.deepEqual(h.events, ["spawn", "layout"]);
});

Deno.test("LayoutDebouncer asks for a new pass once the pending one has started", async () => {
  const h = setup();
  h.layout.request();
  await h.clock.advance(LAYOUT_DEBOUNCE_MS);
  h.layout.request();
  await h.clock.advance(LAYOUT_DEBOUNCE_MS);
  assert.deepEqual(h.events, ["layout", "layout"]);
});

Deno.test("LayoutDebouncer stop() drops the pending pass and every later request", async () => {
  const h = setup();
  h.layout.request();
  h.layout.stop();
  h.layout.request();
  await h.clock.advance(1000);
  assert.deepEqual(h.events, []);
  assert.equal(h.clock.pending(), 0, "no timer left behind");
});
