/**
 * Marked blocks of README.md that a script writes, so that text which comes from the code, a
 * measurement or a real run is never typed by hand:
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
 * marker is the one to run to rewrite the block.
 *
 * @module
 */

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

/**
 * Lists the marked blocks of a README.
 *
 * @param text The README.
 * @returns Every block, in order.
 * @throws {SyntaxError} When a block has no END marker.
 */
export function readmeBlocks(text: string): ReadmeBlock[] {
  const out: ReadmeBlock[] = [];
  for (const m of text.matchAll(BEGIN)) {
    const from = m.index! + m[0].length;
    const to = text.indexOf(`<!-- END ${m[1]} -->`, from);
    if (to < 0) throw new SyntaxError(`README.md: block "${m[1]}" has no END marker`);
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
 * @param text The README.
 * @param name The block.
 * @param body The new body (no trailing newline needed).
 * @returns The README with the block rewritten.
 * @throws {SyntaxError} When the block's markers are missing.
 */
export function replaceBlock(text: string, name: string, body: string): string {
  const begin = [...text.matchAll(BEGIN)].find((m) => m[1] === name);
  if (!begin) throw new SyntaxError(`README.md lacks the BEGIN marker of block "${name}"`);
  const from = begin.index! + begin[0].length;
  const end = `<!-- END ${name} -->`;
  const to = text.indexOf(end, from);
  if (to < 0) throw new SyntaxError(`README.md: block "${name}" has no END marker`);
  return `${text.slice(0, from)}${body.replace(/\n+$/, "")}\n${text.slice(to)}`;
}

/**
 * Rewrites one block of the repository's README.md in place.
 *
 * @param name The block.
 * @param body The new body.
 * @returns Whether the file changed.
 */
export async function writeReadmeBlock(name: string, body: string): Promise<boolean> {
  const path = new URL("../README.md", import.meta.url);
  const text = await Deno.readTextFile(path);
  const fresh = replaceBlock(text, name, body);
  if (fresh === text) return false;
  await Deno.writeTextFile(path, fresh);
  return true;
}
