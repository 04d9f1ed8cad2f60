/**
 * A test that writes the file `$WAITING_STARTED` and then waits (up to ten minutes) for the run
 * to be interrupted, for `tests/stress_tests_test.ts`. (Not a `*_test.ts` file: the suite itself
 * never runs it.)
 *
 * @module
 */

Deno.test("waits to be interrupted", async () => {
  await Deno.writeTextFile(Deno.env.get("WAITING_STARTED")!, String(Deno.pid));
  await new Promise((resolve) => setTimeout(resolve, 600_000));
});
