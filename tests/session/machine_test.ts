import assert from "node:assert/strict";
import {
  type Effect,
  isPolled,
  type MachineConfig,
  type MachineEvent,
  newRecord,
  type SessionRecord,
  transition,
} from "../../lib/session/machine/mod.ts";
import { type PaneId, validatePaneId, validateSessionId } from "../../lib/sys/validate.ts";

const CFG: MachineConfig = {
  idleCloseDelayMs: 3000,
  minPaneLifetimeMs: 5000,
  closeRetries: 2,
  closeRetryDelayMs: 200,
  recheck: false,
  readiness: false,
};

/** The effects that show a pane's live state (tested in `machine_status_test.ts`). */
const VIEW = new Set(["set_status", "arm_status", "disarm_status"]);

/**
 * Runs events in order, returning the final record and every effect but those that show the
 * pane's live state (`views`).
 */
function run(
  events: Array<[MachineEvent, number]>,
  record: SessionRecord = newRecord(validateSessionId("ses_c"), "ses_p", "child"),
  config: MachineConfig = CFG,
): { record: SessionRecord; effects: Effect[]; views: Effect[] } {
  const effects: Effect[] = [];
  const views: Effect[] = [];
  for (const [event, now] of events) {
    const t = transition(record, event, now, config);
    record = t.record;
    for (const e of t.effects) (VIEW.has(e.type) ? views : effects).push(e);
  }
  return { record, effects, views };
}

const pane = (id: string): PaneId => validatePaneId(id);

const types = (effects: Effect[]) =>
  effects.map((e) =>
    e.type === "emit"
      ? `emit:${e.message.type}${"reason" in e.message ? `:${e.message.reason}` : ""}`
      : e.type
  );

const opened: Array<[MachineEvent, number]> = [
  [{ type: "created" }, 0],
  [{ type: "spawned", paneId: pane("%1"), backend: "tmux" }, 100],
];

Deno.test("transition() opens a pane when a child is created", () => {
  const { record, effects } = run([[{ type: "created" }, 0]]);
  assert.equal(record.state.kind, "opening");
  assert.deepEqual(effects, [{ type: "spawn" }]);
});

Deno.test("transition() ignores a repeated session.created while the pane opens", () => {
  const { effects } = run([[{ type: "created" }, 0], [{ type: "created" }, 1], [{
    type: "status",
    status: "busy",
  }, 2]]);
  assert.deepEqual(types(effects), ["spawn"]);
});

Deno.test("transition() reports pane.opened and asks for a layout once the spawn succeeds", () => {
  const { record, effects } = run(opened);
  assert.deepEqual(record.state, {
    kind: "open",
    paneId: pane("%1"),
    openedAt: 100,
    idleSince: null,
    rechecking: false,
    // It opened showing the child as it was (nothing known yet): no view to send.
    shown: { view: { title: "child", state: "unknown", since: 0 }, at: 100, due: false },
  });
  assert.deepEqual(types(effects), ["spawn", "store_put", "emit:pane.opened", "watch", "layout"]);
});

Deno.test("transition() asks for no layout pass when the spawn arranged the panes itself", () => {
  const { effects } = run([
    [{ type: "created" }, 0],
    [{ type: "spawned", paneId: pane("%1"), backend: "tmux", arranged: true }, 100],
  ]);
  assert.deepEqual(types(effects), ["spawn", "store_put", "emit:pane.opened", "watch"]);
});

Deno.test("transition() arms the idle close at the later of idle delay and minimum lifetime", () => {
  const { effects } = run([...opened, [{ type: "status", status: "idle" }, 1000]]);
  // idle 1000 + 3000 = 4000; opened 100 + 5000 = 5100
  assert.deepEqual(effects.at(-1), { type: "arm", at: 5100 });
});

