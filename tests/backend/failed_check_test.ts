/** `lib/backend/failed_check.ts`: a failed doctor check from what was thrown. */

import assert from "node:assert/strict";
import { failedCheck } from "../../lib/backend/failed_check.ts";
import { MuxError } from "../../lib/sys/errors.ts";

Deno.test("failedCheck() keeps the error's message and its own hint before the given one", () => {
  const own = new MuxError("binary_not_found", "Cannot run tmux", { hint: "Install tmux" });
  assert.deepEqual(failedCheck("tmux binary", own, "other"), {
    name: "tmux binary",
    status: "fail",
    detail: "Cannot run tmux",
    hint: "Install tmux",
  });
  assert.deepEqual(failedCheck("x", new Error("boom"), "do this").hint, "do this");
  assert.equal("hint" in failedCheck("x", new Error("boom")), false);
});
