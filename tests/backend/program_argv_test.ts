/** `lib/backend/_program_argv.ts`: the one check of a pane's program, shared by every backend. */

import assert from "node:assert/strict";
import { checkProgramArgv } from "../../lib/backend/_program_argv.ts";
import { isMuxError } from "../../lib/sys/errors.ts";

Deno.test("checkProgramArgv() accepts a program with any arguments, hostile ones included", () => {
  checkProgramArgv(["opencode", "attach", "http://127.0.0.1:4096", "--session", "ses_1"]);
  checkProgramArgv(["sh", "-c", "$(touch /tmp/pwned) `id` 'q'", "", "-rf"]);
});

Deno.test("checkProgramArgv() refuses no program, an empty program name and a NUL anywhere", () => {
  for (const bad of [[], [""], ["", "x"], ["sh\0"], ["sh", "a\0b"]]) {
    assert.throws(
      () => checkProgramArgv(bad),
      (e) =>
        isMuxError(e, "invalid_argument") && /^Cannot run .* in a pane$/.test(e.message) &&
        e.hint === "The pane command needs a program and no NUL characters",
      JSON.stringify(bad),
    );
  }
});
