/**
 * The machine's new duties: a child's live state on its pane (rate-limited, last state wins), a
 * failed pane held and closed as `failed`, `exclude` and the `max_panes` queue. Pure: no clock,
 * no backend.
 */

import assert from "node:assert/strict";
import {
  admissions,
  type Effect,
  type MachineConfig,
  type MachineEvent,
  newRecord,
  type PaneView,
  type SessionRecord,
  transition,
} from "../../lib/session/machine/mod.ts";
import { compileGlob } from "../../lib/sys/glob.ts";
import { cleanTitle, validatePaneId, validateSessionId } from "../../lib/sys/validate.ts";
import { createRandom, hostileString } from "../helpers/hostile.ts";

const CFG: MachineConfig = {
  idleCloseDelayMs: 3000,
  minPaneLifetimeMs: 5000,
  closeRetries: 2,
  closeRetryDelayMs: 200,
  recheck: false,
  readiness: false,
};

const P1 = validatePaneId("%1");

function run(
  events: Array<[MachineEvent, number]>,
  record: SessionRecord = newRecord(validateSessionId("ses_c"), "ses_p", "map the repository"),
  config: MachineConfig = CFG,
): { record: SessionRecord; effects: Effect[] } {
  const effects: Effect[] = [];
  for (const [event, now] of events) {
    const t = transition(record, event, now, config);
    record = t.record;
    effects.push(...t.effects);
  }
  return { record, effects };
}

/** Opens a pane at t=100 showing what the child was then. */
const opened: Array<[MachineEvent, number]> = [
  [{ type: "created" }, 0],
  [{ type: "spawned", paneId: P1, backend: "tmux" }, 100],
];

const sent = (effects: readonly Effect[]): PaneView[] =>
  effects.flatMap((e) => (e.type === "set_status" ? [e.view] : []));
const titles = (effects: readonly Effect[]) => sent(effects).map((v) => v.title);

/**
 * Drives a record like the loop does: runs each event, and fires the status timer whenever an
 * armed one is due before the next event.
 */
function drive(
  events: Array<[MachineEvent, number]>,
  config: MachineConfig = CFG,
): { record: SessionRecord; effects: Effect[] } {
  let record = newRecord(validateSessionId("ses_c"), "ses_p", "map the repository");
  const effects: Effect[] = [];
  let timer: number | null = null;
  const apply = (event: MachineEvent, now: number) => {
    const t = transition(record, event, now, config);
    record = t.record;
    for (const e of t.effects) {
      effects.push(e);
      if (e.type === "arm_status") timer = e.at;
      if (e.type === "disarm_status") timer = null;
    }
  };
  for (const [event, now] of events) {
    while (timer !== null && timer <= now) {
      const at: number = timer;
      timer = null;
      apply({ type: "status_due" }, at);
    }
    apply(event, now);
  }
  while (timer !== null) {
    const at: number = timer;
    timer = null;
    apply({ type: "status_due" }, at);
  }
  return { record, effects };
}

// ---------------------------------------------------------------- live status

Deno.test("transition() shows busy then idle on an open pane, with the marker before the title", () => {
  const { effects } = drive([
    ...opened,
    [{ type: "status", status: "busy" }, 2000],
    [{ type: "status", status: "idle" }, 4000],
  ]);
  assert.deepEqual(titles(effects), ["[busy] map the repository", "[idle] map the repository"]);
  assert.deepEqual(sent(effects).map((v) => [v.state, v.since]), [["busy", 2000], ["idle", 4000]]);
});

Deno.test("transition() sends at most one view a second under busy/idle flapping 10 times a second, and the last state wins", () => {
  const flaps: Array<[MachineEvent, number]> = [];
  for (let i = 0; i < 50; i++) {
    flaps.push([{ type: "status", status: i % 2 === 0 ? "busy" : "idle" }, 2000 + i * 100]);
  }
  const { effects } = drive([...opened, ...flaps]);
  const at: number[] = [];
  let now = 0;
  for (const e of effects) {
    if (e.type === "arm_status") now = e.at;
    if (e.type === "set_status") at.push(now);
  }
  const views = sent(effects);
  // 5 s of flapping: the first change at once, then one per armed second at most.
  assert.ok(views.length <= 7, `${views.length} views sent`);
  for (let i = 1; i < at.length; i++) assert.ok(at[i] - at[i - 1] >= 1000 || at[i] === 0);
  // The last event (i = 49) was idle: that is what the pane shows in the end.
  assert.equal(views.at(-1)?.state, "idle");
  assert.equal(views.at(-1)?.since, 2000 + 49 * 100);
});

