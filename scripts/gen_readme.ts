/**
 * Regenerates the parts of the documentation that come from the code — the config reference (from
 * the zod schema), the command list (from the command table), the error codes, and the backend
 * list and matrix (from the backend registry) — between `<!-- BEGIN x -->` and `<!-- END x -->`
 * markers, in whichever file holds each (README.md or a page under `docs/`; each block in exactly
 * one). Links in generated text are written from the repository root and rewritten relative to
 * the file they land in. `--check` fails when a file is out of date (a test runs it).
 *
 * Usage: deno run -A scripts/gen_readme.ts [--check]
 *
 * @module
 */

import { BACKENDS } from "../backends/mod.ts";
import { configJsonSchema } from "../lib/config/config.ts";
import { precedence } from "../lib/backend/identity.ts";
import { COMMANDS } from "../lib/cli/commands/mod.ts";
import { ERROR_CODES } from "../lib/sys/errors.ts";
import { docFiles, linkFrom, readmeBlocks, replaceBlock } from "./_readme_blocks.ts";

interface JsonSchema {
  type?: string;
  description?: string;
  default?: unknown;
  enum?: unknown[];
  minimum?: number;
  maximum?: number;
  properties?: Record<string, JsonSchema>;
}

function typeOf(s: JsonSchema): string {
  if (s.enum) return s.enum.map((v) => `\`${v}\``).join(" \\| ");
  const range = s.minimum !== undefined && s.maximum !== undefined
    ? ` ${s.minimum}–${s.maximum}`
    : "";
  return `${s.type ?? "any"}${range}`;
}

function cell(text: string): string {
  return text.replaceAll("|", "\\|").replaceAll("\n", " ");
}

/** The config reference table. */
export function configTable(): string {
  const schema = configJsonSchema(BACKENDS) as JsonSchema;
  const rows = ["| key | type | default | meaning |", "|---|---|---|---|"];
  for (const [key, s] of Object.entries(schema.properties ?? {})) {
    if (s.type === "object" && s.properties) {
      rows.push(`| \`${key}\` | object | | ${cell(s.description ?? "")} |`);
      for (const [sub, ss] of Object.entries(s.properties)) {
        const def = ss.default === undefined ? "" : `\`${JSON.stringify(ss.default)}\``;
        rows.push(`| \`${key}.${sub}\` | ${typeOf(ss)} | ${def} | ${cell(ss.description ?? "")} |`);
      }
      continue;
    }
    const def = s.default === undefined ? "" : `\`${JSON.stringify(s.default)}\``;
    rows.push(`| \`${key}\` | ${typeOf(s)} | ${def} | ${cell(s.description ?? "")} |`);
  }
  return rows.join("\n");
}

/** The command list with usage lines. */
export function commandList(): string {
  return COMMANDS.map((c) => `- \`${c.usage.replace(/\s{2,}.*$/, "")}\` — ${c.summary}.`).join(
    "\n",
  );
}

/** Every error code with its exit code and meaning, from the one table in lib/sys/errors.ts. */
export function errorCodeTable(): string {
  const rows = ["| code | exit | meaning |", "|---|---|---|"];
  for (const [code, { exit, meaning }] of Object.entries(ERROR_CODES)) {
    rows.push(`| \`${code}\` | \`${exit}\` | ${cell(meaning)} |`);
  }
  return rows.join("\n");
}

/** The one-line list of backends the README opens with. */
export function backendList(): string {
  const names = BACKENDS.map((b, i) => i === 0 ? `**${b.title}**` : b.title);
  return `Backends: ${names.slice(0, -1).join(", ")} and ${names[names.length - 1]} (see ` +
    "[docs/backends.md](docs/backends.md) for what each can do and how it was verified).";
}

