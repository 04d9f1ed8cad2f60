import assert from "node:assert/strict";
import { findOnPath } from "../../lib/install/find_on_path.ts";
import { memoryFiles } from "../fakes/memory_files.ts";

Deno.test("findOnPath() returns the first executable in PATH order and skips relative entries", () => {
  const files = memoryFiles({ "/a/opencode": "not executable" });
  files.executable("/b/opencode");
  files.executable("/c/opencode");
  files.executable("/rel/opencode");
  assert.equal(findOnPath("opencode", "/a:.:rel:/b:/c", files), "/b/opencode");
  assert.equal(findOnPath("opencode", "/a", files), null);
  assert.equal(findOnPath("opencode", undefined, files), null);
  assert.equal(findOnPath("/c/opencode", "", files), "/c/opencode");
  assert.equal(findOnPath("./opencode", "/c", files), null);
});