Deno.test("transition() arms the status timer once per interval, never twice", () => {
  const { effects } = run([
    ...opened,
    [{ type: "status", status: "busy" }, 150],
    [{ type: "status", status: "idle" }, 200],
    [{ type: "status", status: "busy" }, 300],
  ]);
  assert.deepEqual(effects.filter((e) => e.type === "arm_status"), [{
    type: "arm_status",
    at: 1100,
  }]);
  assert.deepEqual(sent(effects), []);
});

Deno.test("transition() shows a retry with its attempt, and busy again once it ends", () => {
  const { effects, record } = drive([
    ...opened,
    [{ type: "status", status: "busy" }, 2000],
    [{ type: "status", status: "busy", retry: 2 }, 4000],
    [{ type: "status", status: "busy", retry: 3 }, 6000],
    [{ type: "status", status: "busy", retry: 0 }, 8000],
    [{ type: "status", status: "busy" }, 10000],
  ]);
  assert.deepEqual(titles(effects), [
    "[busy] map the repository",
    "[retry 2] map the repository",
    "[retry 3] map the repository",
    "[retry] map the repository",
    "[busy] map the repository",
  ]);
  // A retry is activity: it opened nothing and closed nothing.
  assert.equal(record.activity, "busy");
  assert.equal(effects.filter((e) => e.type === "spawn").length, 1);
});

Deno.test("transition() keeps an error shown through the idle that follows it, until busy", () => {
  const { effects } = drive([
    ...opened,
    [{ type: "status", status: "busy" }, 2000],
    [{ type: "error" }, 4000],
    [{ type: "status", status: "idle" }, 4010],
    [{ type: "poll", status: "absent", at: 5000 }, 5010],
    [{ type: "status", status: "busy" }, 8000],
  ]);
  assert.deepEqual(sent(effects).map((v) => v.state), ["busy", "error", "busy"]);
});

Deno.test("transition() takes the live state from polls, but not from one sent before the last event", () => {
  const { effects } = drive([
    ...opened,
    [{ type: "poll", status: "busy", at: 1900, retry: 1 }, 2000],
    [{ type: "status", status: "idle" }, 3000],
    // Sent at 2900, before the idle event: stale.
    [{ type: "poll", status: "busy", at: 2900 }, 3050],
    [{ type: "poll", status: "absent", at: 6000 }, 6050],
    [{ type: "poll", status: "busy", at: 9000 }, 9050],
  ]);
  assert.deepEqual(sent(effects).map((v) => v.state), ["retry", "idle", "busy"]);
});

Deno.test("transition() leaves the marker off with status_in_title false, and still sends the state", () => {
  const { effects } = drive([...opened, [{ type: "status", status: "busy" }, 2000]], {
    ...CFG,
    statusInTitle: false,
  });
  assert.deepEqual(sent(effects).map((v) => [v.title, v.state]), [["map the repository", "busy"]]);
});

Deno.test("transition() keeps a pane title with its marker at most 60 characters, hostile titles clean", () => {
  const r = createRandom();
  const raws = ["x".repeat(200), "ü".repeat(100), "\u001b]0;pwned\u0007", "#{pane_id}#[fg=red]"];
  for (let i = 0; i < 200; i++) raws.push(hostileString(r));
  for (const raw of raws) {
    const record = newRecord(validateSessionId("ses_c"), "ses_p", cleanTitle(raw));
    const start = run(opened, record);
    const t = transition(start.record, { type: "status", status: "busy", retry: 999 }, 3000, CFG);
    const [view] = sent(t.effects);
    assert.ok(Array.from(view.title).length <= 60, view.title);
    assert.doesNotMatch(view.title, /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u);
    assert.ok(view.title.startsWith("[retry 999]"), view.title);
  }
});

