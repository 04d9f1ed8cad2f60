/** `lib/backend/_keep_success.ts`: a one-time step kept once it succeeds. */

import assert from "node:assert/strict";
import { keepSuccess } from "../../lib/backend/_keep_success.ts";

Deno.test("keepSuccess() keeps the first success, shares a running step, and retries after a failure", async () => {
  let calls = 0;
  const step = keepSuccess(() => {
    calls++;
    return calls === 1 ? Promise.reject(new Error("first fails")) : Promise.resolve(calls);
  });
  await assert.rejects(step(), /first fails/);
  const [a, b] = await Promise.all([step(), step()]);
  assert.deepEqual([a, b, await step(), calls], [2, 2, 2, 2]);
});
