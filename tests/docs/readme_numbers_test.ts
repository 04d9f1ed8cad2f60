/**
 * The documentation's numbers come from scripts: every `measured` block (README.md and
 * docs/*.md) names the command that writes it (a script of this repository), starts by saying
 * when, where and by what command it was measured, and the "Binary size and start-up" section of
 * docs/performance.md has no figure outside its block. The numbers themselves are not asserted
 * (they are measurements, not promises).
 */

import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import denoConfig from "../../deno.json" with { type: "json" };
import { docFiles, readmeBlocks } from "../../scripts/_readme_blocks.ts";
import { WRITE_COMMAND } from "../../scripts/bench_startup.ts";
import { codeBlocks, doc, section } from "./_readme.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

Deno.test("measured blocks name the repository script that writes them, and say when and by what", () => {
  const measured = docFiles().flatMap((file) =>
    readmeBlocks(doc(file), file).filter((b) => b.how === "measured")
  );
  for (const name of ["startup", "performance", "release-sizes"]) {
    assert.ok(measured.some((b) => b.name === name), `the ${name} block is there`);
  }
  const tasks = Object.keys(denoConfig.tasks);
  for (const b of measured) {
    // A script of this repository (`… scripts/x.ts …`, `… bench/x.ts …`) or a deno task.
    const words = b.command.split(/\s+/);
    const script = words.find((w) => /^(scripts|bench)\/.+\.ts$/.test(w));
    const task = words[words.indexOf("task") + 1];
    assert.ok(
      script ? existsSync(`${ROOT}${script}`) : words.includes("task") && tasks.includes(task),
      `block ${b.name}: ${b.command} names no script or task of this repository`,
    );
    assert.ok(
      b.body.startsWith(`Measured `) && b.body.includes(`by \`${b.command}\``),
      `block ${b.name} starts with when and by what it was measured:\n${b.body}`,
    );
  }
});

Deno.test("start-up figures: written by bench_startup.ts --write, shown next to that command, none typed by hand", () => {
  const text = section(doc("docs/performance.md"), "Binary size and start-up");
  const block = readmeBlocks(text).find((b) => b.name === "startup");
  assert.ok(block, "the startup block is in the section");
  assert.equal(block.command, WRITE_COMMAND);
  assert.ok(
    codeBlocks(text, "sh").flat().some((l) => l.startsWith(WRITE_COMMAND)),
    "the section shows the command",
  );
  assert.match(block.body, /\| `dist\/muxbridge` size .*\| [\d.]+ MB \|/);
  assert.match(
    block.body,
    /\| `muxbridge --version` \| median \d+ ms \(min \d+, p90 \d+; \d+ runs\) \|/,
  );
  // Outside the block and the code: no figure with a unit.
  const prose = text
    .replace(/<!-- BEGIN startup[\s\S]*?<!-- END startup -->/, "")
    .replace(/```[\s\S]*?```/g, "");
  assert.deepEqual(prose.match(/\d+(\.\d+)?\s*(ms|s|MB|MiB|KiB|%)\b/g) ?? [], [], prose);
});