Deno.test("transition() treats a repeated idle as a no-op (level-triggered)", () => {
  const { effects } = run([...opened, [{ type: "status", status: "idle" }, 6000], [{
    type: "status",
    status: "idle",
  }, 7000]]);
  assert.equal(effects.filter((e) => e.type === "arm").length, 1);
});

Deno.test("transition() cancels a pending idle close on busy", () => {
  const { record, effects } = run([
    ...opened,
    [{ type: "status", status: "idle" }, 6000],
    [{ type: "status", status: "busy" }, 6500],
    [{ type: "timer" }, 9000],
  ]);
  assert.equal(record.state.kind, "open");
  assert.ok(types(effects).includes("disarm"));
  assert.ok(!types(effects).includes("close"));
});

Deno.test("transition() closes for idleness when the timer fires after the due time", () => {
  const { record, effects } = run([...opened, [{ type: "status", status: "idle" }, 6000], [{
    type: "timer",
  }, 9000]]);
  assert.equal(record.state.kind, "closing");
  assert.deepEqual(effects.at(-1), { type: "close", paneId: pane("%1"), reason: "idle" });
});

Deno.test("transition() re-arms a timer that fires early", () => {
  const { record, effects } = run([...opened, [{ type: "status", status: "idle" }, 6000], [{
    type: "timer",
  }, 8000]]);
  assert.equal(record.state.kind, "open");
  assert.deepEqual(effects.at(-1), { type: "arm", at: 9000 });
});

Deno.test("transition() holds an idle close while a background job runs and closes when it ends", () => {
  const held = run([
    ...opened,
    [{ type: "job", running: true }, 500],
    [{ type: "status", status: "idle" }, 6000],
    [{ type: "timer" }, 9000],
  ]);
  assert.equal(held.record.state.kind, "open");
  assert.ok(!types(held.effects).includes("close"));
  const released = run([[{ type: "job", running: false }, 12000]], held.record);
  assert.equal(released.record.state.kind, "closing");
  assert.deepEqual(released.effects.at(-1), { type: "close", paneId: pane("%1"), reason: "idle" });
});

Deno.test("transition() lets a busy status clear the close a job held back", () => {
  const { record, effects } = run([
    ...opened,
    [{ type: "job", running: true }, 500],
    [{ type: "status", status: "idle" }, 6000],
    [{ type: "timer" }, 9000],
    [{ type: "status", status: "busy" }, 9500],
    [{ type: "job", running: false }, 12000],
  ]);
  assert.equal(record.state.kind, "open");
  assert.ok(!types(effects).includes("close"));
});

Deno.test("transition() reports pane.closed idle and reopens on the next busy", () => {
  const { record, effects } = run([
    ...opened,
    [{ type: "status", status: "idle" }, 6000],
    [{ type: "timer" }, 9000],
    [{ type: "closed" }, 9100],
    [{ type: "status", status: "busy" }, 10000],
  ]);
  assert.equal(record.state.kind, "opening");
  assert.deepEqual(types(effects).slice(-5), [
    "close",
    "store_remove",
    "emit:pane.closed:idle",
    "layout",
    "spawn",
  ]);
});

Deno.test("transition() reopens after the close when busy arrives during an idle close", () => {
  const { record, effects } = run([
    ...opened,
    [{ type: "status", status: "idle" }, 6000],
    [{ type: "timer" }, 9000],
    [{ type: "status", status: "busy" }, 9050],
    [{ type: "closed" }, 9100],
  ]);
  assert.equal(record.state.kind, "opening");
  assert.deepEqual(types(effects).slice(-2), ["emit:pane.closed:idle", "spawn"]);
});

Deno.test("transition() closes at once on delete and tombstones the session", () => {
  const { record, effects } = run([
    ...opened,
    [{ type: "deleted" }, 200],
    [{ type: "closed" }, 300],
    [{ type: "created" }, 400],
    [{ type: "status", status: "busy" }, 500],
  ]);
  assert.deepEqual(record.state, { kind: "deleted" });
  assert.deepEqual(types(effects).slice(5), [
    "disarm",
    "close",
    "store_remove",
    "emit:pane.closed:deleted",
    "layout",
  ]);
});

