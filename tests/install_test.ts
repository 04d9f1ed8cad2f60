/**
 * `scripts/install.sh` against an HTTPS server on 127.0.0.1 that serves fake releases in
 * GitHub's layout (`tests/helpers/install_sandbox.ts`): a good release installs and runs; a
 * tampered archive, an archive without the binary, a missing archive, a missing or incomplete
 * SHA256SUMS, an unknown platform and a missing tool are refused with one stderr line, a non-zero
 * exit, and nothing installed (an earlier install left untouched). The https-only and
 * provenance checks are in `install_security_test.ts`.
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
  packArchive,
  pathWith,
  run,
  sandbox,
  serve,
} from "./helpers/install_sandbox.ts";
import { sha256sums } from "../scripts/build_release.ts";
import { requirement, requires, tool } from "./helpers/requires.ts";

const HOST = [
  requirement("a release target for this machine", host !== null, "Linux or macOS, x64 or arm64"),
  tool("openssl", "apt-get install -y openssl"),
  tool("xz", "apt-get install -y xz-utils"),
];

Deno.test({
  name: "install.sh installs the latest release's binary for this platform, and it runs",
  ...requires("the installer against a local release", HOST),
  async fn() {
    const server = await serve({ releases: { latest: await goodRelease("9.9.9") } });
    const box = await sandbox();
    try {
      const r = await box.install(["--prefix", box.prefix], server.env);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stderr, "");
      const p = box.prefix;
      assert.equal(
        r.stdout.split("\n").filter((l) => !l.startsWith("build provenance")).join("\n"),
        `muxbridge 9.9.9 installed to ${p}/muxbridge\n` +
          `next: ${p}/muxbridge install (the OpenCode plugin)\n` +
          `to uninstall: ${p}/muxbridge uninstall, then rm ${p}/muxbridge\n` +
          `note: ${p} is not on PATH; add it, e.g. export PATH="${p}:$PATH"\n`,
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
    const server = await serve({
      releases: { latest: await goodRelease("9.9.9"), "v1.2.3": await goodRelease("1.2.3") },
    });
    const box = await sandbox();
    try {
      await Deno.mkdir(box.prefix);
      await Deno.writeFile(`${box.prefix}/muxbridge`, fakeBinary("0.0.1"), { mode: 0o755 });
      const r = await box.install(["--version", "1.2.3", "--prefix", box.prefix], {
        ...server.env,
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
      assert.deepEqual(box.listPrefix(), ["muxbridge"], "no staging file left behind");
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
    const server = await serve({ releases: { latest: await goodRelease("9.9.9") } });
    const box = await sandbox();
    try {
      const r = await box.install([], server.env);
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
  name: "install.sh refuses a tampered archive and leaves the earlier install untouched",
  ...requires("the installer against a local release", HOST),
  async fn() {
    const release = await goodRelease("9.9.9");
    // Same length, one byte changed: only the checksum can tell.
    const tampered = release.get(ASSET)!.slice();
    tampered[tampered.length - 40] ^= 1;
    release.set(ASSET, tampered);
    const server = await serve({ releases: { latest: release } });
    const box = await sandbox();
    try {
      await Deno.mkdir(box.prefix);
      await Deno.writeFile(`${box.prefix}/muxbridge`, fakeBinary("0.0.1"), { mode: 0o755 });
      const r = await box.install(["--prefix", box.prefix], server.env);
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
  name: "install.sh refuses an archive without the binary, or one whose binary does not run",
  ...requires("the installer against a local release", HOST),
  async fn() {
    const release = (archive: Uint8Array) => {
      const files = new Map([[ASSET, archive]]);
      files.set("SHA256SUMS", enc.encode(sha256sums(files)));
      return files;
    };
    const server = await serve({
      releases: {
        "v1.0.0": release(await packArchive("something-else", fakeBinary("1.0.0"))),
        "v2.0.0": release(await packArchive("muxbridge", enc.encode("#!/bin/sh\nexit 9\n"))),
        "v3.0.0": release(enc.encode("not an archive")),
      },
    });
    const box = await sandbox();
    try {
      const cases: Array<[string, RegExp]> = [
        [
          "1.0.0",
          new RegExp(`cannot unpack ${ASSET.replace(/\./g, "\\.")} \\(tar: muxbridge: Not found`),
        ],
        ["2.0.0", new RegExp(`the muxbridge in ${ASSET.replace(/\./g, "\\.")} does not run`)],
        ["3.0.0", /cannot unpack .*nothing installed/],
      ];
      for (const [version, pattern] of cases) {
        const r = await box.install(["--version", version, "--prefix", box.prefix], server.env);
        assertRefused(r, pattern, box);
        assert.deepEqual(box.listPrefix(), [], `version ${version} installed something`);
      }
    } finally {
      await box.close();
      await server.close();
    }
  },
});

Deno.test({
  name: "install.sh refuses when the archive, SHA256SUMS or its line for the archive is missing",
  ...requires("the installer against a local release", HOST),
  async fn() {
    const noAsset = await goodRelease("9.9.9");
    noAsset.delete(ASSET);
    const noSums = await goodRelease("9.9.9");
    noSums.delete("SHA256SUMS");
    const noLine = await goodRelease("9.9.9");
    noLine.set(
      "SHA256SUMS",
      enc.encode(sha256sums(new Map([["muxbridge-other", enc.encode("x")]]))),
    );
    const server = await serve({
      releases: { "v1.0.0": noAsset, "v2.0.0": noSums, "v3.0.0": noLine },
    });
    const box = await sandbox();
    try {
      const cases: Array<[string, RegExp]> = [
        [
          "1.0.0",
          new RegExp(
            `cannot download .*/v1\\.0\\.0/${ASSET} \\(.*404.*\\); nothing installed \\(no release there yet\\? then build from source`,
          ),
        ],
        ["2.0.0", /cannot download .*\/SHA256SUMS \(.*404.*\), so the archive cannot be verified/],
        ["3.0.0", new RegExp(`SHA256SUMS lists no checksum for ${ASSET}`)],
        ["4.0.0", /cannot download .*\/v4\.0\.0\//],
      ];
      for (const [version, pattern] of cases) {
        const r = await box.install(["--version", version, "--prefix", box.prefix], server.env);
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
        MUXBRIDGE_RELEASE_URL: "https://127.0.0.1:9/releases",
        PATH: `${fake}:${Deno.env.get("PATH")}`,
      });
      assertRefused(r, pattern, box);
    }
    assert.deepEqual(box.listPrefix(), []);
  } finally {
    await box.close();
  }
});

Deno.test({
  name:
    "install.sh works with wget and shasum alone, and refuses without a downloader, a hasher or xz",
  ...requires("the installer against a local release", [
    ...HOST,
    tool("wget", "apt-get install -y wget"),
    tool("shasum", "apt-get install -y perl"),
  ]),
  async fn() {
    // By name: clients keep no HSTS for an IP address.
    const server = await serve({
      releases: { latest: await goodRelease("9.9.9") },
      name: "localhost",
    });
    const box = await sandbox();
    try {
      const env = (path: string) => ({ ...server.env, PATH: path });
      const alt = await pathWith(box, [...BASE_TOOLS, "wget", "shasum", "perl"]);
      const ok = await box.install(["--prefix", box.prefix], env(alt));
      assert.equal(ok.code, 0, ok.stderr);
      assert.deepEqual(box.listPrefix(), ["muxbridge"]);
      // Nothing but the binary: wget keeps no HSTS database in HOME (--no-hsts).
      assert.deepEqual([...Deno.readDirSync(`${box.dir}/home`)], []);
      await Deno.remove(box.prefix, { recursive: true });
      await Deno.remove(alt, { recursive: true });

      const without = async (names: string[], missing: string, pattern: RegExp) => {
        const path = await pathWith(box, names.filter((n) => n !== missing));
        assertRefused(await box.install(["--prefix", box.prefix], env(path)), pattern, box);
        await Deno.remove(path, { recursive: true });
      };
      await without([...BASE_TOOLS, "sha256sum"], "", /needs curl or wget/);
      await without([...BASE_TOOLS, "curl"], "", /needs sha256sum or shasum/);
      await without([...BASE_TOOLS, "curl", "sha256sum"], "tar", /needs tar to unpack/);
      await without(
        [...BASE_TOOLS, "curl", "sha256sum"],
        "xz",
        /cannot unpack .*xz.*: GNU tar needs xz \(package xz-utils\); nothing installed/,
      );
      assert.deepEqual(box.listPrefix(), []);
    } finally {
      await box.close();
      await server.close();
    }
  },
});

Deno.test("install.sh rejects unknown arguments and odd versions with one line and exit 1", async () => {
  const box = await sandbox();
  try {
    const r = await box.install(["--frobnicate"]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /^muxbridge install: unknown argument "--frobnicate"/);
    for (const version of ["", "1.0/../../x", "1 0"]) {
      assertRefused(await box.install(["--version", version]), /is not a version/, box);
    }
    const help = await box.install(["--help"]);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /^Usage: install\.sh/);
    assert.match(help.stdout, /To uninstall: muxbridge uninstall .*, then rm DIR\/muxbridge/);
  } finally {
    await box.close();
  }
});

Deno.test("install.sh says plainly where to install from when it knows no repository", async () => {
  const box = await sandbox();
  try {
    assertRefused(
      await box.install(["--prefix", box.prefix]),
      /which GitHub repository to install from is unknown \(this copy of install\.sh does not come from a release\): set MUXBRIDGE_REPO=owner\/name/,
      box,
    );
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
