/** `lib/backend/_version_gate.ts`: a version read as its gate states and gated. */

import assert from "node:assert/strict";
import { gateVersion, readVersion } from "../../lib/backend/_version_gate.ts";
import type { VersionGate } from "../../lib/backend/backend.ts";
import { isMuxError } from "../../lib/sys/errors.ts";

const GATE: VersionGate = {
  program: "mux",
  scheme: "semver",
  pattern: /^mux\s+(?<major>\d+)\.(?<minor>\d+)(?:\.(?<patch>\d+))?(?:-(?<pre>[0-9a-z.]+))?$/,
  min: "1.2.0",
  minShown: "1.2",
  unreadableHint: "check mux.bin",
  tooOldHint: "upgrade mux",
};

const DATES: VersionGate = {
  program: "wez",
  scheme: "date",
  pattern: /^(?:wez\s+)?(?<date>\d{8})-(?<time>\d{6})-(?<commit>[0-9a-f]{6,40})\b/,
  min: "20230326-111934-3666303c",
  unreadableHint: "check wez.bin",
  tooOldHint: "update wez",
};

const thrown = (f: () => unknown) => {
  try {
    f();
  } catch (err) {
    return err;
  }
  throw new Error("did not throw");
};

Deno.test("readVersion() reads semver from the named groups: patch 0 when absent, pre kept", () => {
  assert.deepEqual(readVersion(GATE, "mux 1.2"), { semver: "1.2.0" });
  assert.deepEqual(readVersion(GATE, " mux 01.02.3-rc.1\n"), { semver: "1.2.3-rc.1" });
  assert.equal(readVersion(GATE, "mux x.y"), null);
});

Deno.test("readVersion() reads a date version by its date and time, and refuses a date that does not exist", () => {
  assert.deepEqual(readVersion(DATES, "wez 20240203-110809-5046fc22"), {
    semver: "20240203.110809.0+5046fc22",
    text: "20240203-110809-5046fc22",
    date: "2024-02-03",
  });
  assert.equal(readVersion(DATES, "wez 20240231-110809-5046fc22"), null);
  assert.equal(readVersion(DATES, "wez "), null);
});

Deno.test("gateVersion() returns the version, refuses none as unparseable and an old one or a preview of the minimum as unsupported", () => {
  assert.equal(gateVersion(GATE, "mux 1.2.0").semver, "1.2.0");
  const none = thrown(() => gateVersion(GATE, "no version here", { argv: ["mux", "-V"] }));
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
      () => gateVersion(GATE, `mux ${version}`, { shown }),
      (e) =>
        isMuxError(e, "unsupported_version") && e.message === message && e.hint === "upgrade mux",
    );
  }
});

Deno.test("gateVersion() orders date versions by date and names both dates when one is too old", () => {
  assert.equal(gateVersion(DATES, "wez 20240203-110809-5046fc22").date, "2024-02-03");
  const old = thrown(() => gateVersion(DATES, "wez 20230326-111933-3666303c"));
  assert.ok(isMuxError(old, "unsupported_version"));
  assert.equal(
    old.message,
    "wez 20230326-111933-3666303c (2023-03-26) is too old, need >= 20230326-111934-3666303c (2023-03-26)",
  );
});
