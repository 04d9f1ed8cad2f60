/**
 * docs/development.md: the demo transcript is what a real `muxbridge demo` prints (captured by
 * scripts/capture_demo.ts): the test runs it again and compares everything but the tmux version
 * and the socket path, pictures included. It also checks what the demo promises at its end: the
 * private tmux server is stopped and its files, the socket among them, are removed.
 */

import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { stableDemo } from "../../scripts/capture_demo.ts";
import { fileWithBlock, readmeBlocks } from "../../scripts/_readme_blocks.ts";
import { codeBlocks } from "./_readme.ts";
import { Sandbox } from "./_sandbox.ts";

/** The captured transcript, from the page that holds it. */
function captured(): string {
  const { file, text: page } = fileWithBlock("demo");
  const block = readmeBlocks(page, file).find((b) => b.name === "demo");
  assert.ok(block, `${file} has the demo block`);
  assert.equal(block.how, "captured");
  const [text] = codeBlocks(block.body, "text");
  assert.ok(text, "the demo block holds a text fence");
  return text.join("\n");
}

Deno.test({
  name:
    "demo transcript: a real run prints it (but for the tmux version and socket path) and leaves no server or socket",
  async fn() {
    const box = await Sandbox.create();
    try {
      const tmp = `${box.dir}/tmp`;
      await Deno.mkdir(tmp);
      const r = await box.run("muxbridge demo", {
        where: "outside a multiplexer",
        env: { TMPDIR: tmp },
      });
      assert.equal(r.code, 0, r.stderr);
      assert.equal(stableDemo(r.stdout.trimEnd()), stableDemo(captured()));
      const socket = /private server -S ([^)]+)\)/.exec(r.stdout)?.[1];
      assert.ok(socket?.startsWith(`${tmp}/`), `the socket was in the demo's directory: ${socket}`);
      assert.ok(!existsSync(socket!), "the socket file is removed");
      assert.deepEqual([...Deno.readDirSync(tmp)], [], "the demo's directory is removed");
    } finally {
      await box.close();
    }
  },
});

Deno.test({
  name: "demo: Ctrl+C stops it with exit 130 and still removes its server and files",
  async fn() {
    const box = await Sandbox.create();
    try {
      const tmp = `${box.dir}/tmp`;
      await Deno.mkdir(tmp);
      const r = await box.run("muxbridge demo", {
        where: "Ctrl+C while it runs",
        env: { TMPDIR: tmp },
      });
      assert.equal(r.code, 130, JSON.stringify(r));
      assert.match(r.stdout, /done: the private tmux server is stopped and its files removed\n$/);
      assert.deepEqual([...Deno.readDirSync(tmp)], [], "the demo's directory is removed");
    } finally {
      await box.close();
    }
  },
});

Deno.test({
  name: "demo: a reader that stops early (`| head -3`) stops it, and it still removes its server",
  async fn() {
    const box = await Sandbox.create();
    try {
      const tmp = `${box.dir}/tmp`;
      await Deno.mkdir(tmp);
      // sh waits for every command of the pipeline, so the demo has ended when this returns.
      const r = await box.run("muxbridge demo | head -3", {
        where: "outside a multiplexer",
        env: { TMPDIR: tmp },
      });
      assert.equal(r.code, 0, JSON.stringify(r));
      assert.equal(r.stdout.split("\n").length, 4, r.stdout);
      // Stopped by the closed pipe (the usual case), or done before `head` closed it (only when
      // `head` was not scheduled for the demo's whole run).
      assert.match(r.stderr, /^(muxbridge: Interrupted: nothing reads stdout any more\n)?$/);
      assert.deepEqual([...Deno.readDirSync(tmp)], [], "the demo's directory is removed");
    } finally {
      await box.close();
    }
  },
});
