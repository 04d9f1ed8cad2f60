import assert from "node:assert/strict";
import { parseJsonc, plain, removeItems } from "../../lib/install/jsonc.ts";

Deno.test("parseJsonc() reads comments, trailing commas and a BOM like JSON.parse reads JSON", () => {
  const text = '\uFEFF{ // c\n "a": [1, 2.5e3, true, null, "x\\"y",], /* b */ "b": {"c": {},},\n}';
  assert.deepEqual(plain(parseJsonc(text)), { a: [1, 2500, true, null, 'x"y'], b: { c: {} } });
  for (const json of ['{"x":[1,{"y":"z"}]}', "[]", '"s"', "-0.5"]) {
    assert.deepEqual(plain(parseJsonc(json)), JSON.parse(json));
  }
});

Deno.test("parseJsonc() names the line and column of the first error", () => {
  for (
    const [bad, where] of [
      ['{\n  "a": 1\n  "b": 2\n}', "line 3, column 3"],
      ['{"a": [1, 2}', "line 1, column 12"],
      ["{ a: 1 }", "line 1, column 3"],
      ['{"a": "\n"}', "line 1, column 8"],
      ["/* open", "line 1, column 1"],
      ["{} x", "line 1, column 4"],
      ["", "line 1, column 1"],
    ]
  ) {
    assert.throws(
      () => parseJsonc(bad),
      (e) => e instanceof SyntaxError && e.message.includes(where),
      bad,
    );
  }
});

Deno.test("removeItems() cuts only the items and their commas", () => {
  const cases: Array<[string, number[], string]> = [
    ['["a", "b", "c"]', [1], '["a", "c"]'],
    ['["a", "b", "c"]', [0], '["b", "c"]'],
    ['["a", "b", "c"]', [2], '["a", "b"]'],
    ['["a", "b", "c",]', [2], '["a", "b"]'],
    ['["a"]', [0], "[]"],
    ['["a", "b",]', [0, 1], "[]"],
    ['["a", "b", "c"]', [1, 2], '["a"]'],
    ['[\n  "a", // one\n  "b" // two\n]', [0], '[\n  // one\n  "b" // two\n]'],
  ];
  for (const [text, indexes, want] of cases) {
    const got = removeItems(text, parseJsonc(text), indexes);
    assert.equal(got, want, `${text} without ${indexes}`);
    parseJsonc(got); // still valid
  }
});
