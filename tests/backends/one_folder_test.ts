/**
 * The proof that a backend is one folder: no code outside `backends/<name>/` names a backend
 * (by an import path, a string that is its name or one of its config keys, an object key or a
 * member `.name`) except the registry line in `backends/mod.ts`, and nothing in `lib/` imports
 * `backends/` at all. Adding a backend is then its folder, its tests and fakes, its document under
 * `docs/backends/`, and one entry in `backends/mod.ts` (an import and its place in the list);
 * the README's generated blocks regenerate (`scripts/gen_readme.ts`).
 *
 * Code is read without its comments (prose may name any backend). Tests, benchmarks, fakes and
 * docs are not code a backend needs, and `examples/` are standalone providers.
 */

import assert from "node:assert/strict";
import { BACKENDS } from "../../backends/mod.ts";

const ROOT = new URL("../../", import.meta.url);

/**
 * Where code outside a backend's folder names it on purpose, with why. The demo is built on tmux
 * (the contract: "a private headless tmux server"), the zombie repro drives real tmux, and the test
 * runner's leak report names the tmux servers tests leave running.
 */
const ALLOWED: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  tmux: {
    "lib/cli/commands/demo.ts": "the demo runs a private tmux server (contract: demo)",
    "lib/cli/commands/_demo_tmux.ts": "what the demo reads back from its private tmux server",
    "scripts/repro_pane_zombies.ts": "a reproduction script that drives real tmux",
    "scripts/_tagged_processes.ts":
      "the test runner names a leaked tmux server by its socket (tests run real tmux servers)",
  },
};

/** The source files whose code a backend could be named in: everything muxbridge runs. */
async function sourceFiles(): Promise<string[]> {
  const out = await new Deno.Command("git", {
    args: ["ls-files", "main.ts", "lib", "backends", "plugin", "scripts"],
    cwd: ROOT,
    stdout: "piped",
  }).output();
  return new TextDecoder().decode(out.stdout).split("\n").filter((f) => f.endsWith(".ts"));
}

/**
 * Splits TypeScript into its code without comments and the text of its string and template
 * literals (the parts of a template outside `${…}`).
 */
function codeAndStrings(src: string): { code: string; strings: string[] } {
  let code = "";
  const strings: string[] = [];
  let last = ""; // the last significant character of code, to tell a regex from a division
  let i = 0;
  while (i < src.length) {
    const c = src[i];
    const next = src[i + 1];
    if (c === "/" && next === "/") {
      while (i < src.length && src[i] !== "\n") i++;
    } else if (c === "/" && next === "*") {
      const end = src.indexOf("*/", i + 2);
      i = end < 0 ? src.length : end + 2;
    } else if (c === '"' || c === "'" || c === "`") {
      let j = i + 1;
      let text = "";
      while (j < src.length && src[j] !== c) {
        if (src[j] === "\\") {
          text += src.slice(j, j + 2);
          j += 2;
        } else if (c === "`" && src[j] === "$" && src[j + 1] === "{") {
          let depth = 1;
          j += 2;
          text += " ";
          while (j < src.length && depth > 0) {
            if (src[j] === "{") depth++;
            else if (src[j] === "}") depth--;
            j++;
          }
        } else {
          text += src[j++];
        }
      }
      strings.push(text);
      code += '""';
      last = '"';
      i = j + 1;
    } else if (c === "/" && /^$|[(,=:[!&|?{};+\-*%<>~^]/.test(last)) {
      let j = i + 1;
      let inClass = false;
      while (j < src.length && src[j] !== "\n" && (src[j] !== "/" || inClass)) {
        if (src[j] === "\\") j++;
        else if (src[j] === "[") inClass = true;
        else if (src[j] === "]") inClass = false;
        j++;
      }
      code += "/r/";
      last = "r";
      i = j + 1;
    } else {
      code += c;
      if (!/\s/.test(c)) last = c;
      i++;
    }
  }
  return { code, strings };
}

/** How a file names a backend, or nothing. */
function naming(name: string, src: string): string[] {
  const { code, strings } = codeAndStrings(src);
  const found = strings.filter((s) =>
    s === name || s.startsWith(`${name}.`) || s.includes(`backends/${name}/`) ||
    s.startsWith(`./${name}/`)
  ).map((s) => JSON.stringify(s));
  if (new RegExp(`(^|[^\\w$.])${name}\\s*:(?!:)|\\.${name}\\b`).test(code)) {
    found.push(`${name}: or .${name}`);
  }
  return found;
}

Deno.test("codeAndStrings() leaves out comments and reads strings, templates and regexes apart", () => {
  const { code, strings } = codeAndStrings(
    '// tmux\n/* "zellij" */ const a = "kitty", b = `x${y}z` / 2; const r = /"q"/g;',
  );
  assert.deepEqual(strings, ["kitty", "x z"]);
  assert.ok(!code.includes("tmux") && !code.includes("zellij") && !code.includes('"q"'));
});

Deno.test("no code outside a backend's folder names it, but its line in backends/mod.ts", async () => {
  const files = await sourceFiles();
  for (const { name } of BACKENDS) {
    const named: Record<string, string[]> = {};
    for (const file of files) {
      if (file.startsWith(`backends/${name}/`)) continue;
      const found = naming(name, await Deno.readTextFile(new URL(file, ROOT)));
      if (found.length > 0) named[file] = found;
    }
    const expected = ["backends/mod.ts", ...Object.keys(ALLOWED[name] ?? {})].sort();
    assert.deepEqual(Object.keys(named).sort(), expected, `${name}: ${JSON.stringify(named)}`);
    assert.deepEqual(named["backends/mod.ts"], [JSON.stringify(`./${name}/mod.ts`)], name);
  }
});

Deno.test("nothing in lib/ imports backends/: the registry reaches it through main.ts", async () => {
  const files = (await sourceFiles()).filter((f) => f.startsWith("lib/"));
  const offenders = [];
  for (const file of files) {
    const src = await Deno.readTextFile(new URL(file, ROOT));
    const imports = [
      ...src.matchAll(/^(?:import|export)\b[^;]*?\bfrom\s+"([^"]+)";/gms),
      ...src.matchAll(/\bimport\(\s*"([^"]+)"\s*\)/g),
    ].map((m) => m[1]);
    if (imports.some((i) => new URL(i, new URL(file, ROOT)).pathname.includes("/backends/"))) {
      offenders.push(file);
    }
  }
  assert.deepEqual(offenders, []);
});
