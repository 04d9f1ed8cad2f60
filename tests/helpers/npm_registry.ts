/**
 * A real npm registry on loopback for tests: verdaccio (pinned in `tools/verdaccio/`, which
 * `scripts/setup.sh` installs), with its storage in a temporary directory. Packages named
 * `muxbridge*` can only be published to it, never fetched from elsewhere (so a test installs
 * exactly what it published); every other name is proxied to the public registry.
 *
 * Every npm command of a test runs with {@linkcode NpmRegistry.npmEnv}: a cleared environment
 * with its own HOME, npm cache and user config (the registry and a throw-away token), so the
 * user's npm configuration is neither read nor written.
 *
 * `close()` stops verdaccio (SIGTERM, a bounded wait, SIGKILL) and removes the directory.
 *
 * @module
 */

import { dirname } from "node:path";
import { createRealClock, waitFor } from "../../lib/sys/clock.ts";
import { createProcesses } from "../../lib/sys/processes.ts";
import { stopProcess } from "./opencode_home.ts";
import { which } from "./requires.ts";
import { runTag } from "./run_tag.ts";

const clock = createRealClock();
const processes = createProcesses();
const ROOT = new URL("../../", import.meta.url).pathname;

/** Where scripts/setup.sh installs verdaccio (its own prefix). */
export const VERDACCIO_PREFIX = `${ROOT}tools/verdaccio`;

/** The verdaccio command, or null when it is not installed. */
export function verdaccioBin(): string | null {
  const bin = `${VERDACCIO_PREFIX}/node_modules/verdaccio/bin/verdaccio`;
  try {
    return Deno.statSync(bin).isFile ? bin : null;
  } catch {
    return null;
  }
}

/** What one command printed and how it ended. */
export interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

/** A running registry. */
export interface NpmRegistry {
  /** `http://127.0.0.1:<port>/`. */
  url: string;
  /** The temporary directory (storage, homes, caches). */
  base: string;
  /**
   * The environment of an npm process of the test: PATH with node and npm, HOME, an npm cache
   * and a user config of its own pointing at this registry (`NPM_CONFIG_*`), the run's tag.
   *
   * @param home The HOME to use (created when missing).
   */
  npmEnv(home: string): Record<string, string>;
  /** Runs a program with `env` only (cleared environment), bounded; never throws on exit codes. */
  run(argv: string[], env: Record<string, string>, timeoutMs: number, cwd?: string): Promise<Ran>;
  /** Publishes a tarball (`npm publish <tgz>`, no scripts); throws when npm fails. */
  publish(tarball: string): Promise<void>;
  /** What verdaccio printed (the end of it), for failures. */
  output(): string;
  /** Stops verdaccio and removes the directory. */
  close(): Promise<void>;
}

/** A TCP port on 127.0.0.1 that was free a moment ago. */
function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr as Deno.NetAddr;
  listener.close();
  return port;
}

/**
 * verdaccio's config: storage in `storage`, `muxbridge*` publishable without a login and never
 * proxied, everything else from the public registry; a body limit that takes a 100 MB binary.
 *
 * @param storage The storage folder.
 * @returns The YAML text.
 */
export function verdaccioConfig(storage: string): string {
  return [
    `storage: ${JSON.stringify(storage)}`,
    "uplinks:",
    "  npmjs:",
    "    url: https://registry.npmjs.org/",
    "packages:",
    "  'muxbridge*':",
    "    access: $all",
    "    publish: $anonymous",
    "  '**':",
    "    access: $all",
    "    proxy: npmjs",
    // verdaccio's default (10 MB) refuses a platform package: its binary is ~54 MB gzipped.
    "max_body_size: 300mb",
    "log: { type: stdout, format: pretty, level: warn }",
    "",
  ].join("\n");
}

/** Reads a stream into `sink`, keeping its last 64 KiB. */
async function drain(stream: ReadableStream<Uint8Array>, sink: { text: string }) {
  const decoder = new TextDecoder();
  for await (const chunk of stream) {
    sink.text = (sink.text + decoder.decode(chunk, { stream: true })).slice(-65536);
  }
}

/**
 * Starts verdaccio on a free loopback port and waits until it answers `/-/ping`.
 *
 * @returns The registry; always `await close()` (in a `finally`).
 * @throws {Error} When verdaccio or node is missing, or it never answers.
 */
