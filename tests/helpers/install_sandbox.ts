/**
 * A sandbox for `scripts/install.sh`: a local HTTP server on 127.0.0.1 that serves fake release
 * assets in GitHub's layout (`/latest/download/<asset>`, `/download/v<version>/<asset>`), a
 * temporary HOME, TMPDIR and prefix, and assertions on refusals. The server speaks plain http, so
 * every run sets `MUXBRIDGE_INSTALL_ALLOW_HTTP=1`, the installer's switch for local tests.
 *
 * @module
 */

import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { createRunner } from "../../lib/sys/exec.ts";
import { assetName, hostTarget, sha256sums } from "../../scripts/build_release.ts";

const root = new URL("../../", import.meta.url).pathname;
export const INSTALLER = `${root}scripts/install.sh`;
export const enc = new TextEncoder();
export const host = hostTarget();
export const ASSET = host ? assetName(host) : "muxbridge-unsupported";

/** A fake muxbridge: prints its version, as the installer's smoke run expects. */
export function fakeBinary(version: string): Uint8Array {
  return enc.encode(`#!/bin/sh\necho "muxbridge ${version}"\n`);
}

/** Files of one fake release, by name. */
export type Release = Map<string, Uint8Array>;

export function goodRelease(version: string): Release {
  const files: Release = new Map([[ASSET, fakeBinary(version)]]);
  // Another platform's asset too, so the installer has to pick the right line.
  files.set("muxbridge-linux-riscv64-not-built", enc.encode("other"));
  files.set("SHA256SUMS", enc.encode(sha256sums(files)));
  return files;
}

export interface Server {
  url: string;
  requests: string[];
  close(): Promise<void>;
}

/** Serves `releases` ("latest" and "v1.2.3" keys) under `/releases/…` on 127.0.0.1. */
export function serve(releases: Record<string, Release>): Promise<Server> {
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

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

export interface Sandbox {
  dir: string;
  prefix: string;
  /** Runs the installer with an isolated environment. */
  install(args: string[], env?: Record<string, string>): Promise<Run>;
  /** Names in the prefix directory (missing directory: empty). */
  listPrefix(): string[];
  close(): Promise<void>;
}

export const run = createRunner();

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
      // here (HOME, TMPDIR, PATH, MUXBRIDGE_*), so the real HOME is never written.
      run(["sh", INSTALLER, ...args], {
        timeoutMs: 60_000,
        env: {
          HOME: `${dir}/home`,
          TMPDIR: `${dir}/tmp`,
          MUXBRIDGE_VERSION: "",
          MUXBRIDGE_PREFIX: "",
          MUXBRIDGE_REPO: "",
          MUXBRIDGE_REQUIRE_ATTESTATION: "",
          // The local test server speaks plain http; a real install never does.
          MUXBRIDGE_INSTALL_ALLOW_HTTP: "1",
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
];
