/**
 * The process `rss_modules.ts` measures: it imports the modules named in its first argument
 * (comma-separated, relative to this file or bare package names), after zod's settings as
 * `main.ts` makes them (unless its second argument names `zodjit`), optionally exercises runtime
 * features, says it is ready on stdout, then waits on its stdin like the bridge does.
 *
 * @module
 */

import process from "node:process";

const modules = process.argv[2] ?? "";
const features = process.argv[3] ?? "";
// As main.ts does, unless the set measures zod's generated parsers.
if (modules !== "" && !features.includes("zodjit")) await import("../lib/sys/zod_jitless.ts");
for (const m of modules.split(",").filter((x) => x !== "")) await import(m);
if (features.includes("spawn")) {
  const { spawn } = await import("node:child_process");
  await new Promise((done) => spawn("true", [], { stdio: "ignore" }).on("exit", done));
}
if (features.includes("fetch")) {
  await fetch("http://127.0.0.1:9/").catch(() => {});
}
process.stdout.write('{"type":"ready"}\n');
for await (const _ of process.stdin as unknown as AsyncIterable<Uint8Array>) { /* wait */ }
