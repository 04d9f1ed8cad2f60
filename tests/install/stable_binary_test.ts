/**
 * `lib/install/stable_binary.ts`: a binary in a package manager's folder is recorded as its
 * private copy; anything else as it is.
 */

import assert from "node:assert/strict";
import { inPackageFolder, stableBinDir, stableCommand } from "../../lib/install/stable_binary.ts";
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
