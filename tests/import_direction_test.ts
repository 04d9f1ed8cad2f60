/**
 * The floors of `lib/`, read top-down, and the rule that every import runs down or stays in its
 * own group: `cli → bridge → session | backend/select.ts → opencode | backend | install → config
 * → sys`. Each folder's `mod.ts` says the same in words; this test reads every
 * import statement of every `lib/` source file (doc examples aside) and fails on one that runs
 * back up. Choosing a backend (`lib/backend/select.ts`) sits beside the session core, not in it:
 * the core is handed a backend, and only the bridge and the CLI choose one.
 */

import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, normalize, relative } from "node:path";

const ROOT = normalize(join(dirname(new URL(import.meta.url).pathname), ".."));

/**
 * Every group of `lib/` with its floor, top first. A file belongs to the group whose path is its
 * longest match. A new folder of `lib/` is placed here; `lib/` itself holds folders only.
 */
const GROUPS: ReadonlyArray<{ group: string; floor: number; paths: readonly string[] }> = [
  { group: "cli", floor: 6, paths: ["lib/cli/"] },
  { group: "bridge", floor: 5, paths: ["lib/bridge/"] },
  { group: "session", floor: 4, paths: ["lib/session/"] },
  { group: "opencode", floor: 3, paths: ["lib/opencode/"] },
  { group: "select", floor: 4, paths: ["lib/backend/select.ts"] },
  { group: "backend", floor: 3, paths: ["lib/backend/"] },
  { group: "install", floor: 3, paths: ["lib/install/"] },
  { group: "config", floor: 1, paths: ["lib/config/"] },
  { group: "sys", floor: 0, paths: ["lib/sys/"] },
];

/** Narrower rules inside a group: these files may import only what is listed. */
const ONLY: ReadonlyArray<{ from: string; to: readonly string[]; why: string }> = [
  {
    from: "lib/session/machine/",
    to: ["lib/session/machine/", "lib/session/events.ts", "lib/sys/validate.ts"],
    why: "the machine is pure: no I/O, no clock, no backend",
  },
  {
    from: "lib/opencode/events.ts",
    to: ["lib/sys/validate.ts"],
    why: "what OpenCode says, in muxbridge's words, is plain data",
  },
  {
    from: "lib/session/events.ts",
    to: ["lib/sys/validate.ts", "lib/opencode/events.ts"],
    why: "the core's events are plain data",
  },
];

function groupOf(path: string): { group: string; floor: number } | null {
  let best: { group: string; floor: number; length: number } | null = null;
  for (const g of GROUPS) {
    for (const p of g.paths) {
      const hit = p.endsWith("/") ? path.startsWith(p) : path === p;
      if (hit && (!best || p.length > best.length)) {
        best = { group: g.group, floor: g.floor, length: p.length };
      }
    }
  }
  return best && { group: best.group, floor: best.floor };
}

function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir)).flatMap((name) => {
    const path = `${dir}/${name}`;
    if (statSync(join(ROOT, path)).isDirectory()) return sources(path);
    return path.endsWith(".ts") ? [path] : [];
  });
}

/**
 * The repository paths a file imports: `import … from`, `export … from` and bare `import "…"`
 * statements that start a line (doc examples start with ` * ` and are not imports of the file).
 */
function importsOf(path: string): string[] {
  const text = readFileSync(join(ROOT, path), "utf8");
  const specifiers: string[] = [];
  const statement =
    /^(?:import|export)\s+(?:type\s+)?(?:\*(?:\s+as\s+[\w$]+)?|\{[^}]*\}|[\w$]+(?:\s*,\s*\{[^}]*\})?)\s+from\s+"([^"]+)"|^import\s+"([^"]+)"/gm;
  for (const m of text.matchAll(statement)) specifiers.push(m[1] ?? m[2]);
  return specifiers
    .filter((s) => s.startsWith("."))
    .map((s) => relative(ROOT, normalize(join(ROOT, dirname(path), s))));
}

const LIB = sources("lib");

Deno.test("every lib/ file is placed on a floor", () => {
  assert.deepEqual(LIB.filter((p) => groupOf(p) === null), []);
});

Deno.test("every import in lib/ runs down a floor or stays in its group", () => {
  const up: string[] = [];
  for (const from of LIB) {
    const a = groupOf(from)!;
    for (const to of importsOf(from)) {
      if (!to.startsWith("lib/")) continue;
      const b = groupOf(to);
      if (!b) {
        up.push(`${from} -> ${to} (no floor)`);
        continue;
      }
      if (a.group !== b.group && b.floor >= a.floor) {
        up.push(`${from} (${a.group}, floor ${a.floor}) -> ${to} (${b.group}, floor ${b.floor})`);
      }
    }
  }
  assert.deepEqual(up, []);
});

Deno.test("nothing in lib/ reaches outside lib/: the registry is wired in by main.ts", () => {
  const outside: string[] = [];
  for (const from of LIB) {
    for (const to of importsOf(from)) {
      if (!to.startsWith("lib/")) outside.push(`${from} -> ${to}`);
    }
  }
  assert.deepEqual(outside, []);
});

Deno.test("the session machine and the core's events import only what they may", () => {
  const broken: string[] = [];
  for (const rule of ONLY) {
    for (const from of LIB.filter((p) => p.startsWith(rule.from))) {
      for (const to of importsOf(from)) {
        if (!rule.to.some((t) => (t.endsWith("/") ? to.startsWith(t) : to === t))) {
          broken.push(`${from} -> ${to}: ${rule.why}`);
        }
      }
    }
  }
  assert.deepEqual(broken, []);
});

Deno.test("the import reader sees multi-line imports and skips doc examples", () => {
  const imports = importsOf("lib/session/loop.ts");
  assert.ok(imports.includes("lib/session/machine/mod.ts"), imports.join("\n"));
  assert.ok(imports.includes("lib/session/session.ts"), "a multi-line import");
  assert.ok(importsOf("lib/session/mod.ts").includes("lib/session/loop.ts"), "a re-export");
  // Its doc example imports the file itself; the file does not.
  assert.ok(!importsOf("lib/session/serial_queue.ts").includes("lib/session/serial_queue.ts"));
});

Deno.test("lib/ holds folders only: every file lives in the folder of its concern", () => {
  assert.deepEqual(readdirSync(join(ROOT, "lib")).filter((n) => n.endsWith(".ts")), []);
});
