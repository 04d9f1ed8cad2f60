/**
 * The assertion the backend tests make of a failing call: it rejects with a `MuxError` of one
 * code.
 *
 * @module
 */

import assert from "node:assert/strict";
import { isMuxError } from "../../lib/sys/errors.ts";

/**
 * Asserts that `p` rejects with a `MuxError` (`lib/sys/errors.ts`) whose code is `code`.
 *
 * @param p The call.
 * @param code The expected `MuxError` code.
 */
export async function assertMuxError(p: Promise<unknown>, code: string): Promise<void> {
  await assert.rejects(p, (err: unknown) => {
    assert.ok(isMuxError(err), `expected a MuxError, got ${err}`);
    assert.equal(err.code, code, err.message);
    return true;
  });
}
