/**
 * `scripts/build_release.ts`: the target table, Bun's argv, the tar and xz argv, the checksum
 * file (checked with the real `sha256sum -c`), the installer a release attaches, the tag guard,
 * and the whole packing path run for real (GNU tar, xz, SHA256SUMS, the unpacked binary run) on
 * stand-in binaries with `--skip-build`. Bun's own build of this machine's binary runs in `deno
 * task test:binary`; cross builds need the npm registry and are not run by the tests.
 */

import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import denoConfig from "../deno.json" with { type: "json" };
import { createRunner } from "../lib/sys/exec.ts";
import { readmeBlocks } from "../scripts/_readme_blocks.ts";
import {
  archiveName,
  binaryName,
  BUN_HOST_FLAGS,
  BUN_JIT_POLICY,
  compileArgv,
  hostTarget,
  installerFor,
  README_COMMAND,
  sha256sums,
  tarArgv,
  TARGETS,
  xzArgv,
} from "../scripts/build_release.ts";
import { codeBlocks, doc, section } from "./docs/_readme.ts";
import { requirement, requires, tool } from "./helpers/requires.ts";

const run = createRunner();
const byName = (name: string) => TARGETS.find((t) => t.name === name)!;
const SCRIPT = new URL("../scripts/build_release.ts", import.meta.url).pathname;
const host = hostTarget();
const PACKING = [
  requirement("a release target for this machine", host !== null, "Linux or macOS, x64 or arm64"),
  tool("xz", "apt-get install -y xz-utils"),
  tool("sha256sum", "apt-get install -y coreutils"),
];

Deno.test("TARGETS are the five release platforms, with the names install.sh derives", () => {
  assert.deepEqual(TARGETS.map(archiveName), [
    "muxbridge-linux-x64.tar.xz",
    "muxbridge-linux-arm64.tar.xz",
    "muxbridge-darwin-x64.tar.xz",
    "muxbridge-darwin-arm64.tar.xz",
    "muxbridge-windows-x64.tar.xz",
  ]);
  assert.deepEqual(TARGETS.map(binaryName), [
    "muxbridge",
    "muxbridge",
    "muxbridge",
    "muxbridge",
    "muxbridge.exe",
  ]);
});

