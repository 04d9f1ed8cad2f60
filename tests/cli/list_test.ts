/**
 * `muxbridge list` as a user runs it: the records a bridge wrote in a private state directory,
 * each child's live state and how long it has been in it.
 */

import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createPaneStore } from "../../lib/session/pane_store.ts";
import { runCli } from "../helpers/cli_process.ts";

Deno.test("list shows each owned pane with its child's live state and how long, plain and --json", async () => {
  const dir = mkdtempSync(join(tmpdir(), "muxbridge-list-"));
  try {
    const state = join(dir, "state");
    const store = createPaneStore(state);
    const since = new Date(Date.now() - 65_000).toISOString();
    const base = {
      backend: "tmux" as const,
      openedAt: "2026-08-30T12:00:00.000Z",
      owner: "4242:100",
    };
    store.put({ ...base, sessionId: "ses_busy", paneId: "%3", title: "map the repo" });
    store.put({
      ...base,
      sessionId: "ses_retry",
      paneId: "%4",
      title: "retrying",
      status: { state: "retry", since, attempt: 2 },
    });
    store.put({
      ...base,
      sessionId: "ses_failed",
      paneId: "%5",
      title: "dead server",
      status: { state: "failed", since, exitCode: 1 },
    });
    const env = { HOME: dir, MUXBRIDGE_STATE_DIR: state };
    const json = await runCli(["list", "--json"], { env });
    assert.equal(json.code, 0, json.stderr);
    const rows = JSON.parse(json.stdout) as Array<Record<string, unknown>>;
    const byId = new Map(rows.map((r) => [r.sessionId, r]));
    assert.equal(byId.get("ses_busy")?.state, "unknown");
    assert.equal(byId.get("ses_busy")?.forMs, undefined);
    assert.equal(byId.get("ses_retry")?.state, "retry");
    assert.equal(byId.get("ses_retry")?.attempt, 2);
    assert.equal(byId.get("ses_retry")?.since, since);
    assert.ok((byId.get("ses_retry")?.forMs as number) >= 65_000);
    assert.equal(byId.get("ses_failed")?.exitCode, 1);
    const plain = await runCli(["list"], { env });
    assert.equal(plain.code, 0, plain.stderr);
    assert.match(plain.stdout, /\t%4\tses_retry\tretry 2 1m\d\ds\t/);
    assert.match(plain.stdout, /\t%5\tses_failed\tfailed \(exit 1\) 1m\d\ds\t/);
    assert.match(plain.stdout, /\t%3\tses_busy\tunknown\t/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
