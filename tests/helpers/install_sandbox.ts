/**
 * A sandbox for `scripts/install.sh`: an HTTPS server on 127.0.0.1 (a certificate made for the
 * run by `openssl`, trusted by the installer's downloaders through their own environment:
 * `CURL_CA_BUNDLE` for curl, a `WGETRC` naming it for wget) that serves fake releases in
 * GitHub's layout (`/latest/download/<file>`, `/download/v<version>/<file>`) and redirects
 * where a test asks; a plain-http server that must never be reached; releases whose archives
 * are packed by `scripts/build_release.ts`'s own tar and xz argv; a temporary HOME, TMPDIR and
 * prefix; and assertions on refusals. The installer itself has no switch for tests: it talks
 * https only, here as anywhere.
 *
 * @module
 */

import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { createRunner } from "../../lib/sys/exec.ts";
import {
  archiveName,
  hostTarget,
  sha256sums,
  tarArgv,
  xzArgv,
} from "../../scripts/build_release.ts";

const root = new URL("../../", import.meta.url).pathname;
export const INSTALLER = `${root}scripts/install.sh`;
export const enc = new TextEncoder();
export const host = hostTarget();
/** This machine's release archive, as the installer picks it. */
export const ASSET = host ? archiveName(host) : "muxbridge-unsupported.tar.xz";

export const run = createRunner();

/** A fake muxbridge: prints its version, as the installer's smoke run expects. */
export function fakeBinary(version: string): Uint8Array {
  return enc.encode(`#!/bin/sh\necho "muxbridge ${version}"\n`);
}

/**
 * A `.tar.xz` holding one file, packed as the release packs it.
 *
 * @param member The file's name in the archive.
 * @param bytes Its content.
 * @returns The archive's bytes.
 */
