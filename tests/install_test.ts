/**
 * `scripts/install.sh` against a local HTTP server on 127.0.0.1 that serves fake release assets
 * in GitHub's layout (`tests/helpers/install_sandbox.ts`): a good release installs and runs; a
 * corrupt asset, a missing asset, a missing or incomplete SHA256SUMS, an unknown platform and a
 * missing tool are refused with one stderr line, a non-zero exit, and nothing installed (an
 * earlier install left untouched). The supply-chain checks (https only, build provenance) are in
 * `install_security_test.ts`.
 */

import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import {
  assertRefused,
  ASSET,
  BASE_TOOLS,
  enc,
  fakeBinary,
  goodRelease,
  host,
  INSTALLER,
  pathWith,
  run,
  sandbox,
  serve,
} from "./helpers/install_sandbox.ts";
import { sha256sums } from "../scripts/build_release.ts";
import { requirement, requires, tool } from "./helpers/requires.ts";

const HOST = [
  requirement("a release target for this machine", host !== null, "Linux or macOS, x64 or arm64"),
];

Deno.test({
  name: "install.sh installs the latest release's binary for this platform, and it runs",
  ...requires("the installer against a local release", HOST),
  async fn() {
    const server = await serve({ latest: goodRelease("9.9.9") });
    const box = await sandbox();
    try {
      const r = await box.install(["--prefix", box.prefix], { MUXBRIDGE_RELEASE_URL: server.url });
      assert.equal(r.code, 0, r.stderr);
      assert.match(
        r.stdout,
        new RegExp(`^muxbridge 9\\.9\\.9 installed to ${box.prefix}/muxbridge`),
      );
      assert.deepEqual(box.listPrefix(), ["muxbridge"]);
      const ran = await run([`${box.prefix}/muxbridge`, "--version"], { timeoutMs: 5000 });
      assert.equal(ran.stdout, "muxbridge 9.9.9\n");
      assert.deepEqual(server.requests, [
        `/releases/latest/download/${ASSET}`,
        "/releases/latest/download/SHA256SUMS",
      ]);
      assert.deepEqual([...Deno.readDirSync(`${box.dir}/tmp`)], []);
    } finally {
      await box.close();
      await server.close();
    }
  },
});

Deno.test({
  name: "install.sh --version installs that release and replaces an earlier install",
  ...requires("the installer against a local release", HOST),
  async fn() {
    const server = await serve({ latest: goodRelease("9.9.9"), "v1.2.3": goodRelease("1.2.3") });
    const box = await sandbox();
    try {
      await Deno.mkdir(box.prefix);
      await Deno.writeFile(`${box.prefix}/muxbridge`, fakeBinary("0.0.1"), { mode: 0o755 });
      const r = await box.install(["--version", "1.2.3", "--prefix", box.prefix], {
        MUXBRIDGE_RELEASE_URL: `${server.url}/`,
      });
      assert.equal(r.code, 0, r.stderr);
      assert.equal(
        Deno.readTextFileSync(`${box.prefix}/muxbridge`),
        new TextDecoder().decode(fakeBinary("1.2.3")),
      );
      assert.deepEqual(server.requests, [
        `/releases/download/v1.2.3/${ASSET}`,
        "/releases/download/v1.2.3/SHA256SUMS",
      ]);
      // v-prefixed and environment forms select the same release.
      const again = await box.install([], {
        MUXBRIDGE_RELEASE_URL: server.url,
        MUXBRIDGE_VERSION: "v1.2.3",
        MUXBRIDGE_PREFIX: box.prefix,
      });
      assert.equal(again.code, 0, again.stderr);
      assert.equal(server.requests.at(-1), "/releases/download/v1.2.3/SHA256SUMS");
    } finally {
      await box.close();
      await server.close();
    }
  },
});

Deno.test({
  name: "install.sh defaults to ~/.local/bin and says when it is not on PATH",
  ...requires("the installer against a local release", HOST),
  async fn() {
    const server = await serve({ latest: goodRelease("9.9.9") });
    const box = await sandbox();
    try {
      const r = await box.install([], { MUXBRIDGE_RELEASE_URL: server.url });
      assert.equal(r.code, 0, r.stderr);
      assert.ok(existsSync(`${box.dir}/home/.local/bin/muxbridge`));
      assert.match(r.stdout, /is not on PATH/);
    } finally {
      await box.close();
      await server.close();
    }
  },
});

Deno.test({
  name: "install.sh refuses a corrupted asset and leaves the earlier install untouched",
  ...requires("the installer against a local release", HOST),
  async fn() {
    const release = goodRelease("9.9.9");
    // Same length, one byte changed: only the checksum can tell.
    const corrupt = release.get(ASSET)!.slice();
    corrupt[corrupt.length - 2] ^= 1;
    release.set(ASSET, corrupt);
    const server = await serve({ latest: release });
    const box = await sandbox();
    try {
      await Deno.mkdir(box.prefix);
      await Deno.writeFile(`${box.prefix}/muxbridge`, fakeBinary("0.0.1"), { mode: 0o755 });
      const r = await box.install(["--prefix", box.prefix], { MUXBRIDGE_RELEASE_URL: server.url });
      assertRefused(r, /checksum mismatch for .*nothing installed/, box);
      assert.deepEqual(box.listPrefix(), ["muxbridge"]);
      assert.equal(
        Deno.readTextFileSync(`${box.prefix}/muxbridge`),
        new TextDecoder().decode(fakeBinary("0.0.1")),
      );
    } finally {
      await box.close();
      await server.close();
    }
  },
});

