import assert from "node:assert/strict";
import { createRealClock, sleep, waitFor } from "../../lib/sys/clock.ts";
import { createFakeClock } from "../fakes/fake_clock.ts";

const START = 1_000_000;

/** Tells whether a promise has settled, without waiting for it. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  const marker = Symbol();
  return await Promise.race([promise.then(() => true), Promise.resolve(marker)]) !== marker;
}

// ---------------------------------------------------------------- sleep

Deno.test("sleep() resolves true once the time has passed on the clock", async () => {
  const clock = createFakeClock(START);
  const done = sleep(clock, 250);
  await clock.advance(249);
  assert.equal(await settled(done), false);
  await clock.advance(1);
  assert.equal(await done, true);
  assert.equal(clock.now(), START + 250);
  assert.equal(clock.pending(), 0);
});

Deno.test("sleep() resolves false when the signal aborts and clears its timer", async () => {
  const clock = createFakeClock(START);
  const controller = new AbortController();
  const done = sleep(clock, 1000, controller.signal);
  await clock.advance(100);
  assert.equal(clock.pending(), 1);
  controller.abort();
  assert.equal(await done, false);
  assert.equal(clock.pending(), 0);
  assert.equal(clock.now(), START + 100);
});

Deno.test("sleep() resolves false at once for an already aborted signal", async () => {
  const clock = createFakeClock(START);
  assert.equal(await sleep(clock, 1000, AbortSignal.abort()), false);
  assert.equal(clock.pending(), 0);
});

Deno.test("sleep() stops listening to the signal once the time has passed", async () => {
  const clock = createFakeClock(START);
  const controller = new AbortController();
  const done = sleep(clock, 10, controller.signal);
  await clock.advance(10);
  assert.equal(await done, true);
  controller.abort(); // late: nothing left to cancel, and no throw
  assert.equal(clock.pending(), 0);
});

// ---------------------------------------------------------------- waitFor

Deno.test("waitFor() returns true at once when the condition already holds", async () => {
  const clock = createFakeClock(START);
  let checks = 0;
  const ok = await waitFor(clock, () => {
    checks++;
    return true;
  }, { deadline: START + 1000 });
  assert.equal(ok, true);
  assert.equal(checks, 1);
  assert.equal(clock.pending(), 0);
});

Deno.test("waitFor() returns true when the condition flips before the deadline", async () => {
  const clock = createFakeClock(START);
  let gone = false;
  const checkedAt: number[] = [];
  const result = waitFor(clock, () => {
    checkedAt.push(clock.now() - START);
    return gone;
  }, { deadline: START + 250 });
  await clock.advance(35);
  gone = true;
  await clock.advance(100);
  assert.equal(await result, true);
  // Checks at 0, 10, 30, then 70 sees the flip: the pauses doubled from 10 ms.
  assert.deepEqual(checkedAt, [0, 10, 30, 70]);
  assert.equal(clock.pending(), 0);
});

Deno.test("waitFor() returns false at the deadline after checking at the deadline", async () => {
  const clock = createFakeClock(START);
  const checkedAt: number[] = [];
  const result = waitFor(clock, () => {
    checkedAt.push(clock.now() - START);
    return false;
  }, { deadline: START + 250 });
  await clock.advance(1000);
  assert.equal(await result, false);
  assert.equal(checkedAt.at(-1), 250, "the last check is at the deadline");
  assert.deepEqual(checkedAt, [0, 10, 30, 70, 150, 250]);
  assert.equal(clock.pending(), 0);
});

Deno.test("waitFor() sees a condition that turns true exactly at the deadline", async () => {
  const clock = createFakeClock(START);
  const result = waitFor(clock, () => clock.now() >= START + 250, { deadline: START + 250 });
  await clock.advance(250);
  assert.equal(await result, true);
});

Deno.test("waitFor() caps the pause between checks at maxIntervalMs", async () => {
  const clock = createFakeClock(START);
  const checkedAt: number[] = [];
  const result = waitFor(clock, () => {
    checkedAt.push(clock.now() - START);
    return false;
  }, { deadline: START + 100, initialIntervalMs: 5, maxIntervalMs: 20 });
  await clock.advance(100);
  assert.equal(await result, false);
  assert.deepEqual(checkedAt, [0, 5, 15, 35, 55, 75, 95, 100]);
});

Deno.test("waitFor() checks once and gives up when the deadline has passed", async () => {
  const clock = createFakeClock(START);
  let checks = 0;
  const ok = await waitFor(clock, () => {
    checks++;
    return false;
  }, { deadline: START - 1 });
  assert.equal(ok, false);
  assert.equal(checks, 1);
  assert.equal(clock.pending(), 0);
});

Deno.test("waitFor() stops when the signal aborts, without checking again", async () => {
  const clock = createFakeClock(START);
  const controller = new AbortController();
  let checks = 0;
  const result = waitFor(clock, () => {
    checks++;
    return false;
  }, { deadline: START + 10_000, signal: controller.signal });
  await clock.advance(20);
  const before = checks;
  controller.abort();
  assert.equal(await result, false);
  await clock.advance(10_000);
  assert.equal(checks, before);
  assert.equal(clock.pending(), 0);
});

Deno.test("waitFor() does not check at all with an already aborted signal", async () => {
  const clock = createFakeClock(START);
  let checks = 0;
  const ok = await waitFor(clock, () => {
    checks++;
    return true;
  }, { deadline: START + 1000, signal: AbortSignal.abort() });
  assert.equal(ok, false);
  assert.equal(checks, 0);
});

Deno.test("waitFor() awaits an async condition", async () => {
  const clock = createFakeClock(START);
  let answers = [false, false, true];
  const result = waitFor(clock, async () => {
    await Promise.resolve();
    const [next, ...rest] = answers;
    answers = rest;
    return next;
  }, { deadline: START + 1000 });
  await clock.advance(100);
  assert.equal(await result, true);
  assert.equal(answers.length, 0);
});

Deno.test("waitFor() ends with the condition's error", async () => {
  const clock = createFakeClock(START);
  let checks = 0;
  const result = waitFor(clock, () => {
    if (++checks === 2) throw new Error("probe failed");
    return false;
  }, { deadline: START + 1000 });
  const rejected = assert.rejects(result, /probe failed/);
  await clock.advance(50);
  await rejected;
  assert.equal(clock.pending(), 0);
});

// ---------------------------------------------------------------- real clock

Deno.test("createRealClock() reads wall time", () => {
  const clock = createRealClock();
  const before = Date.now();
  const now = clock.now();
  assert.ok(now >= before && now <= Date.now());
});

Deno.test("createRealClock() cancels a timer with clearTimeout", () => {
  const clock = createRealClock();
  const id = clock.setTimeout(() => assert.fail("the cleared timer fired"), 0);
  clock.clearTimeout(id);
  // Deno's test sanitizer fails the test if the timer were still pending.
});
