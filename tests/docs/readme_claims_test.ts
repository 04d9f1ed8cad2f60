/**
 * The README's claims that come from the code or the repository, checked against it: it stays a
 * front door (at most 350 lines); its OpenCode table names the versions the suite pins and the
 * ranges the code accepts; its troubleshooting table has one row per reason a child can get no
 * pane; its `list` sample is the one `list --help` prints; its test command is the one CI runs;
 * every config example of the README and the config pages is a config muxbridge accepts; the
 * protocol page names every reason a pane closes; the security page names exactly the keys a
 * `bridge.hello` cannot set; the timings the README quotes are the ones docs/performance.md gives,
 * next to the command that printed them.
 */

import assert from "node:assert/strict";
import opencode2Tools from "../../tools/opencode2/package.json" with { type: "json" };
import packageJson from "../../package.json" with { type: "json" };
import { BACKENDS } from "../../backends/mod.ts";
import { listCommand } from "../../lib/cli/commands/list.ts";
import { HELLO_FORBIDDEN } from "../../lib/config/hello_forbidden.ts";
import { V1 } from "../../lib/opencode/v1/line.ts";
import { V2 } from "../../lib/opencode/v2/line.ts";
import { CLOSE_REASONS, SKIP_REASONS } from "../../lib/session/events.ts";
import { resolveConfig } from "../helpers/config.ts";
import { code, codeBlocks, doc, readme, section, table } from "./_readme.ts";

const ROOT = new URL("../../", import.meta.url);

Deno.test("README is a front door: at most 350 lines", () => {
  const lines = readme().trimEnd().split("\n").length;
  assert.ok(lines <= 350, `README.md has ${lines} lines; move detail into docs/`);
});

Deno.test("README's OpenCode table: the tested versions are the pinned ones, the ranges the code's", () => {
  const rows = table(readme(), [
    "OpenCode",
    "tested with",
    "a child's pane runs",
    "which children get panes",
  ]);
  const [v1, v2] = rows;
  assert.equal(rows.length, 2);
  assert.match(v1.OpenCode, /^1\.x \(npm `opencode-ai`\)$/);
  assert.equal(v1["tested with"], packageJson.devDependencies["opencode-ai"]);
  assert.equal(V1.range, ">=1.0.0 <2.0.0");
  assert.match(v2.OpenCode, /^2\.x \(npm `@opencode\/cli`, ≥ 2\.1\.0 < 3\)$/);
  assert.equal(V2.range, ">=2.1.0 <3.0.0");
  assert.equal(v2["tested with"], opencode2Tools.dependencies["@opencode/cli"]);
  // The pane programs, as each line builds them.
  const v1Argv = V1.pane({
    bin: "opencode",
    url: "<url>",
    sessionId: "<child>",
    dir: "<dir>",
    ownsTitle: false,
  }).argv;
  const v2Argv = V2.pane({
    bin: "opencode",
    url: "<url>",
    sessionId: "<child>",
    dir: "<dir>",
    ownsTitle: false,
  }).argv;
  assert.equal(code(v1["a child's pane runs"]), v1Argv.join(" "));
  assert.equal(code(v2["a child's pane runs"]), v2Argv.join(" "));
});

Deno.test("README's troubleshooting table has one row for every reason a child gets no pane", () => {
  const rows = table(section(readme(), "Troubleshooting"), ["reason", "cause", "fix"]);
  assert.deepEqual(rows.map((r) => code(r.reason)).sort(), [...SKIP_REASONS].sort());
});

Deno.test("README's `list` sample is what `list --help` shows", () => {
  const shown = codeBlocks(section(readme(), "Commands"), "text");
  const help = listCommand.help!.split("\n");
  const at = help.indexOf("  muxbridge list");
  assert.ok(at >= 0, listCommand.help);
  const example = help.slice(at + 1).filter((l) => l.startsWith("  ")).map((l) => l.slice(2));
  assert.deepEqual(shown, [example]);
});

Deno.test("README's test command is the one CI runs", () => {
  const ci = Deno.readTextFileSync(new URL(".ci/run", ROOT));
  assert.match(ci, /^npx deno task test$/m);
  const commands = codeBlocks(section(readme(), "Development"), "sh").flat()
    .map((l) => l.replace(/\s+#.*$/, ""));
  assert.ok(commands.includes("npx deno task test"), commands.join("\n"));
  assert.ok(commands.includes("./scripts/setup.sh"), commands.join("\n"));
});

Deno.test("every config example of the README and the config pages is a config muxbridge accepts", () => {
  const pages = { "README.md": readme() } as Record<string, string>;
  for (const page of ["docs/configuration.md", "docs/panes.md"]) pages[page] = doc(page);
  let checked = 0;
  for (const [page, text] of Object.entries(pages)) {
    for (const block of codeBlocks(text, "json")) {
      const data = JSON.parse(block.join("\n"));
      resolveConfig({ file: { path: page, data }, env: () => undefined });
      checked++;
    }
  }
  assert.ok(checked >= 3, `the examples were read (${checked})`);
});

Deno.test("docs/protocol.md names every reason a pane closes", () => {
  const out = /`pane\.closed` \(([^)]*)\)/.exec(doc("docs/protocol.md"))?.[1] ?? "";
  const named = [...out.matchAll(/`([a-z_]+)`/g)].map((m) => m[1]);
  assert.deepEqual(named.sort(), [...CLOSE_REASONS].sort(), out);
});

Deno.test("docs/security.md names exactly the keys a bridge.hello cannot set", () => {
  const text = section(doc("docs/security.md"), "What muxbridge trusts").replace(/\s+/g, " ");
  const list = /cannot set a key that names (.*?): such a hello/.exec(text)?.[1] ?? "";
  const named = new Set([...list.matchAll(/`([^`]+)`/g)].map((m) => m[1]));
  const expected = new Set([...Object.keys(HELLO_FORBIDDEN), "<backend>.bin"]);
  for (const b of BACKENDS) {
    for (const key of Object.keys(b.config?.external ?? {})) {
      if (key !== "bin") expected.add(`${b.name}.${key}`);
    }
  }
  assert.deepEqual([...named].sort(), [...expected].sort(), list);
});

Deno.test("README's timings are docs/performance.md's, with the command that printed them", () => {
  const use = section(readme(), "Use");
  const at = use.indexOf("How long it takes");
  assert.ok(at >= 0, "the README says how long it takes");
  const paragraph = use.slice(at, use.indexOf("\n\n", at));
  const figures = paragraph.match(/\d+(\.\d+)?(–\d+)? s\b|load average of [\d–]+/g) ?? [];
  assert.ok(figures.length >= 6, paragraph);
  const perf = section(doc("docs/performance.md"), "A child's pane with the real OpenCode TUI");
  for (const f of paragraph.match(/\d+\.\d+ s\b/g) ?? []) {
    assert.ok(perf.includes(f), `${f} is in docs/performance.md`);
  }
  const command = codeBlocks(use, "sh").flat().find((l) => l.includes("e2e_tui2_test.ts"));
  assert.ok(command && perf.includes(command.replace(/\s+#.*$/, "")), command);
});
