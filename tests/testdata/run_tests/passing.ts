/**
 * A test file that passes, with a step and an ignored test, for `tests/run_tests_test.ts`.
 * (Not a `*_test.ts` file: the suite itself never runs it.)
 *
 * @module
 */

Deno.test("passes", async (t) => {
  await t.step("a step", () => {});
});

Deno.test({ name: "is ignored", ignore: true, fn() {} });
