/**
 * The `muxbridge` command of the npm package (`npm/muxbridge/bin/`), run by the real node in
 * package layouts as npm leaves them, with a stand-in for the platform package's binary: the
 * same argv, stdio and exit code; SIGTERM, SIGINT and SIGHUP passed on; a binary ended by a
 * signal ends the launcher by the same signal; a missing platform package is a message naming
 * it, and exit code 3.
 */

import assert from "node:assert/strict";
import { cpSync } from "node:fs";
import {
  EXIT_ENVIRONMENT,
  missingMessage,
  platformPackage,
  PLATFORMS,
} from "../npm/muxbridge/bin/launcher.js";
import { TARGETS } from "../scripts/build_release.ts";
import { createRealClock, waitFor } from "../lib/sys/clock.ts";
import { requires, tool, which } from "./helpers/requires.ts";
import { runTag } from "./helpers/run_tag.ts";

const clock = createRealClock();
const SOURCE = new URL("../npm/muxbridge/", import.meta.url).pathname;
const NODE = [tool("node", "install Node.js 20 or later")];
const here = platformPackage(
  Deno.build.os === "windows" ? "win32" : Deno.build.os,
  Deno.build.arch === "x86_64" ? "x64" : "arm64",
);

Deno.test("platformPackage() names muxbridge-<os>-<arch> as the release targets do, win32 as windows", () => {
  assert.deepEqual(PLATFORMS, TARGETS.map((t) => t.name));
  assert.deepEqual(platformPackage("linux", "x64"), {
    name: "muxbridge-linux-x64",
    binary: "bin/muxbridge",
    supported: true,
  });
  assert.deepEqual(platformPackage("win32", "x64"), {
    name: "muxbridge-windows-x64",
    binary: "bin/muxbridge.exe",
    supported: true,
  });
  assert.equal(platformPackage("darwin", "arm64").name, "muxbridge-darwin-arm64");
  assert.equal(platformPackage("freebsd", "x64").supported, false);
  assert.equal(platformPackage("linux", "ia32").supported, false);
});

Deno.test("missingMessage() names the package, why npm skips it, and the command that installs it", () => {
  const text = missingMessage(platformPackage("linux", "arm64"), "1.2.3", {
    platform: "linux",
    arch: "arm64",
    musl: false,
  });
  assert.match(text, /"muxbridge-linux-arm64"/);
  assert.match(text, /--omit=optional/);
  assert.match(text, /npm install -g muxbridge@1\.2\.3 --include=optional/);
  assert.match(text, /npm install muxbridge-linux-arm64@1\.2\.3/);
  const musl = missingMessage(platformPackage("linux", "x64"), "1.2.3", {
    platform: "linux",
    arch: "x64",
    musl: true,
  });
  assert.match(
    musl,
    /no muxbridge 1\.2\.3 binary is published for this machine \(linux x64 \(musl\)\)/,
  );
  assert.match(musl, /glibc/);
  const other = missingMessage(platformPackage("freebsd", "x64"), "1.2.3", {
    platform: "freebsd",
    arch: "x64",
    musl: false,
  });
  assert.match(other, /linux-x64, linux-arm64, darwin-x64, darwin-arm64, windows-x64/);
});

/** The stand-in binary: records its argv and signals, then does what its first argument says. */
const STAND_IN = `#!/bin/sh
log="$(dirname "$0")/calls.log"
printf '%s\\n' "$#" "$@" > "$log"
for sig in TERM INT HUP; do trap "echo got-$sig >> '$log'; exit 42" $sig; done
case "$1" in
  exit) echo "to stdout"; echo "to stderr" >&2; exit "$2" ;;
  wait) echo ready >> "$log"; while :; do sleep 0.05; done ;;
  die) trap - TERM; echo ready >> "$log"; kill -TERM $$; sleep 5 ;;
esac
`;

/**
 * A global install's layout: `<root>/lib/node_modules/muxbridge` and, nested in it or beside
 * it, this machine's platform package with the stand-in; or none.
 */