export async function packArchive(member: string, bytes: Uint8Array): Promise<Uint8Array> {
  const dir = await Deno.makeTempDir({ prefix: "muxbridge-pack-" });
  try {
    await Deno.mkdir(`${dir}/in`);
    await Deno.writeFile(`${dir}/in/${member}`, bytes, { mode: 0o755 });
    for (const argv of [tarArgv(`${dir}/in`, member, `${dir}/a.tar`, 0), xzArgv(`${dir}/a.tar`)]) {
      const r = await run(argv, { timeoutMs: 60_000 });
      assert.equal(r.code, 0, `${argv.join(" ")}: ${r.stderr}`);
    }
    return await Deno.readFile(`${dir}/a.tar.xz`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** Files of one fake release, by name. */
export type Release = Map<string, Uint8Array>;

/**
 * A release with this machine's archive (a fake muxbridge printing `version`), another
 * platform's, and SHA256SUMS listing both.
 *
 * @param version The version the fake binary prints.
 * @returns The release's files.
 */
export async function goodRelease(version: string): Promise<Release> {
  const files: Release = new Map([[ASSET, await packArchive("muxbridge", fakeBinary(version))]]);
  // Another platform's archive too, so the installer has to pick the right line.
  files.set("muxbridge-linux-riscv64-not-built.tar.xz", enc.encode("other"));
  files.set("SHA256SUMS", enc.encode(sha256sums(files)));
  return files;
}

/** A certificate for 127.0.0.1 and its key, made for one server. */
async function certificate(dir: string): Promise<{ cert: string; key: string; file: string }> {
  const r = await run([
    "openssl",
    "req",
    "-x509",
    "-newkey",
    "ec",
    "-pkeyopt",
    "ec_paramgen_curve:prime256v1",
    "-nodes",
    "-days",
    "2",
    "-subj",
    "/CN=127.0.0.1",
    "-addext",
    "subjectAltName=IP:127.0.0.1,DNS:localhost",
    "-keyout",
    `${dir}/key.pem`,
    "-out",
    `${dir}/cert.pem`,
  ], { timeoutMs: 60_000 });
  assert.equal(r.code, 0, r.stderr);
  return {
    cert: await Deno.readTextFile(`${dir}/cert.pem`),
    key: await Deno.readTextFile(`${dir}/key.pem`),
    file: `${dir}/cert.pem`,
  };
}

/** A loopback server of fake releases. */
export interface Server {
  /** The releases base URL (`https://127.0.0.1:<port>/releases`). */
  url: string;
  /** The origin (`https://127.0.0.1:<port>`). */
  origin: string;
  /**
   * The environment that points the installer at this server and makes its downloaders trust
   * its certificate: `MUXBRIDGE_RELEASE_URL`, `CURL_CA_BUNDLE`, `WGETRC`.
   */
  env: Record<string, string>;
  /** The server's certificate (PEM), for a bundle that trusts two servers. */
  cert?: string;
  /** The paths requested, in order. */
  requests: string[];
  close(): Promise<void>;
}

/** What {@linkcode serve} serves. */
export interface Serving {
  /** Releases by `latest` or `v1.2.3`, served under `/releases/…`. */
  releases?: Record<string, Release>;
  /** Path → the `Location` a 302 answers with (absolute or relative). */
  redirects?: Record<string, string>;
  /** Plain http instead of https: a server the installer must never reach. */
  plain?: boolean;
  /**
   * The host name its URLs use. @default "127.0.0.1" (`localhost` for what clients do only
   * with names, such as HSTS)
   */
  name?: "127.0.0.1" | "localhost";
}

/**
 * Serves fake releases on 127.0.0.1, over https unless `plain`.
 *
 * @param serving What to serve.
 * @returns The running server.
 */
export async function serve(serving: Serving): Promise<Server> {
  const dir = await Deno.makeTempDir({ prefix: "muxbridge-release-server-" });
  const tls = serving.plain ? undefined : await certificate(dir);
  const requests: string[] = [];
  const wgetrc = `${dir}/wgetrc`;
  if (tls) await Deno.writeTextFile(wgetrc, `ca_certificate = ${tls.file}\n`);
  return await new Promise((resolve) => {
    const server = Deno.serve({
      hostname: "127.0.0.1",
      port: 0,
      ...(tls ? { cert: tls.cert, key: tls.key } : {}),
      onListen: ({ port }) => {
        const origin = `${tls ? "https" : "http"}://${serving.name ?? "127.0.0.1"}:${port}`;
        resolve({
          url: `${origin}/releases`,
          origin,
          env: {
            MUXBRIDGE_RELEASE_URL: `${origin}/releases`,
            ...(tls ? { CURL_CA_BUNDLE: tls.file, WGETRC: wgetrc } : {}),
          },
          ...(tls ? { cert: tls.cert } : {}),
          requests,
          close: async () => {
            await server.shutdown();
            await Deno.remove(dir, { recursive: true });
          },
        });
      },
    }, (req) => {
      const path = new URL(req.url).pathname;
      requests.push(path);
      // As GitHub does: HSTS on every https answer (wget would remember it in HOME).
      const hsts: Record<string, string> = tls
        ? { "strict-transport-security": "max-age=31536000" }
        : {};
      const to = serving.redirects?.[path];
      if (to !== undefined) {
        return new Response("moved", { status: 302, headers: { location: to, ...hsts } });
      }
      const m = path.match(/^\/releases\/(?:(latest)\/download|download\/(v[^/]+))\/([^/]+)$/);
      const body = m ? serving.releases?.[m[1] ?? m[2]]?.get(m[3]) : undefined;
      return body
        ? new Response(body.slice(), {
          headers: { "content-type": "application/octet-stream", ...hsts },
        })
        : new Response("Not Found", { status: 404, headers: hsts });
    });
  });
}

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

export interface Sandbox {
  dir: string;
  prefix: string;
  /** Runs the installer with an isolated HOME and TMPDIR. */
  install(args: string[], env?: Record<string, string>): Promise<Run>;
  /** Names in the prefix directory (missing directory: empty). */
  listPrefix(): string[];
  close(): Promise<void>;
}

export async function sandbox(): Promise<Sandbox> {
  const dir = await Deno.makeTempDir({ prefix: "muxbridge-install-" });
  const prefix = `${dir}/bin`;
  await Deno.mkdir(`${dir}/home`);
  await Deno.mkdir(`${dir}/tmp`);
  return {
    dir,
    prefix,
    install: (args, env = {}) =>
      // The exec seam adds to the inherited environment; the installer reads only the names set
      // here (HOME, TMPDIR, PATH, MUXBRIDGE_*, and its downloaders their CA settings), so the
      // real HOME is never written.
      run(["sh", INSTALLER, ...args], {
        timeoutMs: 60_000,
        env: {
          HOME: `${dir}/home`,
          TMPDIR: `${dir}/tmp`,
          MUXBRIDGE_VERSION: "",
          MUXBRIDGE_PREFIX: "",
          MUXBRIDGE_REPO: "",
          MUXBRIDGE_RELEASE_URL: "",
          MUXBRIDGE_REQUIRE_ATTESTATION: "",
          ...env,
        },
      }),
    listPrefix: () => existsSync(prefix) ? [...Deno.readDirSync(prefix)].map((e) => e.name) : [],
    close: () => Deno.remove(dir, { recursive: true }),
  };
}

/** Asserts a refusal: non-zero, one stderr line from the installer, nothing left in TMPDIR. */
export function assertRefused(r: Run, pattern: RegExp, box: Sandbox): void {
  assert.notEqual(r.code, 0, `expected a refusal; stdout: ${r.stdout}`);
  const lines = r.stderr.split("\n").filter((l) => l !== "");
  assert.equal(lines.length, 1, `stderr: ${r.stderr}`);
  assert.match(lines[0], /^muxbridge install: /);
  assert.match(lines[0], pattern);
  assert.deepEqual([...Deno.readDirSync(`${box.dir}/tmp`)], [], "temporary files left behind");
}

/** A PATH directory holding only the named programs (symlinks to the real ones). */
export async function pathWith(box: Sandbox, names: string[]): Promise<string> {
  const bin = `${box.dir}/path`;
  await Deno.mkdir(bin, { recursive: true });
  for (const name of names) {
    const found = await run(["sh", "-c", `command -v "$1"`, "sh", name], { timeoutMs: 5000 });
    assert.equal(found.code, 0, `${name} is needed for this test`);
    await Deno.symlink(found.stdout.trim(), `${bin}/${name}`);
  }
  return bin;
}

/** What the installer needs besides a downloader and a hasher. */
export const BASE_TOOLS = [
  "sh",
  "uname",
  "mktemp",
  "rm",
  "mkdir",
  "chmod",
  "cp",
  "mv",
  "awk",
  "cat",
  "sed",
  "tr",
  "tar",
  "xz",
];
