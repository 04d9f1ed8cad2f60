/**
 * A test file with one test that fails on purpose, for `tests/run_tests_test.ts` and
 * `tests/stress_tests_test.ts`. (Not a `*_test.ts` file: the suite itself never runs it.)
 *
 * @module
 */

Deno.test("fails on purpose", () => {
  throw new Error("failing on purpose");
});

Deno.test("passes beside it", () => {});