Deno.test("transition() closes a pane that arrives after its session was deleted", () => {
  const { record, effects } = run([
    [{ type: "created" }, 0],
    [{ type: "deleted" }, 10],
    [{ type: "spawned", paneId: pane("%7"), backend: "tmux" }, 20],
    [{ type: "closed" }, 30],
  ]);
  assert.deepEqual(record.state, { kind: "deleted" });
  assert.deepEqual(types(effects), [
    "spawn",
    "store_put",
    "emit:pane.opened",
    "watch",
    "close",
    "store_remove",
    "emit:pane.closed:deleted",
    "layout",
  ]);
});

Deno.test("transition() retries a failed close with backoff, then reports pane.failed and keeps the pane as stuck", () => {
  const fail: MachineEvent = { type: "close_failed", code: "timed_out", message: "hung" };
  const { record, effects } = run([
    ...opened,
    [{ type: "deleted" }, 200],
    [fail, 300],
    [{ type: "timer" }, 500],
    [fail, 600],
    [{ type: "timer" }, 1000],
    [fail, 1100],
  ]);
  assert.deepEqual(record.state, { kind: "stuck", paneId: pane("%1"), deleted: true });
  const arms = effects.filter((e) => e.type === "arm");
  assert.deepEqual(arms, [{ type: "arm", at: 500 }, { type: "arm", at: 1000 }]);
  assert.equal(effects.filter((e) => e.type === "close").length, 3);
  const [failed, marked] = effects.slice(-2);
  assert.ok(
    failed?.type === "emit" && failed.message.type === "pane.failed" &&
      failed.message.op === "close",
  );
  assert.deepEqual(marked, { type: "store_mark_stuck", paneId: "%1" }, "kept for cleanup");
});

Deno.test("transition() reports pane.skipped when the spawn is refused and retries on the next busy", () => {
  const skip: MachineEvent = {
    type: "spawn_failed",
    code: "no_space",
    message: "full",
    skip: { reason: "no_space", hint: "close a pane" },
  };
  const first = run([[{ type: "created" }, 0], [skip, 10]]);
  assert.deepEqual(first.record.state, { kind: "dormant", why: "skipped" });
  assert.deepEqual(types(first.effects), ["spawn", "emit:pane.skipped:no_space"]);
  const again = run([[{ type: "status", status: "busy" }, 20]], first.record);
  assert.deepEqual(types(again.effects), ["spawn"]);
});

Deno.test("transition() reports a hard spawn failure as pane.failed", () => {
  const { effects } = run([[{ type: "created" }, 0], [{
    type: "spawn_failed",
    code: "command_failed",
    message: "x",
  }, 1]]);
  const last = effects.at(-1);
  assert.ok(
    last?.type === "emit" && last.message.type === "pane.failed" && last.message.op === "open",
  );
});

Deno.test("transition() reports a vanished pane as gone and reopens only on a change to busy", () => {
  const gone = run([...opened, [{ type: "status", status: "busy" }, 150], [{
    type: "gone",
    paneId: pane("%1"),
  }, 200]]);
  assert.deepEqual(gone.record.state, { kind: "dormant", why: "gone" });
  assert.ok(types(gone.effects).includes("emit:pane.closed:gone"));
  const repeated = run([[{ type: "status", status: "busy" }, 300]], gone.record);
  assert.deepEqual(repeated.effects, []);
  const next = run([[{ type: "status", status: "idle" }, 400], [
    { type: "status", status: "busy" },
    500,
  ]], gone.record);
  assert.deepEqual(types(next.effects), ["spawn"]);
});

