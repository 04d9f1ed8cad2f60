/**
 * `muxbridge list`: the plain table as a person reads it (table-tested on `listText`), and the
 * command as a user runs it: the records a bridge wrote in a private state directory, each
 * child's live state and how long, the owner as a pid and its program, `--json` as the contract
 * says.
 */

import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type ListRow, listText } from "../../lib/cli/commands/list.ts";
import { displayWidth, renderTable, truncate } from "../../lib/cli/commands/_table.ts";
import { createPaneStore } from "../../lib/session/pane_store.ts";
import { createProcesses, ownerStamp } from "../../lib/sys/processes.ts";
import { runCli } from "../helpers/cli_process.ts";

const ROW: ListRow = {
  sessionId: "ses_a",
  paneId: "%3",
  backend: "tmux",
  title: "map the repo",
  openedAt: "2026-08-30T12:00:00.000Z",
  owner: "6995:227182",
  state: "busy",
  since: "2026-08-30T12:00:01.000Z",
  forMs: 12_400,
};

/** The cells of each line, split where two or more spaces separate them. */
const cells = (text: string) => text.trimEnd().split("\n").map((l) => l.split(/ {2,}/));

Deno.test("listText() prints a header and one aligned row per pane", () => {
  const text = listText(
    [
      ROW,
      {
        ...ROW,
        sessionId: "ses_retrying",
        paneId: "%12",
        title: "retrying",
        state: "retry",
        attempt: 2,
        forMs: 65_000,
      },
      {
        ...ROW,
        sessionId: "ses_new",
        title: "",
        state: "unknown",
        since: undefined,
        forMs: undefined,
        owner: "cli",
      },
    ],
    new Map([["6995:227182", "6995 muxbridge"], ["cli", "muxbridge spawn"]]),
  );
  assert.deepEqual(cells(text), [
    ["SESSION", "TITLE", "PANE", "STATE", "FOR", "OWNER"],
    ["ses_a", "map the repo", "tmux %3", "busy", "12s", "6995 muxbridge"],
    ["ses_retrying", "retrying", "tmux %12", "retry 2", "1m05s", "6995 muxbridge"],
    ["ses_new", "-", "tmux %3", "unknown", "-", "muxbridge spawn"],
  ]);
  const lines = text.trimEnd().split("\n");
  for (const column of ["TITLE", "PANE", "STATE", "FOR", "OWNER"]) {
    const at = lines[0].indexOf(column);
    for (const line of lines.slice(1)) {
      assert.notEqual(line[at], " ", `${column} starts at ${at}: ${JSON.stringify(line)}`);
      assert.equal(line[at - 1], " ", `${column} starts at ${at}: ${JSON.stringify(line)}`);
    }
  }
  assert.ok(lines.every((l) => l === l.trimEnd()), "no blanks at the ends of lines");
});

Deno.test("listText() shows each state with its detail and each duration the human way", () => {
  const state = (r: Partial<ListRow>) =>
    cells(listText([{ ...ROW, ...r }], new Map()))[1].slice(3, 5);
  const cases: Array<[Partial<ListRow>, string[]]> = [
    [{ state: "idle", forMs: 0 }, ["idle", "0s"]],
    [{ state: "busy", forMs: 59_999 }, ["busy", "59s"]],
    [{ state: "retry", attempt: 0, forMs: 60_000 }, ["retry", "1m00s"]],
    [{ state: "retry", attempt: 3, forMs: 3_599_000 }, ["retry 3", "59m59s"]],
    [{ state: "failed", exitCode: 1, forMs: 8_000 }, ["failed (exit 1)", "8s"]],
    [{ state: "error", forMs: 2 * 3_600_000 + 7 * 60_000 }, ["error", "2h07m"]],
    [{ state: "unknown", forMs: undefined }, ["unknown", "-"]],
  ];
  for (const [r, shown] of cases) assert.deepEqual(state(r), shown, JSON.stringify(r));
});

Deno.test("listText() marks a stuck pane and says what to do, once", () => {
  const text = listText(
    [{ ...ROW, stuck: true }, { ...ROW, sessionId: "ses_b", stuck: true }],
    new Map(),
  );
  assert.match(text.split("\n")[1], /busy \(stuck\)/);
  assert.equal(text.match(/muxbridge cleanup/g)?.length, 1);
  assert.ok(!listText([ROW], new Map()).includes("stuck"));
});

Deno.test("listText() shows the owner stamp itself when it has no better name", () => {
  assert.equal(cells(listText([ROW], new Map()))[1][5], "6995:227182");
});

