/**
 * Diagnostic (not part of `deno task bench`): what a spawn's two pane records cost and where. A
 * spawn writes its pending record before the split and the pane's record after it, then removes
 * the pending one (`lib/session/lost_spawns.ts`); each write is a fresh private file renamed into
 * place (`writePrivateFile`). This times, in a temporary state directory on the file system of
 * `$TMPDIR` (the default `/tmp`), per operation: `PaneStore.put` and `remove`, the record's zod
 * check alone, the directory check every operation makes, and the bare file system steps the
 * write is made of.
 *
 * Run: `deno run -A bench/record_cost.ts [N]`
 *
 * @module
 */

import { closeSync, constants, openSync, renameSync, rmSync, writeSync } from "node:fs";
import { createPaneStore, PaneRecordSchema } from "../lib/session/pane_store.ts";
import { ensurePrivateDir, ensurePrivateSubdir } from "../lib/sys/private_fs.ts";
import { stats } from "./_harness.ts";

if (import.meta.main) {
  const n = Number(Deno.args[0] ?? 300);
  const dir = await Deno.makeTempDir({ prefix: "muxbridge-bench-records-" });
  try {
    const store = createPaneStore(dir);
    const root = ensurePrivateDir(dir);
    const panes = ensurePrivateSubdir(root, "panes");
    const token = (i: number) => i.toString(16).padStart(32, "0");
    const record = (i: number) => ({
      sessionId: "ses_benchRecord",
      paneId: `%${i}`,
      backend: "tmux",
      title: "child",
      openedAt: new Date().toISOString(),
      owner: "1234:5678",
      server: "http://127.0.0.1:4096",
      directory: "/home/u/project",
      pid: 4321,
      pidStart: "8765",
    });
    const pending = (i: number) => ({
      ...record(i),
      paneId: `pending:${token(i)}`,
      state: "pending" as const,
      token: token(i),
    });
    const rows: Array<[string, (i: number) => void]> = [
      ["PaneStore.put (pending record)", (i) => store.put(pending(i))],
      ["PaneStore.put (pane record)", (i) => store.put(record(i))],
      ["PaneStore.remove", (i) => store.remove("tmux", `pending:${token(i)}`)],
      ["  the record's zod check", (i) => PaneRecordSchema.parse(record(i))],
      ["  the state directory's check", () => ensurePrivateSubdir(root, "panes")],
      ["  create + write + close a new file", (i) => {
        const fd = openSync(
          `${panes}/.bench-${i}.tmp`,
          constants.O_WRONLY | constants.O_CREAT |
            constants.O_EXCL | constants.O_NOFOLLOW,
          0o600,
        );
        writeSync(fd, JSON.stringify(record(i)));
        closeSync(fd);
      }],
      ["  rename it into place", (i) => renameSync(`${panes}/.bench-${i}.tmp`, `${panes}/b${i}`)],
      ["  remove a file", (i) => rmSync(`${panes}/b${i}`, { force: true })],
    ];
    const samples = new Map<string, number[]>(rows.map(([label]) => [label, []]));
    // Rounds of every operation in turn, so drift hits them alike.
    for (let round = 0; round < 5; round++) {
      for (const [label, op] of rows) {
        const start = performance.now();
        for (let i = round * n; i < (round + 1) * n; i++) op(i);
        samples.get(label)!.push(((performance.now() - start) / n) * 1000);
      }
      for (let i = round * n; i < (round + 1) * n; i++) store.remove("tmux", `%${i}`);
    }
    console.log("| operation | µs each (median of 5 rounds) |\n|---|---|");
    for (const [label] of rows) {
      console.log(`| ${label} | ${stats(samples.get(label)!).median.toFixed(0)} |`);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}
