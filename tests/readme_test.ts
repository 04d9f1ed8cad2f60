import assert from "node:assert/strict";
import { docFiles, readmeBlocks } from "../scripts/_readme_blocks.ts";
import { regenerateAll, relink } from "../scripts/gen_readme.ts";

const ROOT = new URL("../", import.meta.url).pathname;

Deno.test("the generated blocks (config reference, commands, error codes, backends) are up to date, each in one file", () => {
  for (const { file, text, fresh } of regenerateAll((f) => Deno.readTextFileSync(ROOT + f))) {
    assert.equal(fresh, text, `${file}: run \`deno run -A scripts/gen_readme.ts\``);
  }
});

Deno.test("generated links are rewritten relative to the page they land in", () => {
  const text =
    "[protocol](docs/provider-protocol.md) [a](docs/a.md#x) [w](https://x.y/docs) [h](#h)";
  assert.equal(relink(text, "README.md"), text);
  assert.equal(
    relink(text, "docs/backends.md"),
    "[protocol](provider-protocol.md) [a](a.md#x) [w](https://x.y/docs) [h](#h)",
  );
  assert.equal(relink("[r](README.md)", "docs/backends/tmux.md"), "[r](../../README.md)");
});

Deno.test("every written block of a docs page is fenced from `deno fmt` (which would rewrite it)", () => {
  for (const file of docFiles().filter((f) => f.startsWith("docs/"))) {
    const text = Deno.readTextFileSync(ROOT + file);
    for (const b of readmeBlocks(text, file)) {
      const begin = text.indexOf(`<!-- BEGIN ${b.name} `);
      const end = text.indexOf(`<!-- END ${b.name} -->`);
      assert.ok(
        text.slice(0, begin).endsWith("<!-- deno-fmt-ignore-start -->\n") &&
          text.slice(end).startsWith(`<!-- END ${b.name} -->\n<!-- deno-fmt-ignore-end -->`),
        `${file}: wrap block "${b.name}" in <!-- deno-fmt-ignore-start --> … -end -->`,
      );
    }
  }
});
