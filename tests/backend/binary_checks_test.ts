/** `lib/backend/_binary_checks.ts`: the binary doctor check of a CLI backend. */

import assert from "node:assert/strict";
import { binaryChecks } from "../../lib/backend/_binary_checks.ts";
import { commandFailed } from "../../lib/backend/_command_failed.ts";
import type { CommandRun } from "../../lib/backend/_run_command.ts";
import { MuxError } from "../../lib/sys/errors.ts";

const run = (over: Partial<CommandRun> = {}): CommandRun => ({
  code: 0,
  stdout: "",
  stderr: "",
  argv: ["mux", "--version"],
  ...over,
});

Deno.test("binaryChecks() passes with the version text, fails on a non-zero exit, and skips the dependents when nothing ran", () => {
  const failed = (r: CommandRun) => commandFailed("read the mux version", r);
  assert.deepEqual(binaryChecks("mux", "/bin/mux", run({ stdout: "mux 1.2\n" }), failed, ["x"]), [
    { name: "mux binary", status: "pass", detail: "/bin/mux: mux 1.2" },
  ]);
  const exited = binaryChecks("mux", "mux", run({ code: 2, stderr: "no" }), failed, ["x"]);
  assert.deepEqual(exited.map((c) => [c.name, c.status]), [["mux binary", "fail"]]);
  const missing = binaryChecks("mux", "mux", new MuxError("binary_not_found", "gone"), failed, [
    "mux version",
    "mux server",
  ]);
  assert.deepEqual(missing, [
    { name: "mux binary", status: "fail", detail: "gone" },
    { name: "mux version", status: "fail", detail: "not checked: no mux binary" },
    { name: "mux server", status: "fail", detail: "not checked: no mux binary" },
  ]);
});
