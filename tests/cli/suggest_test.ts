/** "Did you mean": the edit distance and the guess it picks, table-tested. */

import assert from "node:assert/strict";
import { editDistance, suggest } from "../../lib/cli/suggest.ts";
import { COMMANDS } from "../../lib/cli/commands/mod.ts";

Deno.test("editDistance() counts insertions, deletions, substitutions and neighbour swaps as one", () => {
  const cases: Array<[string, string, number]> = [
    ["list", "list", 0],
    ["lsit", "list", 1], // swap
    ["lst", "list", 1], // insertion
    ["lisst", "list", 1], // deletion
    ["lust", "list", 1], // substitution
    ["tsil", "list", 3], // one swap, two substitutions
    ["", "list", 4],
    ["doctr", "doctor", 1],
    ["cleaup", "cleanup", 1],
    ["unistall", "uninstall", 1],
    ["レビュ", "レビュー", 1], // code points, not UTF-16 units
  ];
  for (const [a, b, d] of cases) {
    assert.equal(editDistance(a, b), d, `${a} → ${b}`);
    assert.equal(editDistance(b, a), d, `${b} → ${a}`);
  }
});

const NAMES = COMMANDS.map((c) => c.name);

Deno.test("suggest() finds the command a typo meant, and stays quiet when nothing is close", () => {
  const cases: Array<[string, string | undefined]> = [
    ["lsit", "list"],
    ["lst", "list"],
    ["LIST", "list"],
    ["doctr", "doctor"],
    ["docter", "doctor"],
    ["instal", "install"],
    ["unistall", "uninstall"],
    ["cleaup", "cleanup"],
    ["clean", "cleanup"], // the only command it starts
    ["doc", "doctor"],
    ["sch", "schema"],
    ["verison", "version"],
    ["spwan", "spawn"],
    ["lyaout", "layout"],
    ["de", undefined], // detect or demo
    ["d", undefined],
    ["x", undefined],
    ["frobnicate", undefined],
    ["help", undefined], // the hint then points at --help
    ["", undefined],
  ];
  for (const [typed, meant] of cases) assert.equal(suggest(typed, NAMES), meant, typed);
});

Deno.test("suggest() prefers the closest name, then the earlier one", () => {
  assert.equal(suggest("cat", ["cut", "cot"]), "cut");
  assert.equal(suggest("coat", ["cat", "coat2"]), "cat");
  assert.equal(suggest("abcd", ["abce", "abcf"]), "abce");
});
