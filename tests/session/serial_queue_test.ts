import assert from "node:assert/strict";
import { SerialQueue } from "../../lib/session/serial_queue.ts";

/** A job that runs until the test lets it finish. */
function gate(): { job: () => Promise<void>; started: () => boolean; finish: () => void } {
  let started = false;
  let finish!: () => void;
  const done = new Promise<void>((resolve) => (finish = resolve));
  return {
    job: () => {
      started = true;
      return done;
    },
    started: () => started,
    finish: () => finish(),
  };
}

Deno.test("SerialQueue runs jobs one at a time, in the order they were queued", async () => {
  const queue = new SerialQueue((err) => assert.fail(String(err)));
  const first = gate();
  const second = gate();
  void queue.run(first.job);
  const secondDone = queue.run(second.job);
  await Promise.resolve();
  assert.ok(first.started());
  assert.ok(!second.started(), "the second waits for the first");
  first.finish();
  await new Promise((resolve) => setTimeout(resolve, 0));
  assert.ok(second.started());
  second.finish();
  await secondDone;
});

Deno.test("SerialQueue reports a job that throws and goes on with the next", async () => {
  const errors: unknown[] = [];
  const queue = new SerialQueue((err) => errors.push(err));
  const ran: string[] = [];
  void queue.run(() => Promise.reject(new Error("boom")));
  await queue.run(() => Promise.resolve(void ran.push("next")));
  assert.deepEqual(ran, ["next"]);
  assert.equal(errors.length, 1);
  assert.equal((errors[0] as Error).message, "boom");
});

Deno.test("SerialQueue idle() waits for every job queued so far", async () => {
  const queue = new SerialQueue((err) => assert.fail(String(err)));
  const job = gate();
  void queue.run(job.job);
  let idle = false;
  const waiting = queue.idle().then(() => (idle = true));
  await Promise.resolve();
  assert.equal(idle, false);
  job.finish();
  await waiting;
  assert.equal(idle, true);
});
