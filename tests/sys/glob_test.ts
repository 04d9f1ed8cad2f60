import assert from "node:assert/strict";
import { compileGlob, globProblem, MAX_GLOB } from "../../lib/sys/glob.ts";
import { createRandom, hostileString } from "../helpers/hostile.ts";

Deno.test("compileGlob() matches the whole string, ignoring case", () => {
  const cases: Array<[string, string, boolean]> = [
    ["explore", "explore", true],
    ["explore", "Explore", true],
    ["explore", "explorer", false],
    ["*review*", "Code Review of lib", true],
    ["ex?lore", "explore", true],
    ["ex?lore", "exlore", false],
    ["[a-c]x", "Bx", true],
    ["[!a]x", "ax", false],
    ["[^a]x", "bx", true],
    ["[]]", "]", true],
    ["a-b", "a-b", true],
    ["a.c", "abc", false],
    ["a/b", "a/b", true],
    ["a\\*", "a*", true],
    ["a\\*", "ab", false],
    ["(x)|y", "(x)|y", true],
    ["$^+{}", "$^+{}", true],
    ["*(@explore subagent)", "map lib (@explore subagent)", true],
  ];
  for (const [pattern, text, expected] of cases) {
    assert.equal(compileGlob(pattern).test(text), expected, `${pattern} ~ ${text}`);
  }
});

Deno.test("globProblem() names what is wrong with an invalid pattern", () => {
  assert.equal(globProblem("[abc"), "a [ is never closed");
  assert.equal(globProblem("a\\"), "it ends in a lone \\");
  assert.equal(globProblem(""), "it is empty");
  assert.equal(globProblem("[z-a]"), "the range z-a is reversed");
  assert.equal(globProblem("x".repeat(MAX_GLOB + 1)), `it is longer than ${MAX_GLOB} characters`);
  assert.equal(globProblem("[a-]"), null);
});

Deno.test("compileGlob() turns any hostile pattern into a valid expression or a SyntaxError", () => {
  const r = createRandom();
  for (let i = 0; i < 500; i++) {
    const pattern = hostileString(r, { longChance: 0 });
    try {
      const glob = compileGlob(pattern);
      glob.test(hostileString(r));
    } catch (err) {
      assert.ok(err instanceof SyntaxError, String(err));
      assert.match(err.message, /^Cannot use glob /);
    }
  }
});

Deno.test("compileGlob() has no backtracking blow-up on many stars", () => {
  // A regular expression built the naive way took minutes on this; the matcher is a single pass
  // with one fallback point.
  const glob = compileGlob("*a*a*a*a*a*a*a*a*a*a*a*a*b");
  assert.equal(glob.test("a".repeat(4000)), false);
  assert.equal(glob.test("a".repeat(4000) + "b"), true);
});

Deno.test("compileGlob() matches sets and ranges ignoring case", () => {
  assert.equal(compileGlob("[A-C]*").test("beta"), true);
  assert.equal(compileGlob("[a-c]*").test("Beta"), true);
  assert.equal(compileGlob("[!a-c]*").test("Beta"), false);
  assert.equal(compileGlob("x[?*]").test("x*"), true);
  assert.equal(compileGlob("*").test(""), true);
  assert.equal(compileGlob("?").test(""), false);
  assert.equal(compileGlob("ü*").test("Über"), true);
});
