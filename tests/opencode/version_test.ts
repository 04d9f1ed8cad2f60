import assert from "node:assert/strict";
import { attachSupport, SUPPORTED_OPENCODE } from "../../lib/opencode/version.ts";

Deno.test("attachSupport() accepts OpenCode 1.x, whose attach is the contract's command", () => {
  for (const v of ["1.0.0", "1.1.24", "1.18.33", "v1.19.3", "1.99.0-beta.2"]) {
    assert.equal(attachSupport(v).supported, true, v);
  }
});

Deno.test("attachSupport() refuses OpenCode 2 (no attach), prereleases included, with a hint", () => {
  for (const v of ["2.0.0", "2.0.0-beta.1", "2.3.1", "10.0.0"]) {
    const verdict = attachSupport(v);
    assert.equal(verdict.supported, false, v);
    assert.ok(verdict.supported === false && /no `opencode attach`/.test(verdict.hint));
    assert.ok(verdict.supported === false && verdict.hint.includes(SUPPORTED_OPENCODE));
  }
});

Deno.test("attachSupport() refuses 0.x as too old", () => {
  const verdict = attachSupport("0.15.8");
  assert.ok(verdict.supported === false && /too old/.test(verdict.hint));
});

Deno.test("attachSupport() says unknown for a missing or non-semver version", () => {
  for (const v of [undefined, null, "", "nightly"]) {
    assert.deepEqual(attachSupport(v), { supported: null, version: null }, String(v));
  }
});
