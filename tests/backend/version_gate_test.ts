/** `lib/backend/_version_gate.ts`: a version against a backend's oldest supported one. */

import assert from "node:assert/strict";
import { gateVersion } from "../../lib/backend/_version_gate.ts";
import { isMuxError } from "../../lib/sys/errors.ts";

Deno.test("gateVersion() returns the version, refuses none as unparseable and an old one or a preview of the minimum as unsupported", () => {
  const gate = {
    program: "mux",
    min: "1.2.0",
    minShown: "1.2",
    unreadableHint: "check mux.bin",
    tooOldHint: "upgrade mux",
  };
  assert.equal(gateVersion(gate, "mux 1.2.0", "1.2.0"), "1.2.0");
  const none = (() => {
    try {
      return gateVersion(gate, "no version here", null, { argv: ["mux", "-V"] });
    } catch (err) {
      return err;
    }
  })();
  assert.ok(isMuxError(none, "unparseable_output"));
  assert.equal(none.message, 'Cannot read the mux version from "no version here"');
  assert.deepEqual([none.argv, none.hint], [["mux", "-V"], "check mux.bin"]);
  for (
    const [version, shown, message] of [
      ["1.1.9", undefined, "mux 1.1.9 is too old, need >= 1.2"],
      ["1.2.0-preview.1", "1.2-pre", "mux 1.2-pre is too old, need >= 1.2"],
    ] as const
  ) {
    assert.throws(
      () => gateVersion(gate, `mux ${version}`, version, { shown }),
      (e) =>
        isMuxError(e, "unsupported_version") && e.message === message && e.hint === "upgrade mux",
    );
  }
});
