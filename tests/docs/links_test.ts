/**
 * No dead links in the documentation: every relative link of README.md, the pages under `docs/`
 * and the plugin's README names a file or folder of this repository, and every `#anchor` a
 * heading of the page it points to (GitHub's slugs: lower case, punctuation dropped, spaces to
 * `-`, a repeated heading numbered). Links inside code are not links and are skipped.
 */

import assert from "node:assert/strict";
import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, join, normalize } from "node:path";
import { docFiles } from "../../scripts/_readme_blocks.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

/** The pages checked: the docs and the plugin's README. */
function pages(): string[] {
  return [...docFiles(), "plugin/README.md"];
}

/** The text of a page without its fenced code and inline code. */
function prose(text: string): string {
  return text.replace(/^```[\s\S]*?^```/gm, "").replace(/`[^`\n]*`/g, "");
}

/**
 * The anchors GitHub gives a page's headings.
 *
 * @param text A Markdown page.
 * @returns Its anchors.
 */
export function anchors(text: string): Set<string> {
  const out = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of text.replace(/^```[\s\S]*?^```/gm, "").split("\n")) {
    const m = /^#{1,6} (.*)$/.exec(line);
    if (!m) continue;
    const slug = m[1].trim().toLowerCase().replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "")
      .replace(/ /g, "-");
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    out.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return out;
}

Deno.test("anchors follow GitHub's slugs", () => {
  const page = "# A\n## §13 What proves a pane is ours\n## Background jobs (`bridge.job`)\n" +
    "## How muxbridge follows OpenCode 2.x, and why this way\n## A\n";
  assert.deepEqual([...anchors(page)], [
    "a",
    "13-what-proves-a-pane-is-ours",
    "background-jobs-bridgejob",
    "how-muxbridge-follows-opencode-2x-and-why-this-way",
    "a-1",
  ]);
});

Deno.test("every relative link of the documentation names a file and heading that exist", () => {
  const dead: string[] = [];
  let checked = 0;
  for (const page of pages()) {
    const text = readFileSync(join(ROOT, page), "utf8");
    for (const m of prose(text).matchAll(/\]\(([^)\s]+)\)/g)) {
      const target = m[1];
      if (/^[a-z]+:/i.test(target)) continue; // https:, mailto:
      checked++;
      const [path, anchor] = target.split("#", 2);
      const file = path === "" ? page : normalize(join(dirname(page), path));
      if (!existsSync(join(ROOT, file))) {
        dead.push(`${page}: ${target} (no ${file})`);
        continue;
      }
      if (
        anchor === undefined || !file.endsWith(".md") || statSync(join(ROOT, file)).isDirectory()
      ) {
        continue;
      }
      if (!anchors(readFileSync(join(ROOT, file), "utf8")).has(anchor)) {
        dead.push(`${page}: ${target} (no heading #${anchor} in ${file})`);
      }
    }
  }
  assert.ok(checked > 50, `the links were read (${checked})`);
  assert.deepEqual(dead, []);
});