Deno.test("listText() cuts a long title and keeps the columns straight after a wide one", () => {
  const long = "x".repeat(60);
  const wide = "レビュー 🦀 review";
  const text = listText([{ ...ROW, title: long }, { ...ROW, title: wide }], new Map());
  const lines = text.trimEnd().split("\n");
  assert.equal(cells(text)[1][1], `${"x".repeat(39)}…`);
  const at = (line: string) => displayWidth(line.slice(0, line.indexOf("tmux %3")));
  assert.equal(at(lines[1]), at(lines[2]), text);
  assert.equal(listText([], new Map()), "no owned panes\n");
});

Deno.test("displayWidth(), truncate() and renderTable() measure terminal columns", () => {
  assert.equal(displayWidth("abc"), 3);
  assert.equal(displayWidth("レビュー"), 8);
  assert.equal(displayWidth("🦀"), 2);
  assert.equal(displayWidth("e\u0301"), 1); // e + combining acute
  assert.equal(truncate("abcdef", 6), "abcdef");
  assert.equal(truncate("abcdefg", 6), "abcde…");
  assert.equal(truncate("レビューです", 6), "レビ…");
  assert.equal(renderTable(["A", "B"], [["レ", "x"], ["abc", ""]]), "A    B\nレ   x\nabc\n");
});

Deno.test("list shows each owned pane with its child's live state, how long, and its owner, plain and --json", async () => {
  const dir = mkdtempSync(join(tmpdir(), "muxbridge-list-"));
  try {
    const state = join(dir, "state");
    const store = createPaneStore(state);
    const since = new Date(Date.now() - 65_000).toISOString();
    // This test's own process is a live owner; a pid that cannot be running, an ended one.
    const live = ownerStamp(createProcesses());
    const program = readFileSync(`/proc/${Deno.pid}/comm`, "utf8").trim();
    const base = { backend: "tmux" as const, openedAt: "2026-08-30T12:00:00.000Z", owner: live };
    store.put({ ...base, sessionId: "ses_busy", paneId: "%3", title: "map the repo" });
    store.put({
      ...base,
      openedAt: "2026-08-30T12:00:01.000Z",
      sessionId: "ses_retry",
      paneId: "%4",
      title: "retrying",
      owner: "4194300:1",
      status: { state: "retry", since, attempt: 2 },
    });
    store.put({
      ...base,
      openedAt: "2026-08-30T12:00:02.000Z",
      sessionId: "ses_failed",
      paneId: "%5",
      title: "dead server",
      owner: "cli",
      status: { state: "failed", since, exitCode: 1 },
    });
    const env = { HOME: dir, MUXBRIDGE_STATE_DIR: state };
    const json = await runCli(["list", "--json"], { env });
    assert.equal(json.code, 0, json.stderr);
    assert.equal(json.stderr, "");
    const rows = JSON.parse(json.stdout) as Array<Record<string, unknown>>;
    const byId = new Map(rows.map((r) => [r.sessionId, r]));
    // The contract's fields, the owner still the stamp.
    for (const r of rows) {
      for (const key of ["sessionId", "paneId", "backend", "title", "openedAt", "owner"]) {
        assert.equal(typeof r[key], "string", key);
      }
    }
    assert.equal(byId.get("ses_busy")?.owner, live);
    assert.equal(byId.get("ses_busy")?.state, "unknown");
    assert.equal(byId.get("ses_busy")?.forMs, undefined);
    assert.equal(byId.get("ses_retry")?.state, "retry");
    assert.equal(byId.get("ses_retry")?.attempt, 2);
    assert.equal(byId.get("ses_retry")?.since, since);
    assert.ok((byId.get("ses_retry")?.forMs as number) >= 65_000);
    assert.equal(byId.get("ses_failed")?.exitCode, 1);

    const plain = await runCli(["list"], { env });
    assert.equal(plain.code, 0, plain.stderr);
    assert.equal(plain.stderr, "");
    const table = cells(plain.stdout);
    assert.deepEqual(table[0], ["SESSION", "TITLE", "PANE", "STATE", "FOR", "OWNER"]);
    assert.deepEqual(table[1], [
      "ses_busy",
      "map the repo",
      "tmux %3",
      "unknown",
      "-",
      `${Deno.pid} ${program}`,
    ]);
    assert.deepEqual(table[2].slice(0, 4), ["ses_retry", "retrying", "tmux %4", "retry 2"]);
    assert.match(table[2][4], /^1m\d\ds$/);
    assert.equal(table[2][5], "4194300 (ended)");
    assert.deepEqual(table[3].slice(2, 4), ["tmux %5", "failed (exit 1)"]);
    assert.equal(table[3][5], "muxbridge spawn");
    assert.equal(table.length, 4);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
