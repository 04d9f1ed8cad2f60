/**
 * `scripts/install.sh`'s supply-chain checks (issue 17, item 7; issue 23, point 7): https only,
 * every hop of every redirect included, with curl and with wget alike (wget's `--https-only`
 * only governs recursive downloads, so the installer follows wget's redirects itself and only
 * to https); and the build provenance, verified with `gh attestation verify` when the GitHub CLI
 * is there (a fake `gh` records its argv here), said to be unverified when it is not.
 *
 * The servers are real HTTPS servers on 127.0.0.1 with a certificate made for the run; a
 * plain-http server serving a good release stands behind every refused redirect and must
 * receive no request.
 */

import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import {
  assertRefused,
  ASSET,
  BASE_TOOLS,
  goodRelease,
  host,
  pathWith,
  type Sandbox,
  sandbox,
  serve,
  type Server,
} from "./helpers/install_sandbox.ts";
import { requirement, requires, tool } from "./helpers/requires.ts";

const HOST = [
  requirement("a release target for this machine", host !== null, "Linux or macOS, x64 or arm64"),
  tool("openssl", "apt-get install -y openssl"),
  tool("xz", "apt-get install -y xz-utils"),
];
const BOTH = [
  ...HOST,
  tool("curl", "apt-get install -y curl"),
  tool("wget", "apt-get install -y wget"),
];

/** The installer's PATH with one downloader: curl or wget, never both. */
async function downloaders(box: Sandbox): Promise<Array<{ name: string; path: string }>> {
  const out = [];
  for (const name of ["curl", "wget"]) {
    const own = `${box.dir}/path-${name}`;
    await Deno.rename(await pathWith(box, [...BASE_TOOLS, "sha256sum", name]), own);
    out.push({ name, path: own });
  }
  return out;
}

/** A PATH directory with a fake `gh` that records its argv and exits with `code`. */
async function fakeGh(
  box: Sandbox,
  code: number,
  say = "",
): Promise<{ path: string; argv: string }> {
  const bin = `${box.dir}/gh-bin`;
  const argv = `${box.dir}/gh-argv`;
  await Deno.mkdir(bin, { recursive: true });
  await Deno.writeTextFile(
    `${bin}/gh`,
    `#!/bin/sh\nprintf '%s\\n' "$@" > '${argv}'\n${say ? `echo '${say}' >&2\n` : ""}exit ${code}\n`,
    { mode: 0o755 },
  );
  return { path: `${bin}:${Deno.env.get("PATH")}`, argv };
}

Deno.test({
  name: "install.sh refuses a release URL that is not https, and downloads nothing",
  ...requires("the installer against a local release", HOST),
  async fn() {
    const plain = await serve({ releases: { latest: await goodRelease("9.9.9") }, plain: true });
    const box = await sandbox();
    try {
      for (
        const url of [
          plain.url,
          "ftp://127.0.0.1/releases",
          "file:///tmp/releases",
          "127.0.0.1/r",
          "https://",
        ]
      ) {
        const r = await box.install(["--prefix", box.prefix], { MUXBRIDGE_RELEASE_URL: url });
        assertRefused(r, /refusing the release URL .*: only https:\/\/ is allowed/, box);
      }
      assert.deepEqual(plain.requests, [], "nothing was downloaded");
      assert.deepEqual(box.listPrefix(), []);
    } finally {
      await box.close();
      await plain.close();
    }
  },
});

