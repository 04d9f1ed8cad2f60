/** Commands loaded on demand: each loader gives its own command, and a run loads only its own. */

import assert from "node:assert/strict";
import { COMMAND_LOADERS, loadCommands } from "../../lib/cli/commands/load.ts";
import { COMMANDS } from "../../lib/cli/commands/mod.ts";
import { parseInvocation } from "../../lib/cli/cli.ts";
import { BACKENDS } from "../../backends/mod.ts";

Deno.test("COMMAND_LOADERS names each command by the name it answers to, install first", async () => {
  for (const [name, load] of Object.entries(COMMAND_LOADERS)) {
    assert.equal((await load()).name, name);
  }
  assert.deepEqual(COMMANDS.map((c) => c.name).slice(0, 2), ["install", "uninstall"]);
});

Deno.test("loadCommands() loads the commands argv names, else all of them", async () => {
  const names = async (argv: string[]) => (await loadCommands(argv)).map((c) => c.name);
  assert.deepEqual(await names(["bridge", "--url", "http://127.0.0.1:4096"]), ["bridge"]);
  // A flag value that spells a command loads it too; the parser still picks the command.
  assert.deepEqual(await names(["--config", "list", "spawn"]), ["spawn", "list"]);
  assert.deepEqual(await names(["--help"]), COMMANDS.map((c) => c.name));
  assert.deepEqual(await names(["--version"]), COMMANDS.map((c) => c.name));
  assert.deepEqual(await names(["frob"]), COMMANDS.map((c) => c.name));
});

Deno.test("parseInvocation() on the loaded commands reads argv as it does on all of them", async () => {
  const argvs = [
    ["bridge", "--url", "http://h:1"],
    ["--config", "list", "spawn", "--session", "ses_a", "--url", "http://h:1", "--dir", "/d"],
    ["--version"],
    ["close", "%3", "--force"],
    ["layout", "--help"],
  ];
  for (const argv of argvs) {
    const lazy = parseInvocation(argv, await loadCommands(argv), BACKENDS);
    assert.deepEqual(lazy, parseInvocation(argv, COMMANDS, BACKENDS), argv.join(" "));
  }
});
