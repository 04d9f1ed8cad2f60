/**
 * `lib/install/stable_binary.ts`: a binary in a package manager's folder is recorded as its
 * private copy; anything else as it is. Install copies it first and records the copy for both
 * OpenCode lines, keeps it when unchanged; uninstall removes it; the real copy is atomic and
 * private.
 */

import assert from "node:assert/strict";
import { createRealFiles } from "../../lib/install/files.ts";
import {
  applyPlan,
  type InstallDeps,
  planInstall,
  planUninstall,
  readSidecar,
} from "../../lib/install/install.ts";
import { PLUGIN_V1, PLUGIN_V2_FILES } from "../../lib/install/plugin_source.ts";
import { inPackageFolder, stableBinDir, stableCommand } from "../../lib/install/stable_binary.ts";
import { fakeEnv } from "../fakes/fake_env.ts";
import { type MemoryFiles, memoryFiles } from "../fakes/memory_files.ts";
import { isMuxError } from "../../lib/sys/errors.ts";

const envOf = (vars: Record<string, string>) => (name: string) => vars[name];

Deno.test("inPackageFolder() is true for npx's, bunx's, npm -g's and pnpm's folders, false elsewhere", () => {
  for (
    const path of [
      "/home/me/.npm/_npx/0b9c44b67ac7f9a1/node_modules/muxbridge-linux-x64/bin/muxbridge",
      "/home/me/.bun/install/cache/.bunx-0/muxbridge@latest/node_modules/muxbridge-linux-x64/bin/muxbridge",
      "/tmp/bunx-1000-muxbridge@latest/node_modules/muxbridge-linux-x64/bin/muxbridge",
      "/usr/lib/node_modules/muxbridge/node_modules/muxbridge-linux-x64/bin/muxbridge",
      "/p/node_modules/.pnpm/muxbridge-linux-x64@1.0.0/node_modules/muxbridge-linux-x64/bin/muxbridge",
      "C:\\Users\\me\\node_modules\\muxbridge-windows-x64\\bin\\muxbridge.exe",
    ]
  ) assert.equal(inPackageFolder(path), true, path);
  for (
    const path of [
      "/home/me/.local/bin/muxbridge",
      "/opt/node_modules_backup/muxbridge",
      "/home/me/.local/share/muxbridge/bin/muxbridge",
    ]
  ) assert.equal(inPackageFolder(path), false, path);
});

Deno.test("stableBinDir() is $XDG_DATA_HOME/muxbridge/bin, else ~/.local/share/muxbridge/bin", () => {
  assert.equal(stableBinDir(envOf({ XDG_DATA_HOME: "/d", HOME: "/h" })), "/d/muxbridge/bin");
  assert.equal(stableBinDir(envOf({ HOME: "/h" })), "/h/.local/share/muxbridge/bin");
  // A relative XDG_DATA_HOME is invalid by the XDG spec: ignored.
  assert.equal(
    stableBinDir(envOf({ XDG_DATA_HOME: "rel", HOME: "/h" })),
    "/h/.local/share/muxbridge/bin",
  );
  assert.throws(
    () => stableBinDir(envOf({})),
    (err: unknown) => isMuxError(err) && err.code === "invalid_config",
  );
});

Deno.test("stableCommand() copies a packaged binary to the private folder and records the copy", () => {
  const env = envOf({ XDG_DATA_HOME: "/d" });
  const npx = "/h/.npm/_npx/1/node_modules/muxbridge-linux-x64/bin/muxbridge";
  assert.deepEqual(stableCommand([npx], env), {
    command: ["/d/muxbridge/bin/muxbridge"],
    copy: { from: npx, to: "/d/muxbridge/bin/muxbridge" },
  });
  const exe = "C:/u/node_modules/muxbridge-windows-x64/bin/muxbridge.exe";
  assert.deepEqual(stableCommand([exe], env).command, ["/d/muxbridge/bin/muxbridge.exe"]);
});

Deno.test("stableCommand() records any other command as it is (a binary elsewhere, deno run from source)", () => {
  const env = envOf({ HOME: "/h" });
  assert.deepEqual(stableCommand(["/usr/local/bin/muxbridge"], env), {
    command: ["/usr/local/bin/muxbridge"],
  });
  // Deno itself may come from node_modules; the command is the runtime and the source.
  const fromSource = [
    "/r/node_modules/@deno/linux-x64-glibc/deno",
    "run",
    "--allow-all",
    "/r/main.ts",
  ];
  assert.deepEqual(stableCommand(fromSource, env), { command: fromSource });
});

// ---------------------------------------------------------------- install and uninstall

const HOME = "/home/me";
const NPX = `${HOME}/.npm/_npx/0b9c/node_modules/muxbridge-linux-x64/bin/muxbridge`;
const COPY = `${HOME}/.local/share/muxbridge/bin/muxbridge`;

