/**
 * Reads README.md and the pages under `docs/` the way the docs-checking tests need them: a
 * section by its heading, the tables and fenced code blocks in it. Only what the tests rely on;
 * a page that no longer has the expected shape fails loudly (a test that silently found nothing
 * to check would prove nothing).
 *
 * @module
 */

/** The repository's root folder. */
const ROOT = new URL("../../", import.meta.url);

/** The repository's README.md. */
export const README_PATH = new URL("README.md", ROOT);

/**
 * Reads README.md.
 *
 * @returns Its text.
 */
export function readme(): string {
  return Deno.readTextFileSync(README_PATH);
}

/**
 * Reads a documentation page.
 *
 * @param path Its path from the repository root, such as `docs/cli.md`.
 * @returns Its text.
 */
export function doc(path: string): string {
  return Deno.readTextFileSync(new URL(path, ROOT));
}

/**
 * The text of one section: from its heading to the next heading of the same or a higher level.
 *
 * @param text README.md or a docs page.
 * @param heading The heading's text, such as "Exit codes".
 * @returns The section, heading excluded.
 * @throws {Error} When there is no such heading.
 */
export function section(text: string, heading: string): string {
  const lines = text.split("\n");
  const at = lines.findIndex((l) => /^#{1,6} /.test(l) && l.replace(/^#+ /, "") === heading);
  if (at < 0) throw new Error(`no section "${heading}"`);
  const level = lines[at].indexOf(" ");
  let end = lines.length;
  let fenced = false;
  for (let i = at + 1; i < lines.length; i++) {
    if (lines[i].startsWith("```")) fenced = !fenced;
    const m = /^(#{1,6}) /.exec(lines[i]);
    if (!fenced && m && m[1].length <= level) {
      end = i;
      break;
    }
  }
  return lines.slice(at + 1, end).join("\n");
}

/**
 * The first Markdown table of a text whose header is exactly `columns`, as rows of cells keyed
 * by column. Cells are trimmed; nothing else is changed (backticks stay).
 *
 * @param text A section.
 * @param columns The header cells, in order.
 * @returns The rows.
 * @throws {Error} When no table has that header.
 */
export function table(text: string, columns: readonly string[]): Array<Record<string, string>> {
  const lines = text.split("\n");
  const cells = (l: string) =>
    l.trim().replace(/^\|/, "").replace(/\|$/, "").split("|").map((c) => c.trim());
  const at = lines.findIndex((l) =>
    l.trim().startsWith("|") && JSON.stringify(cells(l)) === JSON.stringify(columns)
  );
  if (at < 0) throw new Error(`no table with the columns ${columns.join(" | ")}`);
  const rows: Array<Record<string, string>> = [];
  for (const l of lines.slice(at + 2)) {
    if (!l.trim().startsWith("|")) break;
    const c = cells(l);
    if (c.length !== columns.length) {
      throw new Error(`a table row has ${c.length} cells, not ${columns.length}: ${l}`);
    }
    rows.push(Object.fromEntries(columns.map((name, i) => [name, c[i]])));
  }
  return rows;
}

/**
 * The fenced code blocks of a text with the given info string (`sh`, `text`, …).
 *
 * @param text A section.
 * @param info The fence's info string.
 * @returns Each block's lines, fences excluded.
 */
export function codeBlocks(text: string, info: string): string[][] {
  const out: string[][] = [];
  let current: string[] | null = null;
  for (const line of text.split("\n")) {
    if (current === null && line.trim() === `\`\`\`${info}`) current = [];
    else if (current !== null && line.trim() === "```") {
      out.push(current);
      current = null;
    } else if (current !== null) current.push(line);
  }
  return out;
}

/**
 * The text inside one pair of backticks of a cell (`` `muxbridge version` `` → `muxbridge
 * version`); the cell as it is when it has none.
 *
 * @param cell A table cell.
 * @returns Its code.
 */
export function code(cell: string): string {
  const m = /^`(.*)`$/.exec(cell);
  return m ? m[1] : cell;
}
