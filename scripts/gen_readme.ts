/**
 * Regenerates the parts of README.md that come from the code — the config reference (from the
 * zod schema), the command list (from the command table), the error codes, and the backend list
 * and matrix (from the backend registry) — between `<!-- BEGIN x -->` and `<!-- END x -->`
 * markers. `--check` fails when README.md is out of date (a test runs it).
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
import { readmeBlocks, replaceBlock } from "./_readme_blocks.ts";

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
    "[Backends](#backends) for what each can do and how it was verified).";
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

const SECTIONS: Record<string, () => string> = {
  "backend-list": backendList,
  backends: backendTable,
  config: configTable,
  commands: commandList,
  "error-codes": errorCodeTable,
};

/**
 * Replaces every generated section of a README text.
 *
 * @param text The README.
 * @returns The README with fresh sections.
 */
export function regenerate(text: string): string {
  let out = text;
  const generated = readmeBlocks(text).filter((b) => b.how === "generated");
  for (const [name, make] of Object.entries(SECTIONS)) {
    if (!generated.some((b) => b.name === name && b.command === "scripts/gen_readme.ts")) {
      throw new Error(`README.md lacks the ${name} markers`);
    }
    out = replaceBlock(out, name, make());
  }
  return out;
}

if (import.meta.main) {
  const path = new URL("../README.md", import.meta.url);
  const text = await Deno.readTextFile(path);
  const fresh = regenerate(text);
  if (Deno.args.includes("--check")) {
    if (fresh !== text) {
      console.error("README.md is out of date: run `deno run -A scripts/gen_readme.ts`");
      Deno.exit(1);
    }
  } else if (fresh !== text) {
    await Deno.writeTextFile(path, fresh);
  }
}
