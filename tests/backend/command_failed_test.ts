/** `lib/backend/_command_failed.ts`: the fallback error of a failed run. */

import assert from "node:assert/strict";
import { commandFailed } from "../../lib/backend/_command_failed.ts";
import type { CommandRun } from "../../lib/backend/_run_command.ts";

const run = (over: Partial<CommandRun> = {}): CommandRun => ({
  code: 0,
  stdout: "",
  stderr: "",
  argv: ["mux", "--version"],
  ...over,
});

Deno.test("commandFailed() names the argv, the exit code and what the program said", () => {
  const err = commandFailed("list panes", run({ code: 3, stderr: " boom \n" }));
  assert.equal(err.code, "command_failed");
  assert.equal(err.message, 'Cannot list panes: "mux" "--version" exited 3: boom');
  assert.equal(commandFailed("x", run({ code: 1 }), "own text").message.endsWith("own text"), true);
});
