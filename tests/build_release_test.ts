/**
 * `scripts/build_release.ts`: the target table, the compiler argv for each tool, the checksum
 * file (checked with the real `sha256sum -c`), and the tag guard. The builds themselves run in
 * `deno task test:binary` (host, Bun) and in the release workflow (five targets, deno compile).
 */

import assert from "node:assert/strict";
import { createRunner } from "../lib/sys/exec.ts";
import {
  assetName,
  BUN_HOST_FLAGS,
  BUN_JIT_POLICY,
  compileArgv,
  DENO_PERMISSIONS,
  sha256sums,
  TARGETS,
} from "../scripts/build_release.ts";

const run = createRunner();
const bins = { deno: "/x/deno", bun: "/x/bun" };
const byName = (name: string) => TARGETS.find((t) => t.name === name)!;

Deno.test("TARGETS are the five release platforms with the asset names install.sh derives", () => {
  assert.deepEqual(TARGETS.map(assetName), [
    "muxbridge-linux-x64",
    "muxbridge-linux-arm64",
    "muxbridge-darwin-x64",
    "muxbridge-darwin-arm64",
    "muxbridge-windows-x64.exe",
  ]);
});

Deno.test("compileArgv() for deno grants the run-time permissions and names the target", () => {
  assert.deepEqual(
    compileArgv({
      tool: "deno",
      target: byName("darwin-arm64"),
      host: byName("linux-x64"),
      entry: "main.ts",
      output: "out/m",
      bins,
    }),
    [
      "/x/deno",
      "compile",
      ...DENO_PERMISSIONS,
      "--target",
      "aarch64-apple-darwin",
      "--output",
      "out/m",
      "main.ts",
    ],
  );
  // /proc/<pid>/stat of another process needs --allow-all in Deno 2.9.
  assert.deepEqual(DENO_PERMISSIONS, ["--allow-all"]);
});

Deno.test("compileArgv() for bun adds bytecode only for the host, the JIT policy to every build", () => {
  const host = byName("linux-x64");
  const job = { tool: "bun" as const, host, entry: "main.ts", output: "o", bins };
  assert.deepEqual(compileArgv({ ...job, target: null }), [
    "/x/bun",
    "build",
    "--compile",
    BUN_JIT_POLICY,
    ...BUN_HOST_FLAGS,
    "main.ts",
    "--outfile",
    "o",
  ]);
  assert.deepEqual(compileArgv({ ...job, target: host }), [
    "/x/bun",
    "build",
    "--compile",
    BUN_JIT_POLICY,
    ...BUN_HOST_FLAGS,
    "--target=bun-linux-x64",
    "main.ts",
    "--outfile",
    "o",
  ]);
  assert.deepEqual(compileArgv({ ...job, target: byName("windows-x64") }), [
    "/x/bun",
    "build",
    "--compile",
    BUN_JIT_POLICY,
    "--target=bun-windows-x64",
    "main.ts",
    "--outfile",
    "o",
  ]);
});

Deno.test("sha256sums() writes sorted lines that sha256sum -c accepts", async () => {
  const dir = await Deno.makeTempDir({ prefix: "muxbridge-sums-" });
  try {
    const enc = new TextEncoder();
    const files = new Map([["b-asset", enc.encode("bee")], ["a-asset", enc.encode("")]]);
    const text = sha256sums(files);
    assert.equal(
      text,
      "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855  a-asset\n" +
        `${
          Array.from(
            new Uint8Array(await crypto.subtle.digest("SHA-256", enc.encode("bee"))),
            (b) => b.toString(16).padStart(2, "0"),
          ).join("")
        }  b-asset\n`,
    );
    for (const [name, bytes] of files) await Deno.writeFile(`${dir}/${name}`, bytes);
    await Deno.writeTextFile(`${dir}/SHA256SUMS`, text);
    const check = await run(["sha256sum", "-c", "SHA256SUMS"], { timeoutMs: 10_000, cwd: dir });
    assert.equal(check.code, 0, check.stdout + check.stderr);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("build_release.ts refuses a tag that is not v + deno.json's version, before building", async () => {
  const script = new URL("../scripts/build_release.ts", import.meta.url).pathname;
  const r = await run(
    [Deno.execPath(), "run", "--allow-all", "--quiet", script, "--tool", "bun", "--tag", "v0.0.0"],
    { timeoutMs: 60_000 },
  );
  assert.equal(r.code, 1);
  assert.match(r.stderr, /tag "v0\.0\.0" does not match deno\.json version/);
});