Deno.test("transition() ignores a gone report for another pane", () => {
  const { record, effects } = run([...opened, [{ type: "gone", paneId: pane("%9") }, 200]]);
  assert.equal(record.state.kind, "open");
  assert.equal(effects.length, 5);
});

Deno.test("transition() closes for shutdown and never reopens afterwards", () => {
  const { record, effects } = run([
    ...opened,
    [{ type: "shutdown", closePanes: true }, 200],
    [{ type: "closed" }, 300],
    [{ type: "status", status: "busy" }, 400],
  ]);
  assert.deepEqual(record.state, { kind: "dormant", why: "shutdown" });
  assert.deepEqual(types(effects).slice(5), [
    "disarm",
    "close",
    "store_remove",
    "emit:pane.closed:shutdown",
    "count_close",
  ]);
});

Deno.test("transition() leaves panes open on shutdown when close_on_exit is false", () => {
  const { record, effects } = run([...opened, [{ type: "shutdown", closePanes: false }, 200]]);
  assert.equal(record.state.kind, "open");
  assert.equal(effects.length, 5);
});

Deno.test("transition() closes a pane that finishes opening during shutdown", () => {
  const { record, effects } = run([
    [{ type: "created" }, 0],
    [{ type: "shutdown", closePanes: true }, 5],
    [{ type: "spawned", paneId: pane("%2"), backend: "tmux" }, 10],
    [{ type: "closed" }, 20],
  ]);
  assert.deepEqual(record.state, { kind: "dormant", why: "shutdown" });
  assert.deepEqual(types(effects), [
    "spawn",
    "store_put",
    "emit:pane.opened",
    "watch",
    "close",
    "store_remove",
    "emit:pane.closed:shutdown",
    "count_close",
  ]);
});

Deno.test("transition() retitles an open pane when the title changes, not when it repeats", () => {
  const { effects, views } = run([
    ...opened,
    [{ type: "updated", title: "new" }, 200],
    [{ type: "updated", title: "new" }, 300],
    // The pane opened at 100 with the old title: the new one waits for the rate limit.
    [{ type: "status_due" }, 1100],
    [{ type: "updated", title: "new" }, 2500],
  ]);
  assert.equal(effects.length, 5);
  assert.deepEqual(views.filter((e) => e.type === "arm_status"), [{
    type: "arm_status",
    at: 1100,
  }]);
  assert.deepEqual(views.filter((e) => e.type === "set_status"), [{
    type: "set_status",
    paneId: pane("%1"),
    view: { title: "new", state: "unknown", since: 0 },
  }]);
});

Deno.test("transition() asks for a final recheck before an idle close when configured", () => {
  const config = { ...CFG, recheck: true };
  const base = run(
    [...opened, [{ type: "status", status: "idle" }, 6000], [{ type: "timer" }, 9000]],
    undefined,
    config,
  );
  assert.deepEqual(base.effects.at(-1), { type: "recheck" });
  const busy = run([[{ type: "recheck", status: "busy" }, 9100]], base.record, config);
  assert.equal(busy.record.state.kind, "open");
  assert.equal(busy.record.activity, "busy");
  const idle = run([[{ type: "recheck", status: "absent" }, 9100]], base.record, config);
  assert.deepEqual(idle.effects.at(-1), { type: "close", paneId: pane("%1"), reason: "idle" });
  const unknown = run([[{ type: "recheck", status: "unknown" }, 9100]], base.record, config);
  assert.equal(unknown.record.state.kind, "closing");
});

Deno.test("transition() keeps an idle signal that arrives while the pane opens", () => {
  const { record, effects } = run([
    [{ type: "created" }, 0],
    [{ type: "status", status: "idle" }, 10],
    [{ type: "spawned", paneId: pane("%1"), backend: "tmux" }, 100],
  ]);
  assert.equal(record.state.kind === "open" && record.state.idleSince, 10);
  assert.deepEqual(effects.at(-1), { type: "arm", at: 5100 });
});

// ---------------------------------------------------------------- readiness, polls, stable idle

