/**
 * The mechanisms every backend stands on (`lib/backend.ts`): one program run, the fallback error,
 * the pane-id check, the version gate, the kept one-time step and the binary doctor check.
 */

import assert from "node:assert/strict";
import {
  type BackendDeps,
  binaryChecks,
  checkPaneId,
  commandFailed,
  type CommandRun,
  gateVersion,
  keepSuccess,
  runCommand,
} from "../lib/backend.ts";
import { createRealClock } from "../lib/sys/clock.ts";
import { resolveConfig } from "../lib/config.ts";
import { isMuxError, MuxError } from "../lib/sys/errors.ts";
import type { Runner } from "../lib/sys/exec.ts";
import { silentLogger } from "../lib/sys/log.ts";
import { createFakeRunner } from "./fakes/fake_runner.ts";

/** Backend deps around a fake runner, with `command_timeout_ms` 1234. */
function deps(run: Runner): BackendDeps {
  return {
    run,
    env: () => undefined,
    clock: createRealClock(),
    config: resolveConfig({ env: () => undefined, flags: { command_timeout_ms: 1234 } }),
    identity: { backend: null, layers: [], harness: { name: null } },
    log: silentLogger,
  };
}

const run = (over: Partial<CommandRun> = {}): CommandRun => ({
  code: 0,
  stdout: "",
  stderr: "",
  argv: ["mux", "--version"],
  ...over,
});

Deno.test("runCommand() runs with command_timeout_ms and only the options given, and shows the shown argv", async () => {
  const fake = createFakeRunner().on(["mux", "ls"], { stdout: "ok\n" });
  const result = await runCommand(deps(fake.run), ["mux", "ls"], { shown: ["mux", "<ls>"] });
  assert.deepEqual(result, { code: 0, stdout: "ok\n", stderr: "", argv: ["mux", "<ls>"] });
  assert.deepEqual(fake.calls[0].opts, { timeoutMs: 1234, signal: undefined });
});

Deno.test("runCommand() words a missing program with the backend's hint, and passes it as is without one", async () => {
  const missing = new MuxError("binary_not_found", 'Cannot run "mux": program not found');
  const fake = createFakeRunner().on(["mux"], missing);
  await assert.rejects(
    runCommand(deps(fake.run), ["mux"], { notFoundHint: "Install mux" }),
    (err) => isMuxError(err, "binary_not_found") && err.hint === "Install mux",
  );
  await assert.rejects(runCommand(deps(fake.run), ["mux"]), (err) => err === missing);
});

Deno.test("commandFailed() names the argv, the exit code and what the program said", () => {
  const err = commandFailed("list panes", run({ code: 3, stderr: " boom \n" }));
  assert.equal(err.code, "command_failed");
  assert.equal(err.message, 'Cannot list panes: "mux" "--version" exited 3: boom');
  assert.equal(commandFailed("x", run({ code: 1 }), "own text").message.endsWith("own text"), true);
});

Deno.test("checkPaneId() refuses flag-like ids and ids outside the backend's form", () => {
  assert.equal(checkPaneId("%3", /^%\d+$/, "like %3"), "%3");
  for (const bad of ["-t", "3", ""]) {
    assert.throws(() => checkPaneId(bad, /^%\d+$/, "like %3"), (e) => isMuxError(e));
  }
});

Deno.test("keepSuccess() keeps the first success, shares a running step, and retries after a failure", async () => {
  let calls = 0;
  const step = keepSuccess(() => {
    calls++;
    return calls === 1 ? Promise.reject(new Error("first fails")) : Promise.resolve(calls);
  });
  await assert.rejects(step(), /first fails/);
  const [a, b] = await Promise.all([step(), step()]);
  assert.deepEqual([a, b, await step(), calls], [2, 2, 2, 2]);
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