Deno.test({
  name: "install.sh refuses when the asset, SHA256SUMS or its line for the asset is missing",
  ...requires("the installer against a local release", HOST),
  async fn() {
    const noAsset = goodRelease("9.9.9");
    noAsset.delete(ASSET);
    const noSums = goodRelease("9.9.9");
    noSums.delete("SHA256SUMS");
    const noLine = goodRelease("9.9.9");
    noLine.set(
      "SHA256SUMS",
      enc.encode(sha256sums(new Map([["muxbridge-other", enc.encode("x")]]))),
    );
    const server = await serve({ "v1.0.0": noAsset, "v2.0.0": noSums, "v3.0.0": noLine });
    const box = await sandbox();
    try {
      const env = { MUXBRIDGE_RELEASE_URL: server.url };
      const cases: Array<[string, RegExp]> = [
        [
          "1.0.0",
          new RegExp(`cannot download .*/v1\\.0\\.0/${ASSET} \\(.*404.*\\); nothing installed`),
        ],
        ["2.0.0", /cannot download .*\/SHA256SUMS \(.*404.*\), so the binary cannot be verified/],
        ["3.0.0", new RegExp(`SHA256SUMS lists no checksum for ${ASSET}`)],
        ["4.0.0", /cannot download .*\/v4\.0\.0\//],
      ];
      for (const [version, pattern] of cases) {
        const r = await box.install(["--version", version, "--prefix", box.prefix], env);
        assertRefused(r, pattern, box);
        assert.deepEqual(box.listPrefix(), [], `version ${version} installed something`);
      }
    } finally {
      await box.close();
      await server.close();
    }
  },
});

Deno.test("install.sh refuses an OS or CPU it has no release for", async () => {
  const server = await serve({ latest: goodRelease("9.9.9") });
  const box = await sandbox();
  try {
    const fake = `${box.dir}/fakeuname`;
    await Deno.mkdir(fake);
    for (
      const [s, m, pattern] of [["Linux", "riscv64", /CPU "riscv64"/], [
        "SunOS",
        "x86_64",
        /OS "SunOS"/,
      ]] as const
    ) {
      await Deno.writeTextFile(
        `${fake}/uname`,
        `#!/bin/sh\ncase "$1" in -s) echo ${s} ;; -m) echo ${m} ;; esac\n`,
        { mode: 0o755 },
      );
      const r = await box.install(["--prefix", box.prefix], {
        MUXBRIDGE_RELEASE_URL: server.url,
        PATH: `${fake}:${Deno.env.get("PATH")}`,
      });
      assertRefused(r, pattern, box);
    }
    assert.deepEqual(server.requests, []);
    assert.deepEqual(box.listPrefix(), []);
  } finally {
    await box.close();
    await server.close();
  }
});

Deno.test({
  name: "install.sh works with wget and shasum alone, and refuses without a downloader or hasher",
  ...requires("the installer against a local release", HOST),
  async fn() {
    const server = await serve({ latest: goodRelease("9.9.9") });
    const box = await sandbox();
    try {
      const env = (path: string) => ({ MUXBRIDGE_RELEASE_URL: server.url, PATH: path });
      const alt = await pathWith(box, [...BASE_TOOLS, "wget", "shasum", "perl"]);
      const ok = await box.install(["--prefix", box.prefix], env(alt));
      assert.equal(ok.code, 0, ok.stderr);
      assert.deepEqual(box.listPrefix(), ["muxbridge"]);
      await Deno.remove(box.prefix, { recursive: true });
      await Deno.remove(alt, { recursive: true });

      const noFetch = await pathWith(box, [...BASE_TOOLS, "sha256sum"]);
      assertRefused(
        await box.install(["--prefix", box.prefix], env(noFetch)),
        /needs curl or wget/,
        box,
      );
      await Deno.remove(noFetch, { recursive: true });

      const noHash = await pathWith(box, [...BASE_TOOLS, "curl"]);
      assertRefused(
        await box.install(["--prefix", box.prefix], env(noHash)),
        /needs sha256sum or shasum/,
        box,
      );
      assert.deepEqual(box.listPrefix(), []);
    } finally {
      await box.close();
      await server.close();
    }
  },
});

Deno.test("install.sh rejects unknown arguments with one line and exit 1", async () => {
  const box = await sandbox();
  try {
    const r = await box.install(["--frobnicate"]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /^muxbridge install: unknown argument "--frobnicate"/);
    const help = await box.install(["--help"]);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /^Usage: install\.sh/);
  } finally {
    await box.close();
  }
});

Deno.test({
  name: "install.sh is shellcheck-clean as POSIX sh",
  ...requires("install.sh shellcheck", [tool("shellcheck", "apt-get install -y shellcheck")]),
  async fn() {
    const r = await run(["shellcheck", "-s", "sh", INSTALLER], { timeoutMs: 30_000 });
    assert.equal(r.code, 0, r.stdout + r.stderr);
  },
});