const SERVER: MachineConfig = {
  ...CFG,
  recheck: true,
  readiness: true,
};

const ready: Array<[MachineEvent, number]> = [
  [{ type: "created" }, 0],
  [{ type: "ready" }, 50],
  [{ type: "spawned", paneId: pane("%1"), backend: "tmux" }, 100],
];

Deno.test("transition() waits for readiness before the spawn, once however events repeat", () => {
  const { record, effects } = run(
    [
      [{ type: "created" }, 0],
      [{ type: "created" }, 1],
      [{ type: "status", status: "busy" }, 2],
      [{ type: "status", status: "busy" }, 3],
    ],
    undefined,
    SERVER,
  );
  assert.deepEqual(record.state, { kind: "awaiting", idleSince: null });
  assert.deepEqual(types(effects), ["await_ready"]);
  const next = run([[{ type: "ready" }, 10], [{ type: "ready" }, 11]], record, SERVER);
  assert.deepEqual(types(next.effects), ["spawn"]);
  assert.equal(next.record.state.kind, "opening");
});

Deno.test("transition() cancels readiness on delete and ignores a late ready", () => {
  const { record, effects } = run(
    [
      [{ type: "created" }, 0],
      [{ type: "deleted" }, 10],
      [{ type: "ready" }, 20],
      [{ type: "status", status: "busy" }, 30],
    ],
    undefined,
    SERVER,
  );
  assert.deepEqual(record.state, { kind: "deleted" });
  assert.deepEqual(types(effects), ["await_ready", "cancel_ready"]);
});

Deno.test("transition() cancels readiness at shutdown, whatever close_on_exit says", () => {
  for (const closePanes of [true, false]) {
    const { record, effects } = run(
      [
        [{ type: "created" }, 0],
        [{ type: "shutdown", closePanes }, 10],
        [{ type: "ready" }, 20],
      ],
      undefined,
      SERVER,
    );
    assert.deepEqual(record.state, { kind: "dormant", why: "shutdown" });
    assert.deepEqual(types(effects), ["await_ready", "cancel_ready"]);
  }
});

Deno.test("transition() reports pane.skipped when the server is not ready and retries on the next busy", () => {
  const first = run(
    [
      [{ type: "created" }, 0],
      [{ type: "unready", reason: "server_unreachable", hint: "run muxbridge install" }, 10],
    ],
    undefined,
    SERVER,
  );
  assert.deepEqual(first.record.state, { kind: "dormant", why: "unreachable" });
  assert.ok(isPolled(first.record.state), "its status is polled while it has no pane");
  assert.deepEqual(first.effects.at(-1), {
    type: "emit",
    message: {
      type: "pane.skipped",
      sessionID: "ses_c",
      reason: "server_unreachable",
      hint: "run muxbridge install",
    },
  });
  const again = run([[{ type: "status", status: "busy" }, 20]], first.record, SERVER);
  assert.deepEqual(types(again.effects), ["await_ready"]);
  // A poll that finds the child busy once the server answers opens it the same way.
  const polled = run([[{ type: "poll", status: "busy", at: 20 }, 25]], first.record, SERVER);
  assert.deepEqual(types(polled.effects), ["await_ready"]);
  assert.deepEqual(
    run([[{ type: "poll", status: "idle", at: 20 }, 25]], first.record, SERVER).effects,
    [],
  );
  // Once it is idle, it is an idle child like any other: no longer polled.
  const idle = run([[{ type: "status", status: "idle" }, 30]], first.record, SERVER);
  assert.deepEqual(idle.record.state, { kind: "dormant", why: "idle" });
  assert.equal(isPolled(idle.record.state), false);
});