async function layout(platform: "nested" | "hoisted" | "none") {
  const root = await Deno.makeTempDir({ prefix: "muxbridge-launcher-" });
  const pkg = `${root}/lib/node_modules/muxbridge`;
  cpSync(`${SOURCE}bin`, `${pkg}/bin`, { recursive: true });
  await Deno.writeTextFile(
    `${pkg}/package.json`,
    JSON.stringify({ name: "muxbridge", version: "9.8.7", type: "module" }),
  );
  const dir = platform === "nested"
    ? `${pkg}/node_modules/${here.name}`
    : `${root}/lib/node_modules/${here.name}`;
  if (platform !== "none") {
    await Deno.mkdir(`${dir}/bin`, { recursive: true });
    await Deno.writeTextFile(`${dir}/package.json`, JSON.stringify({ name: here.name }));
    await Deno.writeTextFile(`${dir}/${here.binary}`, STAND_IN, { mode: 0o755 });
  }
  return { root, command: `${pkg}/bin/muxbridge.js`, log: `${dir}/bin/calls.log` };
}

function launch(command: string, args: string[]): Deno.ChildProcess {
  return new Deno.Command(which("node")!, {
    args: [command, ...args],
    env: runTag(),
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
}

const read = (path: string) => {
  try {
    return Deno.readTextFileSync(path);
  } catch {
    return "";
  }
};

Deno.test({
  name:
    "the launcher runs the nested platform package's binary with the same argv, output and exit code",
  ...requires("the npm launcher", NODE),
  async fn() {
    const l = await layout("nested");
    try {
      const args = ["exit", "7", "two words", "", "--flag=$HOME", "ü"];
      const out = await launch(l.command, args).output();
      assert.equal(out.code, 7);
      assert.equal(new TextDecoder().decode(out.stdout), "to stdout\n");
      assert.equal(new TextDecoder().decode(out.stderr), "to stderr\n");
      assert.equal(read(l.log), `${args.length}\n${args.join("\n")}\n`);
    } finally {
      await Deno.remove(l.root, { recursive: true });
    }
  },
});

Deno.test({
  name: "the launcher finds a platform package installed beside muxbridge (hoisted)",
  ...requires("the npm launcher", NODE),
  async fn() {
    const l = await layout("hoisted");
    try {
      const out = await launch(l.command, ["exit", "0"]).output();
      assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
    } finally {
      await Deno.remove(l.root, { recursive: true });
    }
  },
});

for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"] as const) {
  Deno.test({
    name: `the launcher passes ${signal} on to the binary and exits with its exit code`,
    ...requires("the npm launcher", NODE),
    async fn() {
      const l = await layout("nested");
      const child = launch(l.command, ["wait"]);
      try {
        await waitFor(clock, () => read(l.log).includes("ready"), {
          deadline: clock.now() + 60_000,
          maxIntervalMs: 50,
        });
        assert.match(read(l.log), /ready/, "the binary started");
        child.kill(signal);
        const status = await child.status;
        assert.equal(status.code, 42, "the stand-in's exit code after its trap");
        assert.match(read(l.log), new RegExp(`got-${signal.slice(3)}`));
      } finally {
        try {
          child.kill("SIGKILL");
        } catch { /* ended */ }
        await child.output().catch(() => {});
        await Deno.remove(l.root, { recursive: true });
      }
    },
  });
}

Deno.test({
  name: "a binary ended by a signal ends the launcher by the same signal",
  ...requires("the npm launcher", NODE),
  async fn() {
    const l = await layout("nested");
    try {
      const status = await launch(l.command, ["die"]).output();
      assert.equal(status.signal, "SIGTERM");
      assert.equal(status.success, false);
    } finally {
      await Deno.remove(l.root, { recursive: true });
    }
  },
});

Deno.test({
  name: "without its platform package the launcher names it and exits 3",
  ...requires("the npm launcher", NODE),
  async fn() {
    const l = await layout("none");
    try {
      const out = await launch(l.command, ["--version"]).output();
      assert.equal(out.code, EXIT_ENVIRONMENT);
      assert.equal(out.stdout.length, 0);
      const err = new TextDecoder().decode(out.stderr);
      assert.match(err, new RegExp(`"${here.name}"`));
      assert.match(err, /npm install -g muxbridge@9\.8\.7 --include=optional/);
    } finally {
      await Deno.remove(l.root, { recursive: true });
    }
  },
});
