/**
 * A child that waits for the user (a permission request or a question): `waiting` on its pane at
 * once, announced once per wait (`attend`), cleared by each answer, by idle, by deletion and by a
 * server's list of pending requests, never stuck. Pure: the time is each event's `now`.
 */

import assert from "node:assert/strict";
import {
  type Effect,
  type MachineConfig,
  type MachineEvent,
  MAX_OPEN_REQUESTS,
  newRecord,
  type PaneView,
  type SessionRecord,
  transition,
} from "../../lib/session/machine/mod.ts";
import { charColumns } from "../../lib/session/machine/_columns.ts";
import { MAX_TITLE, validatePaneId, validateSessionId } from "../../lib/sys/validate.ts";

const CFG: MachineConfig = {
  idleCloseDelayMs: 3000,
  minPaneLifetimeMs: 5000,
  closeRetries: 2,
  closeRetryDelayMs: 200,
  recheck: false,
  readiness: false,
};

const P1 = validatePaneId("%1");
const asked = (id: string, what: "permission" | "question" = "permission"): MachineEvent => ({
  type: "attention",
  requestId: id,
  what,
  open: true,
});
const answered = (id: string): MachineEvent => ({
  type: "attention",
  requestId: id,
  what: "permission",
  open: false,
});
const busy: MachineEvent = { type: "status", status: "busy" };

/**
 * Runs events like the loop does, firing the status timer whenever an armed one is due before
 * the next event; returns the record and every effect with the time it came out.
 */
