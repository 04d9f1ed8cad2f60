/**
 * `scripts/install.sh`'s supply-chain checks (issue 17, item 7), each a finding of the review:
 * a plain-http release URL is refused unless `MUXBRIDGE_INSTALL_ALLOW_HTTP=1` (set only by these
 * local tests), and the build provenance is verified with `gh attestation verify` when the
 * GitHub CLI is there (a fake `gh` records its argv here), said to be unverified when it is not.
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
} from "./helpers/install_sandbox.ts";
import { requirement, requires } from "./helpers/requires.ts";

const HOST = [
  requirement("a release target for this machine", host !== null, "Linux or macOS, x64 or arm64"),
];

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
  name: "install.sh refuses a plain-http release URL unless the local-test switch is set",
  ...requires("the installer against a local release", HOST),
  async fn() {
    const server = await serve({ latest: goodRelease("9.9.9") });
    const box = await sandbox();
    try {
      for (const allow of ["", "0", "yes"]) {
        const r = await box.install(["--prefix", box.prefix], {
          MUXBRIDGE_RELEASE_URL: server.url,
          MUXBRIDGE_INSTALL_ALLOW_HTTP: allow,
        });
        assertRefused(r, /refusing the plain-http URL .*use https/, box);
      }
      const ftp = await box.install(["--prefix", box.prefix], {
        MUXBRIDGE_RELEASE_URL: "ftp://127.0.0.1/releases",
      });
      assertRefused(ftp, /unsupported release URL/, box);
      assert.deepEqual(server.requests, [], "nothing was downloaded");
      assert.deepEqual(box.listPrefix(), []);
    } finally {
      await box.close();
      await server.close();
    }
  },
});

Deno.test({
  name: "install.sh says the build provenance was not verified without gh, or without a repository",
  ...requires("the installer against a local release", HOST),
  async fn() {
    const server = await serve({ latest: goodRelease("9.9.9") });
    const box = await sandbox();
    try {
      const noGh = await pathWith(box, [...BASE_TOOLS, "curl", "sha256sum"]);
      const r = await box.install(["--prefix", box.prefix], {
        MUXBRIDGE_RELEASE_URL: server.url,
        PATH: noGh,
      });
      assert.equal(r.code, 0, r.stderr);
      assert.match(
        r.stdout,
        /build provenance not verified: the GitHub CLI \(gh\) is not installed/,
      );
      const gh = await fakeGh(box, 0);
      const noRepo = await box.install(["--prefix", box.prefix], {
        MUXBRIDGE_RELEASE_URL: server.url,
        PATH: gh.path,
      });
      assert.equal(noRepo.code, 0, noRepo.stderr);
      assert.match(noRepo.stdout, /not verified: the repository is unknown/);
      const strict = await box.install(["--prefix", `${box.dir}/strict`], {
        MUXBRIDGE_RELEASE_URL: server.url,
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
    const server = await serve({ latest: goodRelease("9.9.9") });
    const box = await sandbox();
    try {
      const env = (path: string) => ({
        MUXBRIDGE_RELEASE_URL: server.url,
        MUXBRIDGE_REPO: "acme/muxbridge",
        PATH: path,
      });
      const ok = await fakeGh(box, 0);
      const r = await box.install(["--prefix", box.prefix], env(ok.path));
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /build provenance verified: built by acme\/muxbridge/);
      const argv = Deno.readTextFileSync(ok.argv).trimEnd().split("\n");
      assert.deepEqual(argv.slice(0, 2), ["attestation", "verify"]);
      assert.match(argv[2], new RegExp(`/${ASSET}$`));
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