Deno.test("transition() skips for good, unpolled, a child the server refuses or does not know", () => {
  for (const reason of ["auth_failed", "session_not_found", "unsupported_version"] as const) {
    const { record } = run(
      [
        [{ type: "created" }, 0],
        [{ type: "unready", reason, hint: "h" }, 10],
      ],
      undefined,
      SERVER,
    );
    assert.deepEqual(record.state, { kind: "dormant", why: "skipped" }, reason);
    assert.equal(isPolled(record.state), false, reason);
  }
});

Deno.test("transition() keeps an idle signal that arrives during readiness", () => {
  const { record, effects } = run(
    [
      [{ type: "created" }, 0],
      [{ type: "status", status: "idle" }, 10],
      [{ type: "ready" }, 50],
      [{ type: "spawned", paneId: pane("%1"), backend: "tmux" }, 100],
    ],
    undefined,
    SERVER,
  );
  assert.equal(record.state.kind === "open" && record.state.idleSince, 10);
  assert.deepEqual(effects.at(-1), { type: "arm", at: 5100 });
});

Deno.test("transition() goes through readiness again when a closed pane reopens", () => {
  const { effects } = run(
    [
      ...ready,
      [{ type: "status", status: "idle" }, 6000],
      [{ type: "timer" }, 9000],
      [{ type: "recheck", status: "absent" }, 9040],
      [{ type: "status", status: "busy" }, 9050],
      [{ type: "closed" }, 9100],
    ],
    undefined,
    SERVER,
  );
  assert.deepEqual(types(effects).slice(-2), ["emit:pane.closed:idle", "await_ready"]);
});

Deno.test("transition() never closes on absence without an idle signal", () => {
  const { record, effects } = run(
    [
      ...ready,
      [{ type: "status", status: "busy" }, 150],
      [{ type: "poll", status: "absent", at: 2000 }, 2000],
      [{ type: "poll", status: "idle", at: 4000 }, 4000],
      [{ type: "timer" }, 60_000],
      [{ type: "poll", status: "absent", at: 60_000 }, 60_000],
    ],
    undefined,
    SERVER,
  );
  assert.equal(record.state.kind, "open");
  assert.ok(!types(effects).some((t) => t === "close" || t === "recheck"));
});

Deno.test("transition() confirms an idle close with a status read the moment it is due", () => {
  const base = run([...ready, [{ type: "status", status: "idle" }, 6000]], undefined, SERVER);
  assert.deepEqual(base.effects.at(-1), { type: "arm", at: 9000 });
  // Due at 9000: the read goes out at once, no poll tick is waited for.
  const due = run([[{ type: "timer" }, 9000]], base.record, SERVER);
  assert.deepEqual(due.effects, [{ type: "disarm" }, { type: "recheck" }]);
  assert.equal(due.record.state.kind === "open" && due.record.state.rechecking, true);
  // Idle, absent (after the idle signal) or no answer within the bound: the close starts.
  for (const status of ["idle", "absent", "unknown"] as const) {
    const closing = run([[{ type: "recheck", status }, 9003]], due.record, SERVER);
    assert.deepEqual(closing.effects.at(-1), { type: "close", paneId: pane("%1"), reason: "idle" });
  }
  // Busy (or retry, which the loop reads as busy): the close is off, the pane stays.
  const busy = run([[{ type: "recheck", status: "busy" }, 9003]], due.record, SERVER);
  assert.equal(busy.record.state.kind === "open" && busy.record.state.idleSince, null);
  assert.equal(busy.record.activity, "busy");
  assert.deepEqual(busy.effects, []);
});

Deno.test("transition() with no idle delay confirms at once when the pane is old enough", () => {
  const config = { ...SERVER, idleCloseDelayMs: 0, minPaneLifetimeMs: 0 };
  const { effects } = run(
    [...ready, [{ type: "status", status: "idle" }, 6000]],
    undefined,
    config,
  );
  assert.deepEqual(effects.at(-1), { type: "arm", at: 6000 });
  const fired = run(
    [...ready, [{ type: "status", status: "idle" }, 6000], [{ type: "timer" }, 6000]],
    undefined,
    config,
  );
  assert.deepEqual(types(fired.effects).slice(-2), ["disarm", "recheck"]);
});