function drive(
  events: Array<[MachineEvent, number]>,
  config: MachineConfig = CFG,
  title = "map the repository",
): { record: SessionRecord; effects: Array<[Effect, number]> } {
  let record = newRecord(validateSessionId("ses_c"), "ses_p", title);
  const effects: Array<[Effect, number]> = [];
  let timer: number | null = null;
  const apply = (event: MachineEvent, now: number) => {
    const t = transition(record, event, now, config);
    record = t.record;
    for (const e of t.effects) {
      effects.push([e, now]);
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

const opened: Array<[MachineEvent, number]> = [
  [{ type: "created" }, 0],
  [busy, 10],
  [{ type: "spawned", paneId: P1, backend: "tmux" }, 100],
];

const views = (effects: ReadonlyArray<[Effect, number]>): Array<[PaneView, number]> =>
  effects.flatMap((
    [e, at],
  ) => (e.type === "set_status" ? [[e.view, at] as [PaneView, number]] : []));
const attends = (effects: ReadonlyArray<[Effect, number]>) =>
  effects.flatMap(([e, at]) => (e.type === "attend" ? [[e, at] as const] : []));

Deno.test("transition() shows [needs you] at once when the child asks, inside the rate limit too, and announces it once", () => {
  // The pane's busy view went out at 100; the ask at 300 does not wait for 1100.
  const { record, effects } = drive([...opened, [asked("per_1"), 300]]);
  const shown = views(effects);
  assert.deepEqual(shown.at(-1), [
    {
      title: "[needs you] map the repository",
      state: "waiting",
      waitingFor: "permission",
      since: 300,
    },
    300,
  ]);
  assert.deepEqual(attends(effects), [[{ type: "attend", paneId: P1, what: "permission" }, 300]]);
  assert.equal(record.attention.announced, true);
});

Deno.test("transition() goes back to busy once the request is answered, rate-limited, and announces the next wait anew", () => {
  const { record, effects } = drive([
    ...opened,
    [asked("per_1"), 300],
    [answered("per_1"), 500],
    [asked("per_2"), 5000],
    [answered("per_2"), 5200],
  ]);
  const shown = views(effects).map(([v, at]) => [v.state, at]);
  // The pane opened showing busy (at 100); waiting goes out at once, busy again a second after
  // the last view, and so on.
  assert.deepEqual(shown, [["waiting", 300], ["busy", 1300], ["waiting", 5000], ["busy", 6000]]);
  assert.deepEqual(attends(effects).map(([, at]) => at), [300, 5000]);
  assert.deepEqual(record.attention.requests, []);
  assert.equal(record.attention.announced, false);
});

Deno.test("transition() keeps waiting until the last of several requests is answered, with one announcement", () => {
  const { record, effects } = drive([
    ...opened,
    [asked("per_1"), 300],
    [asked("que_1", "question"), 400],
    [asked("per_1"), 450], // a repeat changes nothing
    [answered("per_1"), 2000],
  ]);
  assert.deepEqual(record.attention.requests.map((r) => [r.id, r.what]), [["que_1", "question"]]);
  assert.equal(attends(effects).length, 1);
  const [last] = views(effects).at(-1)!;
  assert.equal(last.state, "waiting");
  // The oldest open request names the wait.
  assert.equal(last.waitingFor, "question");
  assert.equal(last.since, 400);
});

Deno.test("transition() clears the wait when the child goes idle, and when it is deleted", () => {
  const idle = drive([...opened, [asked("per_1"), 300], [{ type: "status", status: "idle" }, 600]]);
  assert.deepEqual(idle.record.attention.requests, []);
  assert.equal(views(idle.effects).at(-1)![0].state, "idle");
  const deleted = drive([...opened, [asked("per_1"), 300], [{ type: "deleted" }, 600]]);
  assert.deepEqual(deleted.record.attention.requests, []);
  assert.equal(deleted.record.state.kind, "closing");
});

Deno.test("transition() announces a wait that began before the pane opened when the pane opens", () => {
  const { effects } = drive([
    [{ type: "created" }, 0],
    [busy, 10],
    [asked("per_1"), 50],
    [{ type: "spawned", paneId: P1, backend: "tmux" }, 100],
  ]);
  const { record } = drive([
    [{ type: "created" }, 0],
    [busy, 10],
    [asked("per_1"), 50],
    [{ type: "spawned", paneId: P1, backend: "tmux" }, 100],
  ]);
  assert.deepEqual(attends(effects), [[{ type: "attend", paneId: P1, what: "permission" }, 100]]);
  // The pane opened showing the wait (the spawn's view).
  assert.equal(record.state.kind === "open" && record.state.shown.view?.state, "waiting");
});

Deno.test("transition() takes a pending list as the open requests: a missed reply ends the wait, a missed ask starts it", () => {
  const missedReply = drive([
    ...opened,
    [asked("per_1"), 300],
    [{ type: "pending", requests: [], at: 2000 }, 2100],
  ]);
  assert.deepEqual(missedReply.record.attention.requests, []);
  assert.equal(views(missedReply.effects).at(-1)![0].state, "busy");

  const missedAsk = drive([
    ...opened,
    [{ type: "pending", requests: [{ id: "per_9", what: "permission" }], at: 2000 }, 2100],
  ]);
  assert.deepEqual(missedAsk.record.attention.requests.map((r) => r.id), ["per_9"]);
  assert.equal(attends(missedAsk.effects).length, 1);
  assert.equal(views(missedAsk.effects).at(-1)![0].state, "waiting");
});

Deno.test("transition() ignores a pending list or a poll sent before the last attention event", () => {
  const list = drive([
    ...opened,
    [asked("per_1"), 300],
    // Asked for at 250, before the ask was heard: it could not know of it.
    [{ type: "pending", requests: [], at: 250 }, 400],
    [{ type: "poll", status: "absent", at: 250 }, 400],
  ]);
  assert.deepEqual(list.record.attention.requests.map((r) => r.id), ["per_1"]);
  // A list asked for later stands, and keeps when each request was first seen.
  const later = drive([
    ...opened,
    [asked("per_1"), 300],
    [{ type: "pending", requests: [{ id: "per_1", what: "permission" }], at: 900 }, 1000],
  ]);
  assert.equal(later.record.attention.requests[0].since, 300);
  assert.equal(attends(later.effects).length, 1);
});

Deno.test("transition() ends the wait on a poll that finds the child idle or absent, not on one that finds it busy", () => {
  const absent = drive([
    ...opened,
    [asked("per_1"), 300],
    [{ type: "poll", status: "absent", at: 2000 }, 2100],
  ]);
  assert.deepEqual(absent.record.attention.requests, []);
  const stillBusy = drive([
    ...opened,
    [asked("per_1"), 300],
    [{ type: "poll", status: "busy", at: 2000 }, 2100],
  ]);
  assert.deepEqual(stillBusy.record.attention.requests.map((r) => r.id), ["per_1"]);
});

Deno.test("transition() takes an answer to an unknown request as no change to what the pane shows", () => {
  const { record, effects } = drive([...opened, [answered("per_x"), 300]]);
  assert.deepEqual(record.attention.requests, []);
  assert.deepEqual(views(effects), []);
  assert.equal(attends(effects).length, 0);
});

Deno.test("transition() keeps at most MAX_OPEN_REQUESTS requests and stays waiting", () => {
  const events: Array<[MachineEvent, number]> = [...opened];
  for (let i = 0; i < MAX_OPEN_REQUESTS + 10; i++) events.push([asked(`per_${i}`), 200 + i]);
  const { record, effects } = drive(events);
  assert.equal(record.attention.requests.length, MAX_OPEN_REQUESTS);
  assert.equal(attends(effects).length, 1);
});

Deno.test("transition() shows a held (failed) pane as failed even while its child waits", () => {
  const { effects } = drive([
    ...opened,
    [asked("per_1"), 300],
    [{ type: "exited", paneId: P1, code: 1, present: true }, 400],
  ]);
  assert.equal(views(effects).at(-1)![0].state, "failed");
});

Deno.test("transition() says waiting without a marker when status_in_title is off", () => {
  const { effects } = drive([...opened, [asked("per_1"), 300]], { ...CFG, statusInTitle: false });
  const [view] = views(effects).at(-1)!;
  assert.equal(view.title, "map the repository");
  assert.equal(view.state, "waiting");
});

Deno.test("transition() keeps a waiting title within 60 columns, wide characters counting two", () => {
  const wide = "修复解析器".repeat(10); // 50 characters, 100 columns
  const { effects } = drive([...opened, [asked("per_1"), 300]], CFG, wide);
  const [view] = views(effects).at(-1)!;
  assert.ok(view.title.startsWith("[needs you] 修复"));
  const columns = [...view.title].reduce((n, c) => n + charColumns(c), 0);
  assert.ok(columns <= MAX_TITLE, `${columns} columns`);
  assert.equal(columns, MAX_TITLE); // 12 for the marker, 24 wide characters
});
