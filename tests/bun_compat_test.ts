/**
 * The same sources build with Bun (the offline release compiler): no `Deno.*` outside
 * `main.ts` and the exec seam, no `npm:`/`jsr:` specifiers (Bun does not resolve them; bare
 * imports are mapped in deno.json and installed from package.json), and `bun build` bundles
 * the entry point. Fast guards; `deno task test:binary` runs the compiled binary for real.
 */

import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { createRunner } from "../lib/sys/exec.ts";
import { requirement, requires } from "./helpers/requires.ts";

const root = new URL("../", import.meta.url).pathname;
const bun = `${root}node_modules/.bin/bun`;

/** Every .ts file the binary is built from (the plugin runs inside OpenCode, not here). */
function sources(): string[] {
  const out = ["main.ts"];
  const walk = (dir: string) => {
    for (const name of readdirSync(`${root}${dir}`)) {
      const rel = `${dir}/${name}`;
      if (statSync(`${root}${rel}`).isDirectory()) walk(rel);
      else if (rel.endsWith(".ts")) out.push(rel);
    }
  };
  walk("lib");
  walk("backends");
  return out.sort();
}

/** Code without comments (a comment may name `Deno.Command` to explain the seam). */
function code(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:"'`])\/\/.*$/gm, "$1");
}

Deno.test("Deno.* appears only in main.ts and lib/sys/exec.ts (each behind a runtime check)", () => {
  const offenders = sources().filter((f) =>
    f !== "main.ts" && f !== "lib/sys/exec.ts" &&
    /\bDeno\./.test(code(readFileSync(`${root}${f}`, "utf8")))
  );
  assert.deepEqual(offenders, [], "use node: APIs; Deno.* is undefined in the Bun-built binary");
});

Deno.test("no npm: or jsr: specifiers in the binary's sources", () => {
  const offenders = sources().filter((f) =>
    /from\s+["'](npm|jsr):|import\(\s*["'](npm|jsr):/.test(readFileSync(`${root}${f}`, "utf8"))
  );
  assert.deepEqual(offenders, [], "import bare names mapped in deno.json instead");
});

Deno.test({
  name: "bun build bundles main.ts (every import resolves under Bun)",
  ...requires("bun build", [
    requirement("bun", existsSync(bun), "npm install (bun is a devDependency)"),
  ]),
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "muxbridge-bun-" });
    try {
      const r = await createRunner()(
        [bun, "build", "--target=bun", `${root}main.ts`, "--outdir", dir],
        { timeoutMs: 120_000, cwd: root },
      );
      assert.equal(r.code, 0, r.stdout + r.stderr);
      assert.ok(existsSync(`${dir}/main.js`));
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});
