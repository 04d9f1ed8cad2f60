/**
 * Marked blocks of the documentation (README.md and the pages under `docs/`) that a script
 * writes, so that text which comes from the code, a measurement or a real run is never typed by
 * hand:
 *
 * ```text
 * <!-- BEGIN <name> (<how> by <command>) -->
 * …written by <command>…
 * <!-- END <name> -->
 * ```
 *
 * `<how>` says what kind of text it is: `generated` (from the code; a test fails when it is
 * stale), `measured` (numbers from a benchmark run; rewritten by running the command), or
 * `captured` (the output of a real run; a test checks its stable parts). The command in the
 * marker is the one to run to rewrite the block. Each block name lives in exactly one file;
 * the scripts find it there, so a block moves between pages without touching them.
 *
 * @module
 */

import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";

/** One marked block. */
export interface ReadmeBlock {
  /** The block's name (`commands`, `startup`, …). */
  name: string;
  /** `generated`, `measured` or `captured`. */
  how: string;
  /** The command that writes it. */
  command: string;
  /** The text between the markers, without the newlines that follow/precede them. */
  body: string;
}

const BEGIN = /<!-- BEGIN ([\w:-]+) \((generated|measured|captured) by ([^)]+)\) -->\n/g;

/** The repository's root folder. */
const ROOT = new URL("../", import.meta.url).pathname;

/**
 * The documentation files that may hold blocks: README.md and every `.md` under `docs/`, as
 * paths from the repository root, in a stable order.
 *
 * @param root The repository root. @default this repository
 * @returns The paths.
 */
export function docFiles(root: string = ROOT): string[] {
  const out = ["README.md"];
  const walk = (dir: string) => {
    const full = join(root, dir);
    if (!existsSync(full)) return;
    for (
      const e of readdirSync(full, { withFileTypes: true }).sort((a, b) => a.name < b.name ? -1 : 1)
    ) {
      const path = `${dir}/${e.name}`;
      if (e.isDirectory()) walk(path);
      else if (e.name.endsWith(".md")) out.push(path);
    }
  };
  walk("docs");
  return out;
}

/**
 * Lists the marked blocks of a text.
 *
 * @param text README.md or a docs page.
 * @param file Its name, for errors. @default "README.md"
 * @returns Every block, in order.
 * @throws {SyntaxError} When a block has no END marker.
 */
export function readmeBlocks(text: string, file = "README.md"): ReadmeBlock[] {
  const out: ReadmeBlock[] = [];
  for (const m of text.matchAll(BEGIN)) {
    const from = m.index! + m[0].length;
    const to = text.indexOf(`<!-- END ${m[1]} -->`, from);
    if (to < 0) throw new SyntaxError(`${file}: block "${m[1]}" has no END marker`);
    out.push({
      name: m[1],
      how: m[2],
      command: m[3],
      body: text.slice(from, to).replace(/\n$/, ""),
    });
  }
  return out;
}

/**
 * Replaces the body of one marked block.
 *
 * @param text README.md or a docs page.
 * @param name The block.
 * @param body The new body (no trailing newline needed).
 * @param file Its name, for errors. @default "README.md"
 * @returns The text with the block rewritten.
 * @throws {SyntaxError} When the block's markers are missing.
 */
export function replaceBlock(text: string, name: string, body: string, file = "README.md"): string {
  const begin = [...text.matchAll(BEGIN)].find((m) => m[1] === name);
  if (!begin) throw new SyntaxError(`${file} lacks the BEGIN marker of block "${name}"`);
  const from = begin.index! + begin[0].length;
  const end = `<!-- END ${name} -->`;
  const to = text.indexOf(end, from);
  if (to < 0) throw new SyntaxError(`${file}: block "${name}" has no END marker`);
  return `${text.slice(0, from)}${body.replace(/\n+$/, "")}\n${text.slice(to)}`;
}

/**
 * The one documentation file that holds a block.
 *
 * @param name The block.
 * @param root The repository root. @default this repository
 * @returns Its path from the root, and its text.
 * @throws {SyntaxError} When no file, or more than one, holds it.
 */
export function fileWithBlock(name: string, root: string = ROOT): { file: string; text: string } {
  const found = docFiles(root).flatMap((file) => {
    const text = readFileSync(join(root, file), "utf8");
    return readmeBlocks(text, file).some((b) => b.name === name) ? [{ file, text }] : [];
  });
  if (found.length !== 1) {
    throw new SyntaxError(
      `block "${name}" must be in exactly one of README.md and docs/*.md; found in ${
        found.length ? found.map((f) => f.file).join(", ") : "none"
      }`,
    );
  }
  return found[0];
}

/**
 * Rewrites one block in place, in whichever documentation file holds it.
 *
 * @param name The block.
 * @param body The new body.
 * @param root The repository root. @default this repository
 * @returns The file (from the repository root) and whether it changed.
 */
export function writeDocBlock(
  name: string,
  body: string,
  root: string = ROOT,
): { file: string; changed: boolean } {
  const { file, text } = fileWithBlock(name, root);
  const fresh = replaceBlock(text, name, body, file);
  if (fresh !== text) writeFileSync(join(root, file), fresh);
  return { file, changed: fresh !== text };
}

/**
 * A path from the repository root, as seen from a documentation file (for links).
 *
 * @param file The file the link is written in, from the root (`docs/backends.md`).
 * @param target The target, from the root (`docs/provider-protocol.md`).
 * @returns The relative link (`provider-protocol.md`).
 */
export function linkFrom(file: string, target: string): string {
  const dir = file.includes("/") ? file.slice(0, file.lastIndexOf("/")) : ".";
  return relative(dir, target) || ".";
}
