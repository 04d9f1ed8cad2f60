/**
 * `scripts/install.sh` against a local HTTP server on 127.0.0.1 that serves fake release assets
 * in GitHub's layout (`/latest/download/<asset>`, `/download/v<version>/<asset>`): a good
 * release installs and runs; a corrupt asset, a missing asset, a missing or incomplete
 * SHA256SUMS, an unknown platform and a missing tool are refused with one stderr line, a
 * non-zero exit, and nothing installed (an earlier install left untouched).
 */

import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { createRunner } from "../lib/sys/exec.ts";
import { assetName, hostTarget, sha256sums } from "../scripts/build_release.ts";
import { requirement, requires, tool } from "./helpers/requires.ts";

const root = new URL("../", import.meta.url).pathname;
const INSTALLER = `${root}scripts/install.sh`;
const enc = new TextEncoder();
const host = hostTarget();
const HOST = [
  requirement("a release target for this machine", host !== null, "Linux or macOS, x64 or arm64"),
];
const ASSET = host ? assetName(host) : "muxbridge-unsupported";

/** A fake muxbridge: prints its version, as the installer's smoke run expects. */
function fakeBinary(version: string): Uint8Array {
  return enc.encode(`#!/bin/sh\necho "muxbridge ${version}"\n`);
}

/** Files of one fake release, by name. */
type Release = Map<string, Uint8Array>;

function goodRelease(version: string): Release {
  const files: Release = new Map([[ASSET, fakeBinary(version)]]);
  // Another platform's asset too, so the installer has to pick the right line.
  files.set("muxbridge-linux-riscv64-not-built", enc.encode("other"));
  files.set("SHA256SUMS", enc.encode(sha256sums(files)));
  return files;
}

interface Server {
  url: string;
  requests: string[];
  close(): Promise<void>;
}

/** Serves `releases` ("latest" and "v1.2.3" keys) under `/releases/…` on 127.0.0.1. */
function serve(releases: Record<string, Release>): Promise<Server> {
  const requests: string[] = [];
  return new Promise((resolve) => {
    const server = Deno.serve({
      hostname: "127.0.0.1",
      port: 0,
      onListen: ({ port }) =>
        resolve({
          url: `http://127.0.0.1:${port}/releases`,
          requests,
          close: () => server.shutdown(),
        }),
    }, (req) => {
      const path = new URL(req.url).pathname;
      requests.push(path);
      const m = path.match(/^\/releases\/(?:(latest)\/download|download\/(v[^/]+))\/([^/]+)$/);
      const body = m ? releases[m[1] ?? m[2]]?.get(m[3]) : undefined;
      return body
        ? new Response(body.slice(), { headers: { "content-type": "application/octet-stream" } })
        : new Response("Not Found", { status: 404 });
    });
  });
}

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

interface Sandbox {
  dir: string;
  prefix: string;
  /** Runs the installer with an isolated environment. */
  install(args: string[], env?: Record<string, string>): Promise<Run>;
  /** Names in the prefix directory (missing directory: empty). */
  listPrefix(): string[];
  close(): Promise<void>;
}

const run = createRunner();

async function sandbox(): Promise<Sandbox> {
  const dir = await Deno.makeTempDir({ prefix: "muxbridge-install-" });
  const prefix = `${dir}/bin`;
  await Deno.mkdir(`${dir}/home`);
  await Deno.mkdir(`${dir}/tmp`);
  return {
    dir,
    prefix,
    install: (args, env = {}) =>
      // The exec seam adds to the inherited environment; the installer reads only the names set
      // here (HOME, TMPDIR, PATH, MUXBRIDGE_*), so the real HOME is never written.
      run(["sh", INSTALLER, ...args], {
        timeoutMs: 60_000,
        env: {
          HOME: `${dir}/home`,
          TMPDIR: `${dir}/tmp`,
          MUXBRIDGE_VERSION: "",
          MUXBRIDGE_PREFIX: "",
          MUXBRIDGE_REPO: "",
          ...env,
        },
      }),
    listPrefix: () => existsSync(prefix) ? [...Deno.readDirSync(prefix)].map((e) => e.name) : [],
    close: () => Deno.remove(dir, { recursive: true }),
  };
}

/** Asserts a refusal: non-zero, one stderr line from the installer, nothing left in TMPDIR. */
function assertRefused(r: Run, pattern: RegExp, box: Sandbox): void {
  assert.notEqual(r.code, 0, `expected a refusal; stdout: ${r.stdout}`);
  const lines = r.stderr.split("\n").filter((l) => l !== "");
  assert.equal(lines.length, 1, `stderr: ${r.stderr}`);
  assert.match(lines[0], /^muxbridge install: /);
  assert.match(lines[0], pattern);
  assert.deepEqual([...Deno.readDirSync(`${box.dir}/tmp`)], [], "temporary files left behind");
}

/** A PATH directory holding only the named programs (symlinks to the real ones). */
async function pathWith(box: Sandbox, names: string[]): Promise<string> {
  const bin = `${box.dir}/path`;
  await Deno.mkdir(bin, { recursive: true });
  for (const name of names) {
    const found = await run(["sh", "-c", `command -v "$1"`, "sh", name], { timeoutMs: 5000 });
    assert.equal(found.code, 0, `${name} is needed for this test`);
    await Deno.symlink(found.stdout.trim(), `${bin}/${name}`);
  }
  return bin;
}

const BASE_TOOLS = ["sh", "uname", "mktemp", "rm", "mkdir", "chmod", "cp", "mv", "awk", "cat"];

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