Deno.test("transition() takes an idle or absent poll for nothing, before or after the close is due", () => {
  const { record, effects } = run(
    [
      ...ready,
      [{ type: "status", status: "idle" }, 6000],
      [{ type: "poll", status: "absent", at: 7000 }, 7000],
      [{ type: "poll", status: "idle", at: 8000 }, 8000],
    ],
    undefined,
    SERVER,
  );
  assert.equal(record.state.kind === "open" && record.state.rechecking, false);
  assert.deepEqual(effects.at(-1), { type: "arm", at: 9000 }, "only the idle signal armed");
});

Deno.test("transition() ignores a busy poll sent before the idle signal", () => {
  const { record, effects } = run(
    [
      ...ready,
      [{ type: "status", status: "busy" }, 150],
      [{ type: "status", status: "idle" }, 6000],
      // Sent at 5990, answered after the idle event: older news than the event.
      [{ type: "poll", status: "busy", at: 5990 }, 6010],
      [{ type: "timer" }, 9000],
    ],
    undefined,
    SERVER,
  );
  assert.equal(record.activity, "idle");
  assert.deepEqual(types(effects).slice(-2), ["disarm", "recheck"]);
});

Deno.test("transition() cancels a pending idle close on a busy poll", () => {
  const { record, effects } = run(
    [
      ...ready,
      [{ type: "status", status: "idle" }, 6000],
      [{ type: "poll", status: "busy", at: 7000 }, 7000],
      [{ type: "timer" }, 9000],
      [{ type: "poll", status: "absent", at: 9000 }, 9000],
    ],
    undefined,
    SERVER,
  );
  assert.equal(record.state.kind === "open" && record.state.idleSince, null);
  assert.equal(record.activity, "busy");
  assert.ok(!types(effects).some((t) => t === "close" || t === "recheck"));
});

Deno.test("transition() turns an idle close into a reopen when a poll sees busy during the close", () => {
  const { record, effects } = run(
    [
      ...ready,
      [{ type: "status", status: "idle" }, 6000],
      [{ type: "timer" }, 9000],
      [{ type: "recheck", status: "idle" }, 9010],
      [{ type: "poll", status: "busy", at: 9020 }, 9030],
      [{ type: "closed" }, 9100],
    ],
    undefined,
    SERVER,
  );
  assert.equal(record.state.kind, "awaiting");
  assert.deepEqual(types(effects).slice(-2), ["emit:pane.closed:idle", "await_ready"]);
});

Deno.test("transition() closes as deleted and tombstones when the recheck finds a 404", () => {
  const { record, effects } = run(
    [
      ...ready,
      [{ type: "status", status: "idle" }, 6000],
      [{ type: "timer" }, 9000],
      [{ type: "recheck", status: "deleted" }, 9010],
      [{ type: "closed" }, 9100],
      [{ type: "status", status: "busy" }, 9200],
    ],
    undefined,
    SERVER,
  );
  assert.deepEqual(record.state, { kind: "deleted" });
  assert.ok(types(effects).includes("emit:pane.closed:deleted"));
  assert.ok(!types(effects).slice(-1).includes("await_ready"));
});

Deno.test("transition() holds a due idle close while a job runs and confirms it when the job ends", () => {
  const held = run(
    [
      ...ready,
      [{ type: "job", running: true }, 500],
      [{ type: "status", status: "idle" }, 6000],
      [{ type: "timer" }, 9000],
      [{ type: "timer" }, 11_000],
    ],
    undefined,
    SERVER,
  );
  assert.equal(held.record.state.kind, "open");
  assert.ok(!types(held.effects).some((t) => t === "close" || t === "recheck"));
  const released = run([[{ type: "job", running: false }, 30_000]], held.record, SERVER);
  assert.deepEqual(types(released.effects), ["disarm", "recheck"]);
});

