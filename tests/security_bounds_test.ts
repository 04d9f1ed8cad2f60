/**
 * Security findings about bounds (issue 17, item 6), reproduced as found: a `parentID` is a
 * session id like any other, a directory is at most 4 KiB, and one bridge tracks at most
 * `max_tracked_sessions` children (50k sessions with 4 KiB fields reached 770 MiB); a child
 * beyond the cap gets `pane.skipped` with reason `limit` and no record. (Memory itself is
 * measured by the speed benchmarks, not here.)
 */

import assert from "node:assert/strict";
import { resolveConfig } from "../lib/config/config.ts";
import { parseLine } from "../lib/bridge/protocol.ts";
import { loopHarness } from "./helpers/loop_harness.ts";
import { runCli } from "./helpers/cli_process.ts";
import { validateSessionId } from "../lib/sys/validate.ts";

const created = (info: Record<string, unknown>) =>
  JSON.stringify({ type: "session.created", properties: { sessionID: info.id, info } });

Deno.test("parseLine() refuses a parentID that is not a session id", () => {
  for (const parentID of ["x".repeat(4096), "ses_a;b", "../ses_p", "ses_" + "a".repeat(129)]) {
    const r = parseLine(created({ id: "ses_child1", parentID, title: "t", directory: "/w" }));
    assert.equal(r.kind, "invalid", parentID.slice(0, 20));
    assert.match(r.kind === "invalid" ? r.message : "", /parentID.*not a session id/);
  }
  for (const parentID of ["ses_parent1", "", null, undefined]) {
    assert.equal(
      parseLine(created({ id: "ses_child1", parentID, title: "t" })).kind,
      "created",
      String(parentID),
    );
  }
});

Deno.test("parseLine() refuses a directory over 4 KiB, and spawn --dir too", async () => {
  const long = `/${"d".repeat(4096)}`;
  const r = parseLine(created({ id: "ses_c1", parentID: "ses_p1", title: "t", directory: long }));
  assert.equal(r.kind, "invalid");
  assert.match(r.kind === "invalid" ? r.message : "", /directory/);
  assert.equal(
    parseLine(created({ id: "ses_c1", parentID: "ses_p1", title: "t", directory: long.slice(1) }))
      .kind,
    "created",
  );
  const cli = await runCli(
    ["spawn", "--session", "ses_c1", "--url", "http://127.0.0.1:9", "--dir", long],
    { env: { HOME: "/nonexistent", MUXBRIDGE_BACKEND: "none" } },
  );
  assert.equal(cli.code, 2, cli.stderr);
  assert.match(cli.stderr, /longer than 4096 characters/);
});

Deno.test("SessionLoop tracks at most max_tracked_sessions children; the next gets pane.skipped limit", async () => {
  const { loop, backend, clock, out } = loopHarness({
    flags: { max_tracked_sessions: 3, idle_close_delay_ms: 0, min_pane_lifetime_ms: 0 },
    ctx: { directory: "/w" },
  });
  assert.equal(resolveConfig({ env: () => undefined }).max_tracked_sessions, 10_000);
  const child = (n: number) => ({
    kind: "created" as const,
    info: {
      id: validateSessionId(`ses_c${n}`),
      parentId: validateSessionId("ses_p"),
      title: `c${n}`,
    },
  });
  for (let n = 1; n <= 5; n++) loop.handle(child(n));
  // An update of a child beyond the cap creates no record either, and says nothing new.
  loop.handle({ ...child(5), kind: "updated" });
  loop.handle({ kind: "status", sessionId: validateSessionId("ses_c4"), status: "busy" });
  await clock.advance(100);
  assert.equal(loop.records().length, 3);
  assert.equal(backend.panes.size, 3);
  assert.deepEqual(
    out.filter((m) => m.type === "pane.skipped").map((m) =>
      m.type === "pane.skipped" ? `${m.sessionID} ${m.reason}` : ""
    ),
    ["ses_c4 limit", "ses_c5 limit"],
  );
  await loop.shutdown(true);
});
