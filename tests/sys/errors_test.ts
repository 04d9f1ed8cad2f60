import assert from "node:assert/strict";
import {
  cut,
  type ErrorCode,
  EXIT,
  exitCodeFor,
  isMuxError,
  MAX_STDERR,
  MuxError,
  toMuxError,
} from "../../lib/sys/errors.ts";

/**
 * The contract's exit code for every error code. A `Record` over the closed union: adding a code
 * to lib/sys/errors.ts without deciding its exit code here fails the type check.
 */
const EXPECTED_EXIT: Record<ErrorCode, number> = {
  usage: 2,
  invalid_argument: 2,
  invalid_config: 3,
  no_backend: 3,
  binary_not_found: 3,
  unsupported_version: 3,
  interrupted: 130,
  timed_out: 1,
  command_failed: 1,
  unparseable_output: 1,
  pane_not_found: 1,
  no_space: 1,
  not_owned: 1,
  server_unreachable: 1,
  auth_failed: 1,
  auth_unsupported: 1,
  session_not_found: 1,
  unsupported: 1,
  backend_unreachable: 1,
  state_corrupt: 1,
  close_unverified: 1,
};

Deno.test("exitCodeFor() maps every error code to the contract's exit code", () => {
  for (const [code, exit] of Object.entries(EXPECTED_EXIT)) {
    assert.equal(exitCodeFor(code as ErrorCode), exit, code);
  }
});

Deno.test("EXIT holds the contract's exit codes", () => {
  assert.deepEqual(EXIT, { ok: 0, failed: 1, usage: 2, environment: 3, interrupted: 130 });
});

Deno.test("MuxError carries its code, hint, cause and the failed program's details", () => {
  const cause = new Error("spawn failed");
  const err = new MuxError("command_failed", 'Cannot split pane "%3": tmux exited 1: no space', {
    hint: "Close a pane",
    cause,
    argv: ["tmux", "split-window"],
    exitCode: 1,
    stderr: "no space for new pane\n",
  });
  assert.ok(err instanceof Error);
  assert.equal(err.name, "MuxError");
  assert.equal(err.code, "command_failed");
  assert.equal(err.message, 'Cannot split pane "%3": tmux exited 1: no space');
  assert.equal(err.hint, "Close a pane");
  assert.equal(err.cause, cause);
  assert.deepEqual(err.argv, ["tmux", "split-window"]);
  assert.equal(err.exitCode, 1);
  assert.equal(err.stderr, "no space for new pane\n");
});

Deno.test("MuxError leaves out the options it was not given", () => {
  const err = new MuxError("pane_not_found", 'Cannot close pane "%9": gone');
  assert.equal(err.hint, undefined);
  assert.equal(err.argv, undefined);
  assert.equal(err.exitCode, undefined);
  assert.equal(err.stderr, undefined);
  assert.equal(Object.hasOwn(err, "cause"), false);
});

Deno.test("MuxError keeps an exit code of 0 and an empty stderr", () => {
  const err = new MuxError("unparseable_output", "Cannot parse", { exitCode: 0, stderr: "" });
  assert.equal(err.exitCode, 0);
  assert.equal(err.stderr, "");
});

Deno.test("MuxError cuts stderr to MAX_STDERR characters and marks the cut", () => {
  assert.equal(MAX_STDERR, 512);
  const err = new MuxError("command_failed", "Cannot run", { stderr: "e".repeat(10_000) });
  assert.equal(err.stderr, `${"e".repeat(512)}…`);
  const exact = new MuxError("command_failed", "Cannot run", { stderr: "e".repeat(512) });
  assert.equal(exact.stderr, "e".repeat(512));
});

Deno.test("isMuxError() tells MuxErrors apart, optionally by code", () => {
  const err = new MuxError("timed_out", "Cannot finish");
  assert.equal(isMuxError(err), true);
  assert.equal(isMuxError(err, "timed_out"), true);
  assert.equal(isMuxError(err, "interrupted", "timed_out"), true);
  assert.equal(isMuxError(err, "interrupted"), false);
  assert.equal(isMuxError(new Error("x")), false);
  assert.equal(isMuxError({ code: "timed_out", message: "look-alike" }, "timed_out"), false);
  assert.equal(isMuxError(undefined), false);
});

Deno.test("toMuxError() keeps a MuxError as it is", () => {
  const err = new MuxError("no_space", "Cannot split");
  assert.equal(toMuxError(err, "internal_never" as ErrorCode), err);
});

Deno.test("toMuxError() wraps a foreign error with its message and cause", () => {
  const original = new RangeError("Invalid array length");
  const err = toMuxError(original);
  assert.equal(err.code, "command_failed");
  assert.equal(err.message, "Invalid array length");
  assert.equal(err.cause, original);
  assert.equal(toMuxError("plain text", "state_corrupt").code, "state_corrupt");
  assert.equal(toMuxError("plain text").message, "plain text");
  assert.equal(toMuxError(42).message, "42");
});

Deno.test("cut() keeps short text and cuts long text with an ellipsis", () => {
  assert.equal(cut("abc", 3), "abc");
  assert.equal(cut("abcd", 3), "abc…");
  assert.equal(cut("", 0), "");
});
