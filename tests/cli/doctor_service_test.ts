/**
 * `doctor` on OpenCode 2.x's service: found through its own private state file, its version,
 * and whether it loaded muxbridge's plugin (active, refused with OpenCode's reason, or not yet).
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import type { CliDeps } from "../../lib/cli/commands/_command.ts";
import { serviceChecks } from "../../lib/cli/commands/_doctor_service.ts";
import { serveFakeOpencode } from "../helpers/fake_opencode_server.ts";

function depsWith(state: string): CliDeps {
  const env: Record<string, string> = { XDG_STATE_HOME: state, HOME: "/nonexistent" };
  return { env: (n: string) => env[n], fetch } as unknown as CliDeps;
}

async function withService(
  plugins: Array<Record<string, unknown>>,
  check: (deps: CliDeps) => Promise<void>,
): Promise<void> {
  const srv = serveFakeOpencode();
  const state = await Deno.makeTempDir({ prefix: "muxbridge-doctor-svc-" });
  try {
    srv.fake.line = 2;
    srv.fake.version = "2.1.2";
    srv.fake.password = "svc-pw";
    srv.fake.plugins = plugins;
    await Deno.mkdir(join(state, "opencode"));
    await Deno.writeTextFile(
      join(state, "opencode", "service.json"),
      JSON.stringify({ id: "x", version: "2.1.2", url: srv.url, pid: 1, password: "svc-pw" }),
      { mode: 0o600 },
    );
    await check(depsWith(state));
  } finally {
    await srv.close();
    await Deno.remove(state, { recursive: true });
  }
}

Deno.test("doctor: nothing to check without a 2.x plugin installed", async () => {
  assert.deepEqual(await serviceChecks(depsWith("/nonexistent"), false), []);
});

Deno.test("doctor: no 2.x service running is a warning that says how to start one", async () => {
  const [c] = await serviceChecks(depsWith("/nonexistent"), true);
  assert.equal(c.status, "warn");
  assert.match(c.detail, /no OpenCode 2\.x service runs/);
  assert.match(c.hint ?? "", /Start `opencode`/);
});

Deno.test("doctor: a running 2.x service with muxbridge active passes both checks", async () => {
  await withService([
    {
      id: "muxbridge",
      source: { type: "local", path: "/c/plugins/muxbridge/server.js" },
      state: { status: "active" },
    },
  ], async (deps) => {
    const checks = await serviceChecks(deps, true);
    assert.deepEqual(checks.map((c) => [c.name, c.status]), [
      ["opencode 2.x service", "pass"],
      ["opencode 2.x plugin loaded", "pass"],
    ]);
    assert.match(checks[0].detail, /runs OpenCode 2\.1\.2/);
  });
});

Deno.test("doctor: a plugin the service refused fails with OpenCode's own reason and the fix", async () => {
  await withService([
    {
      source: { type: "local", path: "/c/plugin/muxbridge.js" },
      state: { status: "failed", error: "Plugin must export a default definition with an id" },
    },
  ], async (deps) => {
    const loaded = (await serviceChecks(deps, true)).find((c) =>
      c.name === "opencode 2.x plugin loaded"
    )!;
    assert.equal(loaded.status, "fail");
    assert.match(loaded.detail, /refused \/c\/plugin\/muxbridge\.js: Plugin must export/);
    assert.match(loaded.hint ?? "", /muxbridge install/);
  });
});

Deno.test("doctor: a service that does not list muxbridge yet is a warning", async () => {
  await withService([], async (deps) => {
    const loaded = (await serviceChecks(deps, true)).find((c) =>
      c.name === "opencode 2.x plugin loaded"
    )!;
    assert.equal(loaded.status, "warn");
  });
});
