/** `lib/backend/_pane_id.ts`: a pane id in a backend's own form. */

import assert from "node:assert/strict";
import { checkPaneId } from "../../lib/backend/_pane_id.ts";
import { isMuxError } from "../../lib/sys/errors.ts";

Deno.test("checkPaneId() refuses flag-like ids and ids outside the backend's form", () => {
  assert.equal(checkPaneId("%3", /^%\d+$/, "like %3"), "%3");
  for (const bad of ["-t", "3", ""]) {
    assert.throws(() => checkPaneId(bad, /^%\d+$/, "like %3"), (e) => isMuxError(e));
  }
});
