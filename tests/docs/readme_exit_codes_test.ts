/**
 * docs/cli.md, "Exit codes": every row of the table is run as written, in the situation its
 * `where` column names, and must end with its exit code and print what the page promises — one stderr
 * line (holding the row's `says` text) for a failure; stdout empty, except `bridge`'s `error` and
 * `bye` lines, `doctor`'s checks and `demo`'s narration. A row changed without the code, or code changed without the
 * row, fails here. A new command's rows need nothing here unless they name a new situation
 * (one entry in `WHERE`, tests/docs/_sandbox.ts).
 */

import assert from "node:assert/strict";
import { commandNamed } from "../../lib/cli/cli.ts";
import { COMMANDS } from "../../lib/cli/commands/mod.ts";
import { ERROR_CODES } from "../../lib/sys/errors.ts";
import { code, doc, section, table } from "./_readme.ts";
import { Sandbox, type SandboxRun } from "./_sandbox.ts";

const COLUMNS = ["exit", "when", "example", "where", "says (stderr)"] as const;

/** The table's rows, parsed. */
function rows() {
  return table(section(doc("docs/cli.md"), "Exit codes"), COLUMNS).map((r) => ({
    exit: Number(code(r.exit)),
    when: r.when,
    example: code(r.example),
    where: r.where,
    says: code(r["says (stderr)"]),
  }));
}

/** The muxbridge command an example runs (`bridge`, `close`, …), if any. */
function commandOf(example: string): string | undefined {
  const words = example.split(/\s+/).map((w) => w.replace(/^'(.*)'$/, "$1"));
  const at = words.indexOf("muxbridge");
  return commandNamed(words.slice(at + 1), COMMANDS)?.name;
}

/** What every row promises beyond its exit code (the paragraph under the table). */
function assertOutput(row: ReturnType<typeof rows>[number], r: SandboxRun, where: string): void {
  const what = `${row.example} (${where}): ${JSON.stringify(r)}`;
  assert.equal(r.signal, null, `it exited rather than died of a signal: ${what}`);
  assert.equal(r.code, row.exit, `exit code: ${what}`);
  const command = commandOf(row.example);
  if (row.exit === 0) {
    if (command === "bridge") {
      const types = r.stdout.trimEnd().split("\n").map((l) => JSON.parse(l).type);
      assert.equal(types[0], "ready", `ready first: ${what}`);
      assert.equal(types.at(-1), "bye", `bye last: ${what}`);
    }
    return;
  }
  const lines = r.stderr.trimEnd().split("\n");
  assert.equal(lines.length, 1, `one stderr line: ${what}`);
  assert.match(lines[0], /^muxbridge: \S/, what);
  if (row.says) assert.ok(lines[0].includes(row.says), `stderr says ${row.says}: ${what}`);
  if (command === "bridge") {
    const out = r.stdout.trimEnd().split("\n").map((l) => JSON.parse(l));
    assert.deepEqual(out.map((m) => m.type), ["error", "bye"], `error, then bye: ${what}`);
    assert.equal(ERROR_CODES[out[0].code as keyof typeof ERROR_CODES]?.exit, row.exit, what);
    assert.equal(out[0].line, null);
    assert.deepEqual(out[1], { type: "bye", closed: 0 });
  } else if (command !== "doctor" && command !== "demo") {
    assert.equal(r.stdout, "", `stdout empty: ${what}`);
  }
}

Deno.test("docs/cli.md exit-code table: it has a row for every exit code and names known situations", () => {
  const all = rows();
  assert.ok(all.length >= 20, `the table was read (${all.length} rows)`);
  assert.deepEqual([...new Set(all.map((r) => r.exit))].sort((a, b) => a - b), [0, 1, 2, 3, 130]);
  for (const r of all) {
    assert.ok(r.example.startsWith("muxbridge") || /^\w+=\S+ muxbridge/.test(r.example), r.example);
  }
});

Deno.test({
  name:
    "docs/cli.md exit-code table: every row's example exits as the row says, printing what the page promises",
  async fn(t) {
    const box = await Sandbox.create();
    try {
      for (const row of rows()) {
        // "anywhere" means both inside a multiplexer and outside one.
        const places = row.where === "anywhere"
          ? ["outside a multiplexer", "in tmux"]
          : [row.where];
        for (const where of places) {
          await t.step(`${row.exit}: ${row.example} (${where})`, async () => {
            const r = await box.run(row.example, { where });
            assertOutput(row, r, where);
          });
        }
      }
    } finally {
      await box.close();
    }
  },
});