Deno.test("transition() sends the adopted pane its view at once", () => {
  const { effects } = run([[{ type: "adopted", paneId: P1, backend: "tmux" }, 50]]);
  assert.deepEqual(titles(effects), ["[busy] map the repository"]);
});

Deno.test("transition() disarms the status timer when the pane closes", () => {
  const { effects } = run([
    ...opened,
    [{ type: "status", status: "busy" }, 200],
    [{ type: "deleted" }, 300],
  ]);
  assert.deepEqual(effects.filter((e) => e.type.endsWith("_status")).map((e) => e.type), [
    "arm_status",
    "disarm_status",
  ]);
  assert.deepEqual(run([[{ type: "status_due" }, 5]]).effects, []);
});

Deno.test("transition() reads a view sent to a pane that is gone as gone, once", () => {
  const { record, effects } = run([
    ...opened,
    [{ type: "status", status: "busy" }, 1500],
    [{ type: "gone", paneId: P1 }, 2000],
    [{ type: "gone", paneId: P1 }, 2001],
    // A retry of a busy child is no busy transition: no reopen, no view for the gone pane.
    [{ type: "status", status: "busy", retry: 1 }, 2002],
  ]);
  assert.deepEqual(record.state, { kind: "dormant", why: "gone" });
  assert.equal(effects.filter((e) => e.type === "emit").length, 2); // opened, closed gone
  assert.deepEqual(titles(effects), ["[busy] map the repository"]);
});

// ---------------------------------------------------------------- failed panes

const failedCfg: MachineConfig = { ...CFG, failedHoldMs: 30_000 };

Deno.test("transition() holds a failed pane for failed_pane_hold_ms, then closes it as failed", () => {
  const { record, effects } = drive([
    ...opened,
    [{ type: "status", status: "busy" }, 2000],
    [{ type: "exited", paneId: P1, code: 1, present: true }, 4000],
  ], failedCfg);
  assert.equal(record.state.kind, "held");
  assert.deepEqual(effects.filter((e) => e.type === "arm"), [{ type: "arm", at: 34_000 }]);
  assert.deepEqual(sent(effects).at(-1), {
    title: "[failed] map the repository",
    state: "failed",
    exitCode: 1,
    since: 4000,
  });
  const closing = run([[{ type: "timer" }, 34_000]], record, failedCfg);
  assert.deepEqual(closing.effects.at(-1), { type: "close", paneId: P1, reason: "failed" });
  const closed = run([[{ type: "closed" }, 34_100]], closing.record, failedCfg);
  assert.deepEqual(closed.record.state, { kind: "dormant", why: "failed" });
  assert.deepEqual(
    closed.effects.find((e) => e.type === "emit"),
    {
      type: "emit",
      message: { type: "pane.closed", sessionID: "ses_c", paneId: "%1", reason: "failed" },
    },
  );
});

Deno.test("transition() never reopens a failed pane in a loop: once per busy transition", () => {
  const held = drive([
    ...opened,
    [{ type: "status", status: "busy" }, 2000],
    [{ type: "exited", paneId: P1, code: 1, present: true }, 4000],
  ], failedCfg).record;
  const after = run(
    [
      [{ type: "timer" }, 34_000],
      [{ type: "closed" }, 34_100],
      // Still busy: polls and repeated events open nothing.
      [{ type: "poll", status: "busy", at: 35_000 }, 35_010],
      [{ type: "status", status: "busy" }, 36_000],
      [{ type: "poll", status: "busy", at: 37_000, retry: 1 }, 37_010],
    ],
    held,
    failedCfg,
  );
  assert.equal(after.effects.filter((e) => e.type === "spawn").length, 0);
  // A change to idle, then to busy: one reopen.
  const again = run(
    [
      [{ type: "status", status: "idle" }, 40_000],
      [{ type: "status", status: "busy" }, 41_000],
      [{ type: "status", status: "busy" }, 41_100],
    ],
    after.record,
    failedCfg,
  );
  assert.equal(again.effects.filter((e) => e.type === "spawn").length, 1);
});