function depsFor(files: MemoryFiles, self: string[]): InstallDeps {
  return {
    files,
    env: fakeEnv({ HOME }),
    self,
    version: "0.1.0",
    carried: { v1: PLUGIN_V1, v2: PLUGIN_V2_FILES },
    lines: ["1.x", "2.x"],
  };
}

Deno.test("install from npx copies the binary first and records the copy for both OpenCode lines; again, it keeps it", () => {
  const files = memoryFiles({ [NPX]: "the binary" });
  const plan = planInstall(depsFor(files, [NPX]));
  assert.deepEqual(plan.steps[0], { kind: "copy", from: NPX, path: COPY, mode: 0o755 });
  assert.deepEqual(plan.changed[0], {
    path: COPY,
    action: "write",
    what: plan.changed[0].what,
  });
  applyPlan(files, plan);
  assert.deepEqual(files.files.get(COPY), { text: "the binary", mode: 0o755 });
  const sidecars = [...files.files.keys()].filter((p) => p.endsWith("/muxbridge.json"));
  assert.equal(sidecars.length, 2, "one per OpenCode line");
  for (const path of sidecars) {
    assert.deepEqual(readSidecar(files.read(path))?.command, [COPY], path);
  }
  for (const path of files.writes) {
    assert.ok(
      !(files.read(path) ?? "").includes("_npx"),
      `${path} names no package manager's folder`,
    );
  }

  const again = planInstall(depsFor(files, [NPX]));
  assert.ok(again.unchanged.some((c) => c.path === COPY && c.action === "keep"));
  assert.ok(!again.steps.some((s) => s.kind === "copy"), "the same bytes are not copied again");
  // A newer binary in the cache replaces the copy.
  files.files.set(NPX, { text: "a newer binary", mode: 0o755 });
  const newer = planInstall(depsFor(files, [NPX]));
  assert.ok(newer.changed.some((c) => c.path === COPY && c.action === "replace"));
});

Deno.test("install from anywhere else copies nothing; uninstall removes the copy and its folders, only when there", () => {
  const files = memoryFiles();
  const plan = planInstall(depsFor(files, ["/usr/local/bin/muxbridge"]));
  assert.ok(!plan.steps.some((s) => s.kind === "copy"));
  assert.ok(!plan.changed.some((c) => c.path.startsWith(`${HOME}/.local/share`)));
  applyPlan(files, plan);
  const none = planUninstall({ files, env: fakeEnv({ HOME }) });
  assert.ok(!none.changed.some((c) => c.path === COPY));

  const npx = memoryFiles({ [NPX]: "the binary" });
  applyPlan(npx, planInstall(depsFor(npx, [NPX])));
  const gone = planUninstall({ files: npx, env: fakeEnv({ HOME }) });
  assert.ok(gone.changed.some((c) => c.path === COPY && c.action === "remove"));
  applyPlan(npx, gone);
  assert.equal(npx.read(COPY), null);
  assert.ok(!npx.dirs.has(`${HOME}/.local/share/muxbridge`), "its folders go when empty");
});

Deno.test("the real copyAtomic() copies the bytes with the mode into folders only this user can enter", async () => {
  const base = await Deno.makeTempDir({ prefix: "muxbridge-copy-" });
  try {
    const from = `${base}/node_modules/pkg/bin/muxbridge`;
    await Deno.mkdir(`${base}/node_modules/pkg/bin`, { recursive: true });
    await Deno.writeFile(from, new Uint8Array([0, 1, 2, 255]));
    const files = createRealFiles();
    const to = `${base}/data/muxbridge/bin/muxbridge`;
    files.copyAtomic(from, to, 0o755);
    assert.deepEqual(await Deno.readFile(to), new Uint8Array([0, 1, 2, 255]));
    assert.equal((await Deno.stat(to)).mode! & 0o777, 0o755);
    for (const dir of [`${base}/data`, `${base}/data/muxbridge`, `${base}/data/muxbridge/bin`]) {
      assert.equal((await Deno.stat(dir)).mode! & 0o777, 0o700, dir);
    }
    assert.equal(files.sameContent(from, to), true);
    await Deno.writeFile(from, new Uint8Array([0, 1, 2, 254]));
    assert.equal(files.sameContent(from, to), false);
    files.copyAtomic(from, to, 0o755);
    assert.equal(files.sameContent(from, to), true, "replaced in place");
    assert.deepEqual([...Deno.readDirSync(`${base}/data/muxbridge/bin`)].map((e) => e.name), [
      "muxbridge",
    ], "no temporary file left");
    assert.equal(files.sameContent(from, `${base}/missing`), false);
  } finally {
    await Deno.remove(base, { recursive: true });
  }
});
