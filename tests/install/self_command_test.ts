import assert from "node:assert/strict";
import { selfCommand } from "../../lib/install/self_command.ts";

Deno.test("selfCommand() is the binary itself when compiled (Bun or Deno)", () => {
  for (
    const mainUrl of ["file:///$bunfs/root/muxbridge", "file:///tmp/deno-compile-muxbridge/main.ts"]
  ) {
    assert.deepEqual(
      selfCommand({
        execPath: "/usr/local/bin/muxbridge",
        mainUrl,
        runtime: "bun",
        exists: () => true,
      }),
      ["/usr/local/bin/muxbridge"],
    );
  }
});

Deno.test("selfCommand() from source names the runtime, deno.json beside main.ts and main.ts", () => {
  assert.deepEqual(
    selfCommand({
      execPath: "/opt/deno",
      mainUrl: "file:///src/mux/main.ts",
      runtime: "deno",
      exists: (p) => p === "/src/mux/deno.json",
    }),
    ["/opt/deno", "run", "--allow-all", "--config", "/src/mux/deno.json", "/src/mux/main.ts"],
  );
  assert.deepEqual(
    selfCommand({
      execPath: "/opt/bun",
      mainUrl: "file:///src/mux/main.ts",
      runtime: "bun",
      exists: () => true,
    }),
    ["/opt/bun", "/src/mux/main.ts"],
  );
});
