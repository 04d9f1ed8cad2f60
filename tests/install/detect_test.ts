/**
 * Which OpenCode lines `install` finds: the `--version` of `opencode`, `opencode2` and
 * `MUXBRIDGE_OPENCODE_BIN` on PATH (through the exec seam, bounded), the npm package a binary
 * that does not answer belongs to, and OpenCode 2.x's service files.
 */

import assert from "node:assert/strict";
import { detectOpencode, lineOfPackage, lineOfVersion } from "../../lib/install/detect.ts";
import { MuxError } from "../../lib/sys/errors.ts";
import { fakeEnv } from "../fakes/fake_env.ts";
import { createFakeRunner } from "../fakes/fake_runner.ts";
import { memoryFiles } from "../fakes/memory_files.ts";

const HOME = "/home/me";
const ENV = { HOME, PATH: "/usr/local/bin:/usr/bin" };

Deno.test("lineOfVersion() reads 1.x (`1.18.33`) and 2.x (`opencode v2.1.2`), and nothing else", () => {
  assert.equal(lineOfVersion("1.18.33\n"), "1.x");
  assert.equal(lineOfVersion("opencode v2.1.2\n"), "2.x");
  assert.equal(lineOfVersion("warning: something\nopencode v2.0.0-beta.1\n"), "2.x");
  assert.equal(lineOfVersion("0.15.2"), null);
  assert.equal(lineOfVersion("opencode v3.0.0"), null);
  assert.equal(lineOfVersion("usage: opencode [options]"), null);
  assert.equal(lineOfVersion(""), null);
});

Deno.test("lineOfPackage() knows npm's opencode-ai (and its platform packages) and @opencode/cli", () => {
  assert.equal(lineOfPackage("/usr/lib/node_modules/opencode-ai/bin/opencode.exe"), "1.x");
  assert.equal(lineOfPackage("/p/node_modules/opencode-linux-x64/bin/opencode"), "1.x");
  assert.equal(lineOfPackage("/p/node_modules/@opencode/cli/bin/opencode.exe"), "2.x");
  assert.equal(lineOfPackage("/p/node_modules/@opencode/cli-linux-x64/bin/opencode"), "2.x");
  assert.equal(lineOfPackage("/usr/local/bin/opencode"), null);
});

Deno.test("detectOpencode() asks each binary on PATH once, with a bounded timeout, and finds both lines", async () => {
  const files = memoryFiles();
  files.executable("/usr/local/bin/opencode");
  files.executable("/usr/bin/opencode2");
  const runner = createFakeRunner()
    .on(["/usr/local/bin/opencode", "--version"], { stdout: "1.18.33\n" })
    .on(["/usr/bin/opencode2", "--version"], { stdout: "opencode v2.1.2\n" });
  const found = await detectOpencode({ run: runner.run, env: fakeEnv(ENV), files });
  assert.deepEqual(found.lines, ["1.x", "2.x"]);
  assert.equal(runner.calls.length, 2);
  assert.ok(runner.calls.every((c) => c.opts.timeoutMs > 0 && c.opts.timeoutMs <= 30_000));
  assert.match(found.evidence[0].detail, /\/usr\/local\/bin\/opencode --version: 1\.18\.33/);
});

Deno.test("detectOpencode() with nothing on PATH finds nothing; 2.x's service.json alone shows 2.x", async () => {
  const none = await detectOpencode({
    run: createFakeRunner().run,
    env: fakeEnv(ENV),
    files: memoryFiles(),
  });
  assert.deepEqual(none, { lines: [], evidence: [] });
  for (const file of [`${HOME}/.local/state/opencode/service.json`, "/x/opencode/service.json"]) {
    const found = await detectOpencode({
      run: createFakeRunner().run,
      env: fakeEnv({ ...ENV, XDG_CONFIG_HOME: "/x" }),
      files: memoryFiles({ [file]: "{}" }),
    });
    assert.deepEqual(found.lines, ["2.x"], file);
  }
});

Deno.test("detectOpencode() reads a binary that times out, fails or prints something else by its npm package, else not at all", async () => {
  const files = memoryFiles({ "/p/node_modules/opencode-ai/bin/opencode.exe": "" });
  files.executable("/p/node_modules/opencode-ai/bin/opencode.exe");
  files.links.set("/usr/local/bin/opencode", "/p/node_modules/opencode-ai/bin/opencode.exe");
  files.executable("/usr/bin/opencode2");
  const runner = createFakeRunner()
    .on(
      ["/usr/local/bin/opencode", "--version"],
      new MuxError("timed_out", "opencode --version did not finish"),
    )
    .on(["/usr/bin/opencode2", "--version"], { code: 1, stderr: "boom" });
  const found = await detectOpencode({ run: runner.run, env: fakeEnv(ENV), files });
  assert.deepEqual(found.lines, ["1.x"]);
  assert.match(found.evidence[0].detail, /did not answer in time; .* is npm's opencode-ai/);
  assert.match(found.evidence[1].detail, /opencode2 --version exited 1/);
});

Deno.test("detectOpencode() asks MUXBRIDGE_OPENCODE_BIN too", async () => {
  const files = memoryFiles();
  files.executable("/opt/oc/bin/opencode");
  const runner = createFakeRunner()
    .on(["/opt/oc/bin/opencode", "--version"], { stdout: "opencode v2.1.2" });
  const found = await detectOpencode({
    run: runner.run,
    env: fakeEnv({ ...ENV, MUXBRIDGE_OPENCODE_BIN: "/opt/oc/bin/opencode" }),
    files,
  });
  assert.deepEqual(found.lines, ["2.x"]);
});
