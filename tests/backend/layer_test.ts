/** `lib/backend/_layer.ts`: a detected layer with only the fields the environment gave. */

import assert from "node:assert/strict";
import { layerOf } from "../../lib/backend/_layer.ts";

Deno.test("layerOf() leaves out undefined fields and keeps a null pane", () => {
  assert.deepEqual(layerOf({ backend: "x", paneId: null, socket: undefined, pid: 0 }), {
    backend: "x",
    paneId: null,
    pid: 0,
  });
  assert.deepEqual(
    Object.keys(layerOf({ backend: "x", paneId: "1", session: "s", tabId: undefined })),
    ["backend", "paneId", "session"],
  );
});
