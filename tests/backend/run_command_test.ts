/** `lib/backend/_run_command.ts`: one program run of a backend. */

import assert from "node:assert/strict";
import { runCommand } from "../../lib/backend/_run_command.ts";
import type { BackendDeps } from "../../lib/backend/backend.ts";
import { resolveConfig } from "../../lib/config/config.ts";
import { createRealClock } from "../../lib/sys/clock.ts";
import { isMuxError, MuxError } from "../../lib/sys/errors.ts";
import type { Runner } from "../../lib/sys/exec.ts";
import { silentLogger } from "../../lib/sys/log.ts";
import { createFakeRunner } from "../fakes/fake_runner.ts";

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