Deno.test("compileArgv() is bun build --compile: bytecode only for the host, the JIT policy always", () => {
  const host = byName("linux-x64");
  const job = { host, entry: "main.ts", output: "o", bun: "/x/bun" };
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

Deno.test("tarArgv() and xzArgv() pack one file with a fixed owner, mode and date", () => {
  assert.deepEqual(tarArgv("/d/bin/linux-x64", "muxbridge", "/d/r/m.tar", 1700000000), [
    "tar",
    "--create",
    "--format=ustar",
    "--file=/d/r/m.tar",
    "--directory=/d/bin/linux-x64",
    "--owner=0",
    "--group=0",
    "--numeric-owner",
    "--mode=u=rwx,go=rx",
    "--mtime=@1700000000",
    "--",
    "muxbridge",
  ]);
  assert.deepEqual(xzArgv("/d/r/m.tar"), [
    "xz",
    "--compress",
    "--force",
    "-6",
    "--threads=0",
    "--",
    "/d/r/m.tar",
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

Deno.test("installerFor() writes the repository into install.sh's one DEFAULT_REPO line", async () => {
  const source = await Deno.readTextFile(new URL("../scripts/install.sh", import.meta.url));
  const out = installerFor(source, "acme/muxbridge");
  assert.equal(out.match(/^DEFAULT_REPO=.*$/gm)?.join("\n"), 'DEFAULT_REPO="acme/muxbridge"');
  assert.equal(out.replace('DEFAULT_REPO="acme/muxbridge"', 'DEFAULT_REPO=""'), source);
  for (const bad of ["acme", "acme/mux bridge", "a/b/c", "acme/$(id)", '"/x', "-x/y", ""]) {
    assert.throws(() => installerFor(source, bad), RangeError, bad);
  }
  assert.throws(() => installerFor("#!/bin/sh\n", "acme/muxbridge"), /DEFAULT_REPO/);
});

/** Runs the script; stdout, stderr and exit code apart. */
function script(args: string[], env: Record<string, string> = {}) {
  return run([Deno.execPath(), "run", "--allow-all", "--quiet", SCRIPT, ...args], {
    timeoutMs: 5 * 60_000,
    env,
  });
}

Deno.test("build_release.ts refuses a tag that is not v + deno.json's version, before building", async () => {
  const r = await script(["--tag", "v0.0.0"]);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /tag "v0\.0\.0" does not match deno\.json version/);
});

Deno.test("build_release.ts refuses an unknown target, --readme beyond this machine, a bad --repo", async () => {
  const cases: Array<[string[], RegExp]> = [
    [["--target", "plan9-x64"], /unknown target "plan9-x64"; known: host, linux-x64/],
    [["--target", "windows-x64", "--readme"], /--readme .* --target host alone/],
    [["--repo", "not a repo", "--skip-build"], /Cannot use repository "not a repo"/],
    [["--host", "--target", "host"], /--host builds this machine's binary alone/],
    [["--tool", "deno"], /Unknown option '--tool'/],
  ];
  for (const [args, message] of cases) {
    const r = await script(args);
    assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
    assert.match(r.stderr, message, args.join(" "));
    assert.equal(r.stdout, "");
  }
});

/** Stand-in binaries in `<out>/bin/<target>/`: the host's prints `muxbridge <version>`. */
async function standIns(out: string, version = denoConfig.version): Promise<void> {
  await Deno.mkdir(`${out}/bin/${host!.name}`, { recursive: true });
  await Deno.writeTextFile(
    `${out}/bin/${host!.name}/muxbridge`,
    `#!/bin/sh\necho "muxbridge ${version}"\n`,
    { mode: 0o644 },
  );
  await Deno.mkdir(`${out}/bin/windows-x64`, { recursive: true });
  await Deno.writeTextFile(`${out}/bin/windows-x64/muxbridge.exe`, "MZ not really\n");
}

Deno.test({
  name:
    "build_release.ts packs each target into a .tar.xz of its binary alone, lists them and the installer in SHA256SUMS, and runs the unpacked host binary",
  ...requires("packing a release", PACKING),
  async fn() {
    const out = await Deno.makeTempDir({ prefix: "muxbridge-release-" });
    try {
      await standIns(out);
      // A stale file of an earlier run must not be shipped.
      await Deno.mkdir(`${out}/release`);
      await Deno.writeTextFile(`${out}/release/muxbridge-linux-riscv64.tar.xz`, "stale");
      const env = { SOURCE_DATE_EPOCH: "1700000000" };
      const args = [
        "--skip-build",
        "--target",
        "host",
        "--target",
        "windows-x64",
        "--repo",
        "acme/muxbridge",
        "--out",
        out,
      ];
      const r = await script(args, env);
      assert.equal(r.code, 0, r.stderr);
      const assets = [archiveName(host!), "muxbridge-windows-x64.tar.xz", "install.sh"].sort();
      assert.deepEqual(
        [...Deno.readDirSync(`${out}/release`)].map((e) => e.name).sort(),
        [...assets, "SHA256SUMS"].sort(),
      );
      const sums = await Deno.readTextFile(`${out}/release/SHA256SUMS`);
      assert.deepEqual(sums.trimEnd().split("\n").map((l) => l.split("  ")[1]), assets);
      const check = await run(["sha256sum", "-c", "SHA256SUMS"], {
        timeoutMs: 30_000,
        cwd: `${out}/release`,
      });
      assert.equal(check.code, 0, check.stdout + check.stderr);
      // Each archive: one member, owned by 0:0, mode 0755, dated SOURCE_DATE_EPOCH.
      for (
        const [archive, member] of [[archiveName(host!), "muxbridge"], [
          "muxbridge-windows-x64.tar.xz",
          "muxbridge.exe",
        ]]
      ) {
        const listed = await run(
          [
            "tar",
            "--list",
            "--verbose",
            "--numeric-owner",
            "--full-time",
            `--file=${out}/release/${archive}`,
          ],
          { timeoutMs: 30_000, env: { TZ: "UTC" } },
        );
        assert.equal(listed.code, 0, listed.stderr);
        assert.match(
          listed.stdout,
          new RegExp(`^-rwxr-xr-x 0/0 +\\d+ 2023-11-14 22:13:20 ${member.replace(".", "\\.")}\\n$`),
        );
      }
      // The sizes, printed on stdout.
      assert.match(r.stdout, /^archive +download +unpacked\n/);
      assert.match(
        r.stdout,
        new RegExp(
          `^${archiveName(host!).replace(/\./g, "\\.")} +\\d+\\.\\d MB +\\d+\\.\\d MB$`,
          "m",
        ),
      );
      assert.match(
        await Deno.readTextFile(`${out}/release/install.sh`),
        /^DEFAULT_REPO="acme\/muxbridge"$/m,
      );
      // The same commit packs the same bytes.
      const first = await Deno.readFile(`${out}/release/${archiveName(host!)}`);
      const again = await script(args, env);
      assert.equal(again.code, 0, again.stderr);
      assert.deepEqual(await Deno.readFile(`${out}/release/${archiveName(host!)}`), first);
    } finally {
      await Deno.remove(out, { recursive: true });
    }
  },
});

Deno.test({
  name: "build_release.ts refuses to pack a host binary that does not print deno.json's version",
  ...requires("packing a release", PACKING),
  async fn() {
    const out = await Deno.makeTempDir({ prefix: "muxbridge-release-" });
    try {
      await standIns(out, "0.0.0-other");
      const r = await script(["--skip-build", "--target", "host", "--out", out]);
      assert.equal(r.code, 1);
      assert.match(
        r.stderr,
        new RegExp(
          `--version printed "muxbridge 0\\.0\\.0-other\\\\n".*expected "muxbridge ${
            denoConfig.version.replace(/\./g, "\\.")
          }"`,
        ),
      );
      assert.ok(!existsSync(`${out}/release/SHA256SUMS`), "no SHA256SUMS for a refused build");
      const missing = await script(["--skip-build", "--target", "linux-arm64", "--out", out]);
      assert.equal(missing.code, 1);
      assert.match(
        missing.stderr,
        /--skip-build: there is no .*bin\/linux-arm64\/muxbridge to pack/,
      );
    } finally {
      await Deno.remove(out, { recursive: true });
    }
  },
});

Deno.test("docs/building.md's release-sizes block is written by build_release.ts, which the page shows", () => {
  const text = section(doc("docs/building.md"), "Building and releasing");
  const block = readmeBlocks(text).find((b) => b.name === "release-sizes");
  assert.ok(block, "the section has the release-sizes block");
  assert.equal(block.how, "measured");
  assert.equal(block.command, README_COMMAND);
  assert.ok(
    codeBlocks(text, "sh").flat().some((l) => l.startsWith(README_COMMAND)),
    "the section shows the command",
  );
  assert.match(block.body, /^\| `muxbridge-linux-x64\.tar\.xz` \| \d+\.\d MB \| \d+\.\d MB \|$/m);
  assert.equal(
    denoConfig.tasks.release,
    "./node_modules/.bin/deno run --allow-all scripts/build_release.ts",
  );
});
