import assert from "node:assert/strict";
import { createRealClock } from "../../lib/sys/clock.ts";
import type { LineItem } from "../../lib/sys/line_reader.ts";
import { createLineProcessOpener, type LineProcessExit } from "../../lib/sys/line_process.ts";
import { createProcesses } from "../../lib/sys/processes.ts";
import { until } from "../helpers/until.ts";

// Real programs; no wall-clock bound is asserted: waits are conditions on what the program
// wrote or on the process table.

const open = createLineProcessOpener();
const clock = createRealClock();
const processes = createProcesses();

function collect() {
  const items: LineItem[] = [];
  const stderr: string[] = [];
  const exits: LineProcessExit[] = [];
  return {
    items,
    stderr,
    exits,
    options: {
      maxLineBytes: 64,
      onItem: (i: LineItem) => items.push(i),
      onStderr: (l: string) => stderr.push(l),
      onExit: (e: LineProcessExit) => exits.push(e),
    },
  };
}

Deno.test("line process: echoes lines back in order, reports stderr lines and the exit once", async () => {
  const c = collect();
  const p = open(
    ["sh", "-c", 'while read -r l; do echo "got $l"; done; echo bye >&2; exit 3'],
    c.options,
  );
  assert.ok(p.write("a\nb\n"));
  await until("two answers", () => c.items.length === 2);
  p.end();
  const exit = await p.exited;
  assert.equal(exit.code, 3);
  assert.deepEqual(c.items.map((i) => i.kind === "line" ? i.line : i.kind), ["got a", "got b"]);
  assert.deepEqual(c.stderr, ["bye"]);
  assert.equal(exit.stderr, "bye\n");
  assert.equal(c.exits.length, 1);
  assert.equal(p.write("late\n"), false, "nothing is written after the exit");
});

Deno.test("line process: a line over the cap is reported as too long, never buffered, and the next line arrives", async () => {
  const c = collect();
  const p = open(["sh", "-c", "head -c 100000 /dev/zero | tr '\\0' x; echo; echo next"], c.options);
  await p.exited;
  assert.equal(c.items[0].kind, "too_long");
  assert.equal((c.items[0] as { bytes: number }).bytes, 100000);
  assert.deepEqual(c.items[1], { kind: "line", line: "next", lineNo: 2 });
});

Deno.test("line process: stop() ends a program that ignores end of input and SIGTERM, with everything it started", async () => {
  const c = collect();
  const dir = await Deno.makeTempDir();
  try {
    const p = open([
      "sh",
      "-c",
      `trap '' TERM; sleep 1000 & echo $! > ${dir}/child; echo ready; while :; do sleep 1; done`,
    ], c.options);
    await until("ready", () => c.items.length === 1);
    const grandchild = Number(await Deno.readTextFile(`${dir}/child`));
    const exit = await p.stop(clock, 200);
    assert.ok(exit, "it ended");
    assert.equal(exit.signal, "SIGKILL");
    await until("the grandchild is gone", () => !processes.alive(grandchild));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("line process: stop() of a program that exits on end of input needs no signal", async () => {
  const c = collect();
  const p = open(["cat"], c.options);
  const exit = await p.stop(clock, 5000);
  assert.deepEqual(exit, { code: 0, signal: null, stderr: "" });
});

Deno.test("line process: a missing program is reported as a start error", async () => {
  const c = collect();
  const p = open(["/nonexistent/muxbridge-provider"], c.options);
  const exit = await p.exited;
  assert.equal(exit.startError, "ENOENT");
  assert.equal(p.write("x\n"), false);
  assert.equal(c.exits.length, 1);
});