Deno.test("transition() closes a failed pane at once with failed_pane_hold_ms 0", () => {
  const { effects } = run(
    [...opened, [{ type: "exited", paneId: P1, code: 7, present: true }, 4000]],
    undefined,
    { ...CFG, failedHoldMs: 0 },
  );
  assert.deepEqual(effects.at(-1), { type: "close", paneId: P1, reason: "failed" });
});

Deno.test("transition() reports a failed pane that went with its program as failed, not gone", () => {
  const { record, effects } = run(
    [...opened, [{ type: "exited", paneId: P1, code: 1, present: false }, 4000]],
    undefined,
    failedCfg,
  );
  assert.deepEqual(record.state, { kind: "dormant", why: "failed" });
  assert.deepEqual(effects.slice(-5), [
    { type: "disarm" },
    { type: "end_survivor", paneId: P1 },
    { type: "store_remove", paneId: P1 },
    {
      type: "emit",
      message: { type: "pane.closed", sessionID: "ses_c", paneId: "%1", reason: "failed" },
    },
    { type: "layout" },
  ]);
});

Deno.test("transition() reports a held pane closed behind muxbridge's back as failed", () => {
  const held = run(
    [...opened, [{ type: "exited", paneId: P1, code: 1, present: true }, 4000]],
    undefined,
    failedCfg,
  );
  const { record, effects } = run([[{ type: "gone", paneId: P1 }, 5000]], held.record, failedCfg);
  assert.deepEqual(record.state, { kind: "dormant", why: "failed" });
  assert.ok(
    effects.some((e) =>
      e.type === "emit" && e.message.type === "pane.closed" && e.message.reason === "failed"
    ),
  );
});

Deno.test("transition() closes a held pane at once on delete and at shutdown", () => {
  const held = run(
    [...opened, [{ type: "exited", paneId: P1, code: 1, present: true }, 4000]],
    undefined,
    failedCfg,
  );
  assert.deepEqual(run([[{ type: "deleted" }, 5000]], held.record).effects.at(-1), {
    type: "close",
    paneId: P1,
    reason: "deleted",
  });
  assert.deepEqual(
    run([[{ type: "shutdown", closePanes: true }, 5000]], held.record).effects.at(-1),
    { type: "close", paneId: P1, reason: "shutdown" },
  );
});

// ---------------------------------------------------------------- exclude

const exclude = (...patterns: string[]) => ({
  ...CFG,
  exclude: patterns.map((pattern) => ({
    pattern,
    test: (t: string) => compileGlob(pattern).test(t),
  })),
});

Deno.test("transition() gives an excluded agent no pane and says so once", () => {
  const child = newRecord(validateSessionId("ses_c"), "ses_p", "map it", undefined, "explore");
  const { record, effects } = run(
    [
      [{ type: "created" }, 0],
      [{ type: "status", status: "busy" }, 10],
      [{ type: "status", status: "idle" }, 20],
      [{ type: "status", status: "busy" }, 30],
    ],
    child,
    exclude("EXPL*"),
  );
  assert.deepEqual(record.state, { kind: "dormant", why: "excluded" });
  assert.deepEqual(effects, [{
    type: "emit",
    message: {
      type: "pane.skipped",
      sessionID: "ses_c",
      reason: "excluded",
      hint:
        'Its agent "explore" matches the exclude pattern "EXPL*"; remove the pattern from exclude to give it a pane',
    },
  }]);
});

Deno.test("transition() excludes by title too, and opens a child no pattern matches", () => {
  const hit = run([[{ type: "created" }, 0]], undefined, exclude("*repo*"));
  assert.equal(hit.record.state.kind, "dormant");
  const miss = run([[{ type: "created" }, 0]], undefined, exclude("explore", "*review*"));
  assert.deepEqual(miss.effects, [{ type: "spawn" }]);
});

// ---------------------------------------------------------------- max_panes

