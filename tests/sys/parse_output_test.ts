/** Defensive output reading shared by the backends (`lib/sys/parse_output.ts`). */

import assert from "node:assert/strict";
import { z } from "zod";
import { isMuxError } from "../../lib/sys/errors.ts";
import { parseJson, unparseableOutput } from "../../lib/sys/parse_output.ts";

const Panes = z.array(z.object({ id: z.number() }));

Deno.test("parseJson() returns the value of the schema's shape, and undefined for text that is not JSON or not that shape", () => {
  assert.deepEqual(parseJson(Panes, '[{"id":1}]'), [{ id: 1 }]);
  assert.equal(parseJson(Panes, "[{"), undefined);
  assert.equal(parseJson(Panes, '{"id":1}'), undefined);
  assert.equal(parseJson(Panes, ""), undefined);
});

Deno.test("unparseableOutput() quotes the output cut short and says how to report it", () => {
  const err = unparseableOutput("mux", "pane list", `x${"y".repeat(400)}`);
  assert.ok(isMuxError(err, "unparseable_output"));
  assert.match(err.message, /^Cannot read mux's pane list: unexpected output "xy+/);
  assert.ok(err.message.endsWith(`${"y".repeat(255)}…"`), err.message);
  assert.equal(err.hint, "Report this with `mux --version` and the output shown");
  assert.equal(
    unparseableOutput("tmux", "layout", "", "tmux -V").hint,
    "Report this with `tmux -V` and the output shown",
  );
});