Deno.test({
  name:
    "install.sh refuses a redirect to plain http, with curl and with wget, for the archive and for SHA256SUMS",
  ...requires("the installer with curl and with wget", BOTH),
  async fn() {
    const release = await goodRelease("9.9.9");
    // Behind every redirect: a good release over plain http, which must never be asked.
    const plain = await serve({ releases: { latest: release }, plain: true });
    const latest = (file: string) => `/releases/latest/download/${file}`;
    const servers: Server[] = [
      await serve({
        releases: { latest: release },
        redirects: { [latest(ASSET)]: `${plain.origin}${latest(ASSET)}` },
      }),
      await serve({
        releases: { latest: release },
        redirects: { [latest("SHA256SUMS")]: `${plain.origin}${latest("SHA256SUMS")}` },
      }),
      // A second hop: https, then http.
      await serve({
        releases: { latest: release },
        redirects: { [latest(ASSET)]: "/hop", "/hop": `${plain.origin}${latest(ASSET)}` },
      }),
    ];
    const box = await sandbox();
    try {
      for (const { name, path } of await downloaders(box)) {
        for (const server of servers) {
          const r = await box.install(["--prefix", box.prefix], { ...server.env, PATH: path });
          assertRefused(
            r,
            /cannot download https:\/\/127\.0\.0\.1:\d+\/.* \(refused a redirect to plain http/,
            box,
          );
          assert.deepEqual(box.listPrefix(), [], name);
        }
      }
      assert.deepEqual(plain.requests, [], "the plain-http server was never reached");
    } finally {
      await box.close();
      await plain.close();
      for (const s of servers) await s.close();
    }
  },
});

Deno.test({
  name:
    "install.sh follows https redirects (relative, and to another https host) with curl and with wget",
  ...requires("the installer with curl and with wget", BOTH),
  async fn() {
    const release = await goodRelease("9.9.9");
    // As GitHub does: latest → the version's URL → a file host.
    const files = await serve({ releases: { "v9.9.9": release } });
    const github = await serve({
      redirects: {
        [`/releases/latest/download/${ASSET}`]: `/releases/download/v9.9.9/${ASSET}`,
        [`/releases/download/v9.9.9/${ASSET}`]: `${files.url}/download/v9.9.9/${ASSET}`,
        "/releases/latest/download/SHA256SUMS": `${files.url}/download/v9.9.9/SHA256SUMS`,
      },
    });
    const box = await sandbox();
    try {
      // One bundle that trusts both servers' certificates.
      const bundle = `${box.dir}/bundle.pem`;
      await Deno.writeTextFile(bundle, `${github.cert}${files.cert}`);
      await Deno.writeTextFile(`${box.dir}/wgetrc`, `ca_certificate = ${bundle}\n`);
      for (const { name, path } of await downloaders(box)) {
        const r = await box.install(["--prefix", box.prefix], {
          ...github.env,
          CURL_CA_BUNDLE: bundle,
          WGETRC: `${box.dir}/wgetrc`,
          PATH: path,
        });
        assert.equal(r.code, 0, `${name}: ${r.stderr}`);
        assert.match(r.stdout, /^muxbridge 9\.9\.9 installed to /, name);
        await Deno.remove(box.prefix, { recursive: true });
      }
      assert.deepEqual(files.requests, [
        `/releases/download/v9.9.9/${ASSET}`,
        "/releases/download/v9.9.9/SHA256SUMS",
        `/releases/download/v9.9.9/${ASSET}`,
        "/releases/download/v9.9.9/SHA256SUMS",
      ]);
    } finally {
      await box.close();
      await github.close();
      await files.close();
    }
  },
});

Deno.test({
  name: "install.sh gives up on a redirect loop with curl and with wget",
  ...requires("the installer with curl and with wget", BOTH),
  async fn() {
    const loop = await serve({
      redirects: { [`/releases/latest/download/${ASSET}`]: `/releases/latest/download/${ASSET}` },
    });
    const box = await sandbox();
    try {
      for (const { name, path } of await downloaders(box)) {
        const r = await box.install(["--prefix", box.prefix], { ...loop.env, PATH: path });
        assertRefused(
          r,
          /cannot download .*(Maximum \(10\) redirects followed|more than 10 redirects)/,
          box,
        );
        assert.ok(loop.requests.length <= 12, `${name}: ${loop.requests.length} requests`);
        loop.requests.length = 0;
      }
    } finally {
      await box.close();
      await loop.close();
    }
  },
});

Deno.test({
  name:
    "install.sh refuses a wget that is not GNU Wget 1.x (its redirects could not be held to https)",
  ...requires("the installer against a local release", HOST),
  async fn() {
    const box = await sandbox();
    try {
      const path = await pathWith(box, [...BASE_TOOLS, "sha256sum"]);
      for (
        const banner of ["GNU Wget2 2.1.0 - multithreaded metalink/file/website downloader", ""]
      ) {
        await Deno.writeTextFile(`${path}/wget`, `#!/bin/sh\necho '${banner}'\n`, { mode: 0o755 });
        const r = await box.install(["--prefix", box.prefix], {
          MUXBRIDGE_RELEASE_URL: "https://127.0.0.1:9/releases",
          PATH: path,
        });
        assertRefused(
          r,
          /this wget is not GNU Wget 1\.x, and its redirects cannot be held to https: install curl/,
          box,
        );
      }
    } finally {
      await box.close();
    }
  },
});

Deno.test({
  name: "install.sh says the build provenance was not verified without gh, or without a repository",
  ...requires("the installer against a local release", HOST),
  async fn() {
    const server = await serve({ releases: { latest: await goodRelease("9.9.9") } });
    const box = await sandbox();
    try {
      const noGh = await pathWith(box, [...BASE_TOOLS, "curl", "sha256sum"]);
      const r = await box.install(["--prefix", box.prefix], { ...server.env, PATH: noGh });
      assert.equal(r.code, 0, r.stderr);
      assert.match(
        r.stdout,
        /build provenance not verified: the GitHub CLI \(gh\) is not installed/,
      );
      const gh = await fakeGh(box, 0);
      const noRepo = await box.install(["--prefix", box.prefix], { ...server.env, PATH: gh.path });
      assert.equal(noRepo.code, 0, noRepo.stderr);
      assert.match(noRepo.stdout, /not verified: the repository is unknown/);
      const strict = await box.install(["--prefix", `${box.dir}/strict`], {
        ...server.env,
        PATH: noGh,
        MUXBRIDGE_REQUIRE_ATTESTATION: "1",
      });
      assertRefused(strict, /MUXBRIDGE_REQUIRE_ATTESTATION=1; nothing installed/, box);
      assert.ok(!existsSync(`${box.dir}/strict/muxbridge`));
    } finally {
      await box.close();
      await server.close();
    }
  },
});

Deno.test({
  name:
    "install.sh verifies the build provenance with gh attestation verify --repo, and refuses a failure",
  ...requires("the installer against a local release", HOST),
  async fn() {
    const server = await serve({ releases: { latest: await goodRelease("9.9.9") } });
    const box = await sandbox();
    try {
      const env = (path: string) => ({
        ...server.env,
        MUXBRIDGE_REPO: "acme/muxbridge",
        PATH: path,
      });
      const ok = await fakeGh(box, 0);
      const r = await box.install(["--prefix", box.prefix], env(ok.path));
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /build provenance verified: built by acme\/muxbridge/);
      const argv = Deno.readTextFileSync(ok.argv).trimEnd().split("\n");
      assert.deepEqual(argv.slice(0, 2), ["attestation", "verify"]);
      assert.match(argv[2], new RegExp(`/${ASSET.replace(/\./g, "\\.")}$`));
      assert.deepEqual(argv.slice(3), ["--repo", "acme/muxbridge"]);

      const loggedOut = await fakeGh(box, 4, "authentication required");
      const r4 = await box.install(["--prefix", box.prefix], env(loggedOut.path));
      assert.equal(r4.code, 0, r4.stderr);
      assert.match(r4.stdout, /not verified: gh is not logged in/);

      await Deno.remove(box.prefix, { recursive: true });
      const bad = await fakeGh(box, 1, "no attestations found for this artifact");
      const r1 = await box.install(["--prefix", box.prefix], env(bad.path));
      assertRefused(
        r1,
        /build provenance of .* does not verify for acme\/muxbridge \(no attestations found/,
        box,
      );
      assert.deepEqual(box.listPrefix(), []);
    } finally {
      await box.close();
      await server.close();
    }
  },
});