Deno.test("transition() adopts a dead bridge's pane for a session it has not seen, as open and busy", () => {
  const { record, effects } = run([[{ type: "adopted", paneId: pane("%9"), backend: "tmux" }, 50]]);
  assert.equal(record.state.kind, "open");
  assert.equal(record.state.kind === "open" && record.state.paneId, "%9");
  assert.equal(record.activity, "busy");
  assert.deepEqual(types(effects), ["store_put", "emit:pane.opened", "watch", "layout"]);
});

Deno.test("transition() refuses to adopt a pane for a session that already has one", () => {
  const { record, effects } = run([...opened, [
    { type: "adopted", paneId: pane("%9"), backend: "tmux" },
    200,
  ]]);
  assert.equal(record.state.kind === "open" && record.state.paneId, "%1");
  assert.equal(effects.length, 5);
});

// ---------------------------------------------------------------- every side effect is an effect

Deno.test("transition() records a spawned pane in place of its pending record, and watches it", () => {
  const { effects } = run([
    [{ type: "created" }, 0],
    [{ type: "spawned", paneId: pane("%1"), backend: "tmux", pending: pane("pending:ab") }, 100],
  ]);
  assert.deepEqual(effects.slice(1, 2), [{
    type: "store_put",
    paneId: "%1",
    replaces: "pending:ab",
  }]);
  assert.ok(types(effects).includes("watch"));
});

Deno.test("transition() ends a surviving program and forgets the record of a pane gone behind its back", () => {
  const { effects } = run([...opened, [{ type: "gone", paneId: pane("%1") }, 200]]);
  assert.deepEqual(types(effects).slice(5), [
    "disarm",
    "end_survivor",
    "store_remove",
    "emit:pane.closed:gone",
    "layout",
  ]);
});

Deno.test("transition() asks the watch to look for the pane of a spawn whose answer was lost", () => {
  const lost = run([[{ type: "created" }, 0], [{
    type: "spawn_failed",
    code: "timed_out",
    message: "tmux hung",
    lost: true,
  }, 10]]);
  assert.deepEqual(types(lost.effects), ["spawn", "emit:pane.failed", "watch"]);
  const certain = run([[{ type: "created" }, 0], [{
    type: "spawn_failed",
    code: "no_space",
    message: "full",
  }, 10]]);
  assert.ok(!types(certain.effects).includes("watch"));
});

Deno.test("transition() counts a close for bye only when the pane closed for the shutdown", () => {
  const idle = run([
    ...opened,
    [{ type: "status", status: "idle" }, 6000],
    [{ type: "timer" }, 9000],
    [{ type: "shutdown", closePanes: true }, 9010],
    [{ type: "closed" }, 9100],
  ]);
  assert.ok(types(idle.effects).includes("emit:pane.closed:idle"));
  assert.ok(
    !types(idle.effects).includes("count_close"),
    "an idle close under way is no shutdown close",
  );
  const shutdown = run([...opened, [{ type: "shutdown", closePanes: true }, 200], [{
    type: "closed",
  }, 300]]);
  assert.equal(types(shutdown.effects).filter((t) => t === "count_close").length, 1);
});

Deno.test("transition() ignores every event once the session is deleted", () => {
  const { record } = run([[{ type: "deleted" }, 1]]);
  assert.deepEqual(record.state, { kind: "deleted" });
  for (
    const event of [
      { type: "created" },
      { type: "status", status: "busy" },
      { type: "spawned", paneId: pane("%4"), backend: "tmux" },
      { type: "gone", paneId: pane("%4") },
      { type: "shutdown", closePanes: true },
    ] as MachineEvent[]
  ) {
    const t = transition(record, event, 10, CFG);
    assert.equal(t.record, record);
    assert.deepEqual(t.effects, []);
  }
});
