/**
 * Rules that keep one test from affecting another or hiding a leak: every child started with a
 * cleared environment still carries the run's tag (`tests/helpers/run_tag.ts`), and the
 * environment of the test process changes only through `tests/helpers/env_scope.ts`, which
 * puts it back.
 *
 * @module
 */

import assert from "node:assert/strict";
import { join, relative } from "node:path";
import { setEnv } from "./helpers/env_scope.ts";

const TESTS = new URL(".", import.meta.url).pathname;

/** Every `.ts` file under `tests/` with its text, paths relative to `tests/`. */
function testSources(): Array<{ path: string; text: string }> {
  const out: Array<{ path: string; text: string }> = [];
  const walk = (dir: string) => {
    for (const e of Deno.readDirSync(dir)) {
      const path = join(dir, e.name);
      if (e.isDirectory) walk(path);
      else if (e.name.endsWith(".ts")) {
        out.push({ path: relative(TESTS, path), text: Deno.readTextFileSync(path) });
      }
    }
  };
  walk(TESTS);
  return out.sort((a, b) => a.path.localeCompare(b.path));
}

Deno.test("every test file that clears a child's environment hands it the run's tag", () => {
  const missing = testSources()
    .filter((f) => /clearEnv:\s*true/.test(f.text) && !f.text.includes("runTag()"))
    .map((f) => f.path);
  assert.deepEqual(missing, [], "these start processes whose leaks the run could not see");
});

Deno.test("tests change their own process's environment only through helpers/env_scope.ts", () => {
  const direct = testSources()
    .filter((f) => f.path !== "helpers/env_scope.ts" && f.path !== "hygiene_test.ts")
    .filter((f) =>
      /Deno\.env\.(set|delete)\(|process\.env\.\w+\s*=|delete process\.env/.test(f.text)
    )
    .map((f) => f.path);
  assert.deepEqual(direct, [], "a change made here would reach every later file of the run");
});

Deno.test("setEnv() sets and removes variables, and its undo puts back what was there", () => {
  const a = `MUXBRIDGE_ENV_SCOPE_TEST_A_${crypto.randomUUID().slice(0, 8)}`;
  const b = `MUXBRIDGE_ENV_SCOPE_TEST_B_${crypto.randomUUID().slice(0, 8)}`;
  const outer = setEnv({ [a]: "before" });
  try {
    const restore = setEnv({ [a]: undefined, [b]: "set" });
    assert.equal(Deno.env.get(a), undefined);
    assert.equal(Deno.env.get(b), "set");
    restore();
    assert.equal(Deno.env.get(a), "before");
    assert.equal(Deno.env.has(b), false);
  } finally {
    outer();
  }
  assert.equal(Deno.env.has(a), false);
});