const queued = (id: string, config: MachineConfig) =>
  run([[{ type: "created" }, 0]], newRecord(validateSessionId(id), "ses_p", id), config).record;

Deno.test("transition() queues a child when max_panes is set and opens it once admitted", () => {
  const config = { ...CFG, maxPanes: 1 };
  const record = queued("ses_q", config);
  assert.deepEqual(record.state, { kind: "queued", since: 0, reported: false });
  const told = run(
    [
      [{ type: "waiting", position: 2 }, 5],
      [{ type: "waiting", position: 1 }, 6],
    ],
    record,
    config,
  );
  assert.deepEqual(told.effects, [{
    type: "emit",
    message: {
      type: "pane.skipped",
      sessionID: "ses_q",
      reason: "max_panes",
      hint:
        "1 child panes are open (max_panes); this child is number 2 in the queue and gets a pane when one closes",
      position: 2,
    },
  }]);
  assert.deepEqual(run([[{ type: "admitted" }, 9]], told.record, config).effects, [{
    type: "spawn",
  }]);
});

Deno.test("transition() drops a queued child that goes idle, and queues it again when busy", () => {
  const config = { ...CFG, maxPanes: 1 };
  const idle = run([[{ type: "status", status: "idle" }, 5]], queued("ses_q", config), config);
  assert.deepEqual(idle.record.state, { kind: "dormant", why: "idle" });
  const busy = run([[{ type: "status", status: "busy" }, 9]], idle.record, config);
  assert.equal(busy.record.state.kind, "queued");
});

Deno.test("admissions() admits queued children in order into the free places only", () => {
  const config = { ...CFG, maxPanes: 2 };
  const open = run(opened, newRecord(validateSessionId("ses_open"), "ses_p", "o"), config);
  // With max_panes the created child queued: admit it to get a pane as the others do.
  const openRecord = run(
    [[{ type: "admitted" }, 1], [{ type: "spawned", paneId: P1, backend: "tmux" }, 2]],
    open.record,
    config,
  ).record;
  assert.equal(openRecord.state.kind, "open");
  const q = ["ses_q1", "ses_q2", "ses_q3"].map((id, i) =>
    run([[{ type: "created" }, 10 + i]], newRecord(validateSessionId(id), "ses_p", id), config)
      .record
  );
  const held = run(
    [[{ type: "exited", paneId: P1, code: 1, present: true }, 20]],
    { ...openRecord, id: validateSessionId("ses_held") },
    { ...config, failedHoldMs: 1000 },
  ).record;
  assert.equal(held.state.kind, "held");
  const decided = admissions([openRecord, held, ...q], 2);
  // One place used (the held pane is no live pane): one admitted, the others told their place.
  assert.deepEqual(decided.admit, ["ses_q1"]);
  assert.deepEqual(decided.waiting, [{ id: "ses_q2", position: 1 }, { id: "ses_q3", position: 2 }]);
  assert.deepEqual(admissions([openRecord, ...q], undefined).admit, ["ses_q1", "ses_q2", "ses_q3"]);
});

Deno.test("admissions() serves the queue in the order children were queued, not the order they were first seen", () => {
  const config = { ...CFG, maxPanes: 1 };
  // First seen q1, q2, q3; queued at 30, 10 and 20 (q1 went idle and busy again, say).
  const q = [["ses_q1", 30], ["ses_q2", 10], ["ses_q3", 20]].map(([id, at]) =>
    run(
      [[{ type: "created" }, at as number]],
      newRecord(validateSessionId(id as string), "ses_p", id as string),
      config,
    )
      .record
  );
  assert.deepEqual(q.map((r) => r.state.kind === "queued" && r.state.since), [30, 10, 20]);
  const decided = admissions(q, 1);
  assert.deepEqual(decided.admit, ["ses_q2"]);
  assert.deepEqual(decided.waiting, [{ id: "ses_q3", position: 1 }, { id: "ses_q1", position: 2 }]);
  assert.deepEqual(admissions(q, 3).admit, ["ses_q2", "ses_q3", "ses_q1"]);
});
