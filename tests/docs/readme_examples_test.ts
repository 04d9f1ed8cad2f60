/**
 * The documentation's examples, run as written:
 *
 * - README "Commands": every line of the examples block, in order, inside a private tmux server with a
 *   stand-in OpenCode server (the fake server, knowing every session) where the README says
 *   `http://127.0.0.1:4096`, `opencode` a stand-in that prints its version or waits like the
 *   TUI, and a temporary HOME and XDG folders (`install` writes the plugin there, and nowhere
 *   else); each must exit 0.
 * - docs/development.md: `npx deno task start -- --help` shows the help (a leading `--` is
 *   accepted).
 * - docs/protocol.md, "Rules a plugin can rely on": every transcript, in the situation its first comment names; stdout must be
 *   exactly the `# {…}` lines shown (each shown field equal, `"…"` any text, `"abc…"` text
 *   starting `abc`) and the exit code the `# exit N` line (else 0).
 */

import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { serveFakeOpencode } from "../helpers/fake_opencode_server.ts";
import { codeBlocks, doc, readme, section } from "./_readme.ts";
import { Sandbox } from "./_sandbox.ts";

const SHOWN_URL = "http://127.0.0.1:4096";

/** The lines of the Commands section's examples block. */
function commandExamples(): string[] {
  const blocks = codeBlocks(section(readme(), "Commands"), "sh");
  const examples = blocks.flat().filter((l) => l.startsWith("muxbridge "));
  assert.ok(examples.length >= 5, `the examples were read: ${JSON.stringify(examples)}`);
  return examples;
}

/** One transcript of docs/protocol.md. */
interface Transcript {
  where: string;
  script: string;
  stdout: Array<Record<string, unknown>>;
  exit: number;
}

function transcripts(): Transcript[] {
  const blocks = codeBlocks(section(doc("docs/protocol.md"), "Rules a plugin can rely on"), "sh");
  assert.ok(blocks.length >= 5, `the transcripts were read (${blocks.length})`);
  return blocks.map((lines) => {
    const [first, ...rest] = lines;
    assert.match(first, /^# /, `a transcript starts with where it runs: ${lines.join("\n")}`);
    const t: Transcript = { where: first.slice(2), script: "", stdout: [], exit: 0 };
    const script: string[] = [];
    for (const line of rest) {
      if (line.startsWith("# {")) t.stdout.push(JSON.parse(line.slice(2)));
      else if (/^# exit \d+$/.test(line)) t.exit = Number(line.slice(7));
      else if (line.startsWith("#")) throw new Error(`transcript line not understood: ${line}`);
      else script.push(line);
    }
    t.script = script.join("\n");
    return t;
  });
}

/** Whether an actual value matches a shown one (`"…"` any text, `"abc…"` a prefix). */
function matches(shown: unknown, actual: unknown): boolean {
  if (typeof shown === "string" && shown.endsWith("…")) {
    return typeof actual === "string" && actual.startsWith(shown.slice(0, -1));
  }
  return JSON.stringify(shown) === JSON.stringify(actual);
}

Deno.test({
  name: "README Commands examples: each runs as written and exits 0",
  async fn(t) {
    const box = await Sandbox.create();
    const server = serveFakeOpencode();
    server.fake.knowAll = true;
    try {
      const bin = `${box.dir}/opencode`;
      await Deno.writeTextFile(
        bin,
        '#!/bin/sh\n[ "$1" = --version ] && { echo 1.18.33; exit 0; }\nexec sleep 600\n',
      );
      await Deno.chmod(bin, 0o755);
      for (const example of commandExamples()) {
        await t.step(example, async () => {
          const r = await box.run(example.replaceAll(SHOWN_URL, server.url), {
            where: "in tmux",
            shared: "commands",
            env: { MUXBRIDGE_OPENCODE_BIN: bin },
          });
          assert.equal(r.code, 0, JSON.stringify(r));
          // install and uninstall act on the sandbox's OpenCode folder, never the developer's.
          const plugin = `${box.dir}/shared-commands/config/opencode/plugin/muxbridge.js`;
          if (example.startsWith("muxbridge install ") && !example.includes("--dry-run")) {
            assert.ok(existsSync(plugin), `install wrote ${plugin}`);
          }
          if (example.startsWith("muxbridge uninstall ")) {
            assert.ok(!existsSync(plugin), `uninstall removed ${plugin}`);
          }
        });
      }
    } finally {
      await server.close();
      await box.close();
    }
  },
});

Deno.test("docs/development.md: `deno task start -- --help` shows the help", async () => {
  assert.match(
    section(doc("docs/development.md"), "Code layout and tasks"),
    /`npx deno task start -- --help`/,
  );
  const root = new URL("../../", import.meta.url).pathname;
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["task", "--quiet", "start", "--", "--help"],
    cwd: root,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stdout = new TextDecoder().decode(out.stdout);
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  assert.match(stdout, /^Usage: muxbridge <command> \[flags\]$/m);
});

Deno.test({
  name: "docs/protocol.md transcripts: each prints exactly the lines shown",
  async fn(t) {
    const box = await Sandbox.create();
    try {
      for (const tr of transcripts()) {
        const places = tr.where === "anywhere" ? ["outside a multiplexer", "in tmux"] : [tr.where];
        for (const where of places) {
          await t.step(`${tr.script} (${where})`, async () => {
            const r = await box.run(tr.script, { where });
            const what = JSON.stringify(r);
            assert.equal(r.code, tr.exit, `exit code: ${what}`);
            const lines = r.stdout.trimEnd().split("\n").map((l) => JSON.parse(l));
            assert.equal(lines.length, tr.stdout.length, `as many lines as shown: ${what}`);
            tr.stdout.forEach((shown, i) => {
              for (const [key, value] of Object.entries(shown)) {
                const actual = lines[i][key];
                assert.ok(matches(value, actual), `line ${i + 1} ${key}: ${what}`);
              }
            });
          });
        }
      }
    } finally {
      await box.close();
    }
  },
});