export async function startNpmRegistry(): Promise<NpmRegistry> {
  const bin = verdaccioBin();
  const node = which("node");
  const npm = which("npm");
  if (!bin || !node || !npm) {
    throw new Error("verdaccio, node and npm are needed: run scripts/setup.sh");
  }
  const base = await Deno.makeTempDir({ prefix: "muxbridge-npm-" });
  const config = `${base}/verdaccio.yaml`;
  await Deno.mkdir(`${base}/storage`);
  await Deno.writeTextFile(config, verdaccioConfig(`${base}/storage`));
  const path = [...new Set([dirname(node), dirname(npm), "/usr/bin", "/bin"])].join(":");
  const log = { text: "" };
  let child: Deno.ChildProcess | undefined;
  let url = "";

  const close = async () => {
    if (child) {
      await stopProcess(child.pid, 10_000);
      await child.status.catch(() => {});
    }
    await Deno.remove(base, { recursive: true }).catch(() => {});
  };

  try {
    // A port can be taken between picking and binding it: try a few.
    for (let attempt = 0; attempt < 3 && !url; attempt++) {
      const port = freePort();
      child = new Deno.Command(node, {
        args: [bin, "--config", config, "--listen", `127.0.0.1:${port}`],
        cwd: base,
        clearEnv: true,
        env: { PATH: path, HOME: `${base}/verdaccio-home`, ...runTag() },
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
      }).spawn();
      const c = child;
      drain(c.stdout, log).catch(() => {});
      drain(c.stderr, log).catch(() => {});
      const candidate = `http://127.0.0.1:${port}/`;
      const up = await waitFor(clock, async () => {
        if (!processes.alive(c.pid)) return true;
        const r = await fetch(`${candidate}-/ping`).catch(() => null);
        await r?.body?.cancel();
        return r?.ok === true;
      }, { deadline: clock.now() + 120_000, maxIntervalMs: 250 });
      if (up && processes.alive(c.pid)) url = candidate;
      else {
        await stopProcess(c.pid, 5000);
        await c.status.catch(() => {});
        child = undefined;
      }
    }
    if (!url) throw new Error(`verdaccio did not start:\n${log.text}`);
  } catch (err) {
    await close();
    throw err;
  }

  const npmEnv = (home: string): Record<string, string> => {
    Deno.mkdirSync(home, { recursive: true });
    const npmrc = `${home}/.npmrc`;
    const host = url.replace(/^http:/, "");
    Deno.writeTextFileSync(
      npmrc,
      `registry=${url}\n${host}:_authToken=throw-away-test-token\n`,
    );
    return {
      PATH: path,
      HOME: home,
      NPM_CONFIG_USERCONFIG: npmrc,
      NPM_CONFIG_CACHE: `${home}/.npm`,
      NPM_CONFIG_REGISTRY: url,
      NPM_CONFIG_UPDATE_NOTIFIER: "false",
      NPM_CONFIG_FUND: "false",
      NPM_CONFIG_AUDIT: "false",
      ...runTag(),
    };
  };

  const run = async (
    argv: string[],
    env: Record<string, string>,
    timeoutMs: number,
    cwd?: string,
  ): Promise<Ran> => {
    const proc = new Deno.Command(argv[0], {
      args: argv.slice(1),
      clearEnv: true,
      env,
      cwd: cwd ?? base,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const timer = setTimeout(() => stopProcess(proc.pid, 5000), timeoutMs);
    try {
      const out = await proc.output();
      const decode = (b: Uint8Array) => new TextDecoder().decode(b);
      return { code: out.code, stdout: decode(out.stdout), stderr: decode(out.stderr) };
    } finally {
      clearTimeout(timer);
    }
  };

  const publisherHome = `${base}/publisher`;
  const publish = async (tarball: string) => {
    // A platform package carries a ~110 MB binary: minutes on a busy machine.
    const r = await run(
      [npm, "publish", tarball, "--registry", url, "--ignore-scripts"],
      npmEnv(publisherHome),
      15 * 60_000,
    );
    if (r.code !== 0) throw new Error(`npm publish ${tarball} failed:\n${r.stdout}${r.stderr}`);
  };

  return { url, base, npmEnv, run, publish, output: () => log.text, close };
}
