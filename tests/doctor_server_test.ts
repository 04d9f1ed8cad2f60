/**
 * `doctor --url` probes the server the way the bridge will: health, version gate, session lookup
 * and auth; and the opencode binary's version decides the pane command's syntax.
 */

import assert from "node:assert/strict";
import type { Check } from "../lib/backend/backend.ts";
import type { CliDeps, Invocation } from "../lib/cli/commands/_command.ts";
import { doctorCommand } from "../lib/cli/commands/doctor.ts";
import { silentLogger } from "../lib/sys/log.ts";
import { createFakeClock } from "./fakes/fake_clock.ts";
import { fakeEnv } from "./fakes/fake_env.ts";
import { createFakeOpencode, type FakeOpencode } from "./fakes/fake_opencode.ts";
import { fakeProcesses } from "./fakes/memory_store.ts";
import { createFakeRunner } from "./fakes/fake_runner.ts";

async function doctor(
  server: FakeOpencode,
  opts: { binVersion?: string; env?: Record<string, string>; url?: string } = {},
): Promise<{ checks: Check[]; exitCode: number }> {
  const runner = createFakeRunner().on(["opencode", "--version"], {
    code: 0,
    stdout: `${opts.binVersion ?? "1.18.33"}\n`,
  });
  const deps = {
    env: fakeEnv({ HOME: "/nonexistent-home", ...opts.env }),
    run: runner.run,
    clock: createFakeClock(),
    processes: fakeProcesses(),
    fetch: server.fetch,
    readText: () => null,
    stdout: () => {},
    log: silentLogger,
    cwd: "/work",
    version: "0.0.0-test",
    runtime: "test",
    signal: new AbortController().signal,
    bridgeIO: () => {
      throw new Error("not in doctor");
    },
    backends: [],
  } satisfies CliDeps;
  const inv: Invocation = {
    values: { url: opts.url ?? "http://127.0.0.1:4096" },
    positionals: [],
    global: { json: true },
  };
  const result = await doctorCommand.run(inv, deps);
  return { checks: (result.json as { checks: Check[] }).checks, exitCode: result.exitCode ?? 0 };
}

const find = (checks: Check[], name: string) => checks.find((c) => c.name === name);

Deno.test("doctor --url passes a healthy OpenCode 1.x server with its version", async () => {
  const { checks } = await doctor(createFakeOpencode());
  assert.equal(find(checks, "server health")?.status, "pass");
  assert.equal(find(checks, "server version")?.status, "pass");
  assert.match(find(checks, "server version")!.detail, /1\.18\.33/);
  assert.equal(find(checks, "server session lookup")?.status, "pass");
  assert.equal(find(checks, "opencode binary")?.status, "pass");
});

Deno.test("doctor --url passes an OpenCode 2.x service and names its line", async () => {
  const server = createFakeOpencode();
  server.line = 2;
  server.version = "2.1.2";
  const { checks } = await doctor(server);
  const v = find(checks, "server version")!;
  assert.equal(v.status, "pass");
  assert.match(v.detail, /2\.1\.2 \(2\.x/);
  assert.equal(find(checks, "server session lookup")?.status, "pass");
});

Deno.test("doctor --url fails a server version no line supports, with a fix", async () => {
  const server = createFakeOpencode();
  server.version = "2.0.3";
  const { checks, exitCode } = await doctor(server);
  const v = find(checks, "server version")!;
  assert.equal(v.status, "fail");
  assert.match(v.detail, /unsupported_version/);
  assert.match(v.hint ?? "", /@opencode\/cli@2/);
  assert.equal(exitCode, 1);
});

Deno.test("doctor fails an opencode binary of a version no line supports", async () => {
  const { checks } = await doctor(createFakeOpencode(), { binVersion: "0.15.8" });
  const b = find(checks, "opencode binary")!;
  assert.equal(b.status, "fail");
  assert.match(b.hint ?? "", /too old/);
});

Deno.test("doctor passes an opencode 2.x binary (`opencode v2.1.2`)", async () => {
  const { checks } = await doctor(createFakeOpencode(), { binVersion: "2.1.2" });
  const b = find(checks, "opencode binary")!;
  assert.equal(b.status, "pass");
  assert.match(b.detail, /OpenCode 2\.x/);
});

Deno.test("doctor --url warns when the server does not tell its version", async () => {
  const server = createFakeOpencode();
  server.version = null;
  const { checks } = await doctor(server);
  assert.equal(find(checks, "server version")?.status, "warn");
});

Deno.test("doctor --url says auth failed with a hint, and passes with the right password", async () => {
  const server = createFakeOpencode();
  server.password = "pw";
  const bad = await doctor(server);
  const lookup = find(bad.checks, "server health")!;
  assert.equal(lookup.status, "fail");
  assert.match(lookup.hint ?? "", /OPENCODE_SERVER_PASSWORD/);
  const good = await doctor(server, { env: { OPENCODE_SERVER_PASSWORD: "pw" } });
  assert.equal(find(good.checks, "server session lookup")?.status, "pass");
  assert.match(find(good.checks, "server session lookup")!.detail, /authenticated/);
  // A password in the URL is refused (it belongs in the environment), never used.
  await assert.rejects(
    () => doctor(server, { url: "http://opencode:pw@127.0.0.1:4096" }),
    (err: Error & { code?: string }) =>
      err.code === "usage" && /carries credentials/.test(err.message),
  );
});

Deno.test("doctor --url says check the URL or run muxbridge install when nothing listens, never --port 0", async () => {
  const server = createFakeOpencode();
  server.mode = "down";
  const { checks } = await doctor(server);
  const h = find(checks, "server health")!;
  assert.equal(h.status, "fail");
  assert.match(h.hint ?? "", /muxbridge install/);
  assert.doesNotMatch(h.hint ?? "", /--port 0/);
});

Deno.test("doctor --url warns when the server answers without a password, and says how to set one", async () => {
  const open = await doctor(createFakeOpencode());
  const c = find(open.checks, "server password")!;
  assert.equal(c.status, "warn");
  assert.match(c.detail, /http:\/\/127\.0\.0\.1:4096 answers without a password/);
  assert.match(c.hint ?? "", /OPENCODE_SERVER_PASSWORD/);
  assert.doesNotMatch(c.hint ?? "", /--port 0/);
  // A server that asks: pass, whether or not doctor itself has the password.
  const locked = createFakeOpencode();
  locked.password = "s3cret";
  for (const env of [{ OPENCODE_SERVER_PASSWORD: "s3cret" }, {}] as Record<string, string>[]) {
    const { checks } = await doctor(locked, { env });
    const p = find(checks, "server password")!;
    assert.equal(p.status, "pass", JSON.stringify(env));
    assert.match(p.detail, /asks for a password/);
  }
});