/** The backend matrix, one row per backend, and the order detection decides by. */
export function backendTable(): string {
  const rows = [
    "| backend | versions | detected from | spawn | close (verified by) | layout | title | focus-safe | credentials | ownership marks | verified against |",
    "|---|---|---|---|---|---|---|---|---|---|---|",
  ];
  for (const b of BACKENDS) {
    const r = b.readme;
    const cells = [
      r.versions,
      r.detectedFrom,
      r.spawn,
      r.close,
      r.layout,
      r.title,
      r.focusSafe,
      r.credentials,
      r.marks,
      r.verified,
    ];
    rows.push(`| ${b.name} | ${cells.join(" | ")} |`);
  }
  const terminals = BACKENDS.filter((b) => b.detect?.nesting.kind === "terminal")
    .map((b) => b.title);
  return [
    ...rows,
    "",
    "When several layers are found (tmux inside kitty is normal), the innermost wins: a terminal " +
    `(${terminals.join(", ")}) holds the multiplexers that run in it; where the environment ` +
    `cannot tell, the order is ${precedence(BACKENDS).join(" > ")}.`,
  ].join("\n");
}

/** The generated blocks, by name. */
export const SECTIONS: Record<string, () => string> = {
  "backend-list": backendList,
  backends: backendTable,
  config: configTable,
  commands: commandList,
  "error-codes": errorCodeTable,
};

/**
 * Rewrites the repository-relative links of generated text (`[x](docs/a.md)`) relative to the
 * file it is written into.
 *
 * @param text Generated text.
 * @param file The file, from the repository root.
 * @returns The text with its links relative to the file.
 */
export function relink(text: string, file: string): string {
  return text.replace(/\]\(([^)\s]+)\)/g, (all, target: string) => {
    if (/^([a-z]+:|#|\/)/i.test(target)) return all;
    const [path, anchor] = target.split("#", 2);
    return `](${linkFrom(file, path)}${anchor === undefined ? "" : `#${anchor}`})`;
  });
}

/**
 * Replaces every generated block a file holds.
 *
 * @param text README.md or a docs page.
 * @param file Its path from the repository root. @default "README.md"
 * @returns The text with fresh blocks.
 * @throws {Error} When it holds a generated block no generator makes.
 */
export function regenerate(text: string, file = "README.md"): string {
  let out = text;
  for (const b of readmeBlocks(text, file).filter((b) => b.how === "generated")) {
    const make = SECTIONS[b.name];
    if (!make || b.command !== "scripts/gen_readme.ts") {
      throw new Error(`${file}: no generator for block "${b.name}" (${b.command})`);
    }
    out = replaceBlock(out, b.name, relink(make(), file), file);
  }
  return out;
}

/**
 * Every documentation file, regenerated.
 *
 * @param read Reads a file from the repository root.
 * @returns Each file's path, current text and fresh text.
 * @throws {Error} When a block is missing or in more than one file.
 */
export function regenerateAll(
  read: (file: string) => string,
): Array<{ file: string; text: string; fresh: string }> {
  const all = docFiles().map((file) => {
    const text = read(file);
    return { file, text, fresh: regenerate(text, file) };
  });
  for (const name of Object.keys(SECTIONS)) {
    const holders = all.filter(({ file, text }) =>
      readmeBlocks(text, file).some((b) => b.name === name && b.how === "generated")
    );
    if (holders.length !== 1) {
      throw new Error(
        `the generated block "${name}" must be in exactly one of README.md and docs/*.md; ` +
          `found in ${holders.map((h) => h.file).join(", ") || "none"}`,
      );
    }
  }
  return all;
}

if (import.meta.main) {
  const root = new URL("../", import.meta.url).pathname;
  const stale: string[] = [];
  for (const { file, text, fresh } of regenerateAll((f) => Deno.readTextFileSync(root + f))) {
    if (fresh === text) continue;
    stale.push(file);
    if (!Deno.args.includes("--check")) Deno.writeTextFileSync(root + file, fresh);
  }
  if (Deno.args.includes("--check") && stale.length) {
    console.error(`${stale.join(", ")} out of date: run \`deno run -A scripts/gen_readme.ts\``);
    Deno.exit(1);
  }
}
