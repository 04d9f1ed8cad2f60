/**
 * The session loop's new duties on a fake backend and a fake clock: live status on the pane
 * (rate-limited, last state wins, a pane closed behind its back read as gone once), the durable
 * record `list` reads, a failed pane held then closed as `failed`, `exclude` and `max_panes`.
 */

import assert from "node:assert/strict";
import type { OutMessage } from "../../lib/bridge/protocol.ts";
import { validateSessionId as sid } from "../../lib/sys/validate.ts";
import { createFakeBackend, withStatusPlace } from "../fakes/fake_backend.ts";
import { createFakeClock } from "../fakes/fake_clock.ts";
import { type LoopHarness, loopHarness } from "../helpers/loop_harness.ts";

function setup(flags: Record<string, unknown> = {}): LoopHarness & { titles: string[] } {
  const clock = createFakeClock();
  const backend = createFakeBackend();
  const titles: string[] = [];
  const setTitle = backend.setTitle.bind(backend);
  backend.setTitle = (
    paneId,
    title,
  ) => (titles.push(`${clock.now()} ${paneId} ${title}`), setTitle(paneId, title));
  const h = loopHarness({
    flags: {
      idle_close_delay_ms: 1000,
      min_pane_lifetime_ms: 1000,
      close_grace_ms: 250,
      poll_interval_ms: 2000,
      ...flags,
    },
    clock,
    backend,
    deps: { owner: "1:1" },
  });
  return { ...h, titles };
}

const created = (id: string, title = `title of ${id}`, agent?: string) => ({
  kind: "created" as const,
  info: {
    id: sid(id),
    title,
    parentId: sid("ses_parent"),
    directory: "/work",
    ...(agent ? { agent } : {}),
  },
});
const status = (id: string, s: "busy" | "idle", retry?: number) => ({
  kind: "status" as const,
  sessionId: sid(id),
  status: s,
  ...(retry === undefined ? {} : { retry }),
});
const said = (out: OutMessage[]) =>
  out.map((m) =>
    `${m.type}${"sessionID" in m ? ` ${m.sessionID}` : ""}${"reason" in m ? ` ${m.reason}` : ""}${
      "position" in m && m.position !== undefined ? ` #${m.position}` : ""
    }`
  );

Deno.test("SessionLoop shows busy, retry and idle in the pane title and in the pane's record", async () => {
  const h = setup();
  h.loop.handle(created("ses_a", "map the repository"));
  await h.clock.advance(10);
  h.loop.handle(status("ses_a", "busy"));
  await h.clock.advance(1500);
  assert.equal(h.backend.panes.get("%1")?.title, "[busy] map the repository");
  h.loop.handle(status("ses_a", "busy", 2));
  await h.clock.advance(1500);
  assert.equal(h.backend.panes.get("%1")?.title, "[retry 2] map the repository");
  const record = [...h.store.records.values()][0];
  assert.equal(record.status?.state, "retry");
  assert.equal(record.status?.attempt, 2);
  assert.equal(record.title, "map the repository", "the record keeps the title without marker");
  h.loop.handle(status("ses_a", "idle"));
  await h.clock.advance(10);
  assert.equal(h.backend.panes.get("%1")?.title, "[idle] map the repository");
});

Deno.test("SessionLoop holds the rate limit under busy/idle flapping 10 times a second; the last state wins", async () => {
  const h = setup({ idle_close_delay_ms: 600_000 });
  h.loop.handle(created("ses_a", "flappy"));
  await h.clock.advance(10);
  const start = h.clock.now();
  for (let i = 0; i < 100; i++) {
    h.loop.handle(status("ses_a", i % 2 === 0 ? "busy" : "idle"));
    await h.clock.advance(100);
  }
  h.loop.handle(status("ses_a", "busy"));
  await h.clock.advance(2000);
  const times = h.titles.map((t) => Number(t.split(" ")[0]) - start);
  // 10 s of flapping: one title at once, then one a second at most (with the last one).
  assert.ok(h.titles.length <= 12, `${h.titles.length} titles: ${h.titles.join("; ")}`);
  for (let i = 1; i < times.length; i++) {
    assert.ok(times[i] - times[i - 1] >= 1000, `titles ${times[i - 1]} and ${times[i]} ms`);
  }
  assert.equal(h.backend.panes.get("%1")?.title, "[busy] flappy");
  assert.equal(h.backend.panes.size, 1, "flapping opened and closed nothing");
});

Deno.test("SessionLoop reads a title update to a pane closed behind its back as gone, once, with no storm", async () => {
  const h = setup();
  h.loop.handle(created("ses_a"));
  h.loop.handle(status("ses_a", "busy"));
  await h.clock.advance(1500);
  h.backend.vanish("%1");
  const before = h.titles.length;
  for (let i = 0; i < 20; i++) {
    h.loop.handle(status("ses_a", "busy", i + 1));
    await h.clock.advance(300);
  }
  assert.equal(h.titles.length - before, 1, "one failed title, then none");
  assert.deepEqual(said(h.out), ["pane.opened ses_a", "pane.closed ses_a gone"]);
  assert.equal(h.store.records.size, 0);
});

Deno.test("SessionLoop holds a pane whose program failed, then closes it reported failed", async () => {
  const h = setup({ failed_pane_hold_ms: 30_000 });
  h.loop.handle(created("ses_a", "child"));
  h.loop.handle(status("ses_a", "busy"));
  await h.clock.advance(10);
  const pane = h.backend.panes.get("%1")!;
  const token = pane.req.token!;
  assert.ok(pane.req.argv.includes(`/memory/exits/${token}`));
  // Its start command reports the failure (what `PaneStore.exitFile` names).
  h.store.exitCodes.set(token, 1);
  await h.clock.advance(2000); // the pane watch reads it
  assert.equal(h.loop.records()[0].state.kind, "held");
  await h.clock.advance(1000);
  assert.equal(h.backend.panes.get("%1")?.title, "[failed] child");
  assert.equal([...h.store.records.values()][0].status?.state, "failed");
  assert.equal([...h.store.records.values()][0].status?.exitCode, 1);
  assert.ok(h.backend.panes.has("%1"), "held, still shown");
  await h.clock.advance(30_000);
  assert.equal(h.backend.panes.has("%1"), false);
  assert.deepEqual(said(h.out), ["pane.opened ses_a", "pane.closed ses_a failed"]);
  assert.equal(h.store.exitCodes.size, 0, "the report is removed with the record");
  // Still busy: no reopen loop.
  h.loop.observe(sid("ses_a"), "busy");
  await h.clock.advance(10_000);
  assert.equal(h.backend.log.filter((l) => l.startsWith("spawn")).length, 1);
});

Deno.test("SessionLoop reports a failed pane that closed with its program as failed, not gone", async () => {
  const h = setup({ failed_pane_hold_ms: 0 });
  h.loop.handle(created("ses_a"));
  await h.clock.advance(10);
  const token = h.backend.panes.get("%1")!.req.token!;
  h.store.exitCodes.set(token, 1);
  h.backend.vanish("%1");
  await h.clock.advance(2000);
  assert.deepEqual(said(h.out), ["pane.opened ses_a", "pane.closed ses_a failed"]);
});

Deno.test("SessionLoop gives an excluded agent no pane, by its title suffix or its agent field", async () => {
  const h = setup({ exclude: ["explore", "*review*"] });
  h.loop.handle(created("ses_a", "Map the lib folder (@explore subagent)"));
  h.loop.handle(created("ses_b", "anything", "Explore"));
  h.loop.handle(created("ses_c", "Code review of main"));
  h.loop.handle(created("ses_d", "Build it (@general subagent)"));
  for (const id of ["ses_a", "ses_b", "ses_c", "ses_d"]) h.loop.handle(status(id, "busy"));
  await h.clock.advance(10);
  assert.deepEqual(said(h.out), [
    "pane.skipped ses_a excluded",
    "pane.skipped ses_b excluded",
    "pane.skipped ses_c excluded",
    "pane.opened ses_d",
  ]);
  assert.equal(h.backend.panes.size, 1);
});

Deno.test("SessionLoop queues children above max_panes and opens each when a pane frees", async () => {
  const h = setup({ max_panes: 2 });
  for (const id of ["ses_a", "ses_b", "ses_c", "ses_d"]) {
    h.loop.handle(created(id));
    h.loop.handle(status(id, "busy"));
  }
  await h.clock.advance(10);
  // The places are told at once; the panes open as their spawns answer.
  assert.deepEqual(said(h.out).sort(), [
    "pane.opened ses_a",
    "pane.opened ses_b",
    "pane.skipped ses_c max_panes #1",
    "pane.skipped ses_d max_panes #2",
  ]);
  h.loop.handle(status("ses_a", "idle"));
  await h.clock.advance(1500);
  assert.deepEqual(said(h.out).slice(4), ["pane.closed ses_a idle", "pane.opened ses_c"]);
  // A queued child that finishes before its turn leaves the queue and gets no pane.
  h.loop.handle(status("ses_d", "idle"));
  h.loop.handle({ kind: "deleted", info: { id: sid("ses_b"), title: "" } });
  await h.clock.advance(1500);
  assert.deepEqual(said(h.out).slice(6), ["pane.closed ses_b deleted"]);
  assert.equal(h.backend.panes.size, 1);
  // Busy again: queued anew, and there is room.
  h.loop.handle(status("ses_d", "busy"));
  await h.clock.advance(10);
  assert.deepEqual(said(h.out).slice(7), ["pane.opened ses_d"]);
});

Deno.test("SessionLoop opens queued children in the order they were queued: one that left the queue and came back waits behind the others", async () => {
  const h = setup({ max_panes: 1 });
  for (const id of ["ses_a", "ses_b", "ses_c", "ses_d"]) {
    h.loop.handle(created(id));
    h.loop.handle(status(id, "busy"));
    await h.clock.advance(10);
  }
  // ses_b finishes before its turn, then works again: queued anew, after ses_c and ses_d.
  h.loop.handle(status("ses_b", "idle"));
  await h.clock.advance(10);
  h.loop.handle(status("ses_b", "busy"));
  await h.clock.advance(10);
  assert.deepEqual(said(h.out), [
    "pane.opened ses_a",
    "pane.skipped ses_b max_panes #1",
    "pane.skipped ses_c max_panes #2",
    "pane.skipped ses_d max_panes #3",
    "pane.skipped ses_b max_panes #3",
  ]);
  // The open pane's child goes idle, its pane closes, and the head of the queue opens.
  for (const [done, next] of [["ses_a", "ses_c"], ["ses_c", "ses_d"], ["ses_d", "ses_b"]]) {
    h.loop.handle(status(done, "idle"));
    await h.clock.advance(1500);
    const opened = said(h.out).filter((l) => l.startsWith("pane.opened"));
    assert.equal(opened.at(-1), `pane.opened ${next}`, `after ${done}: ${said(h.out)}`);
    assert.equal(h.backend.panes.size, 1);
  }
});

Deno.test("SessionLoop admits queued children at once when a bridge.hello raises max_panes", async () => {
  const h = setup({ max_panes: 1 });
  for (const id of ["ses_a", "ses_b", "ses_c"]) {
    h.loop.handle(created(id));
    h.loop.handle(status(id, "busy"));
  }
  await h.clock.advance(10);
  assert.equal(h.backend.panes.size, 1);
  h.loop.setContext(h.loop.context, { ...h.loop.config, max_panes: undefined });
  await h.clock.advance(10);
  assert.equal(h.backend.panes.size, 3);
});

Deno.test("SessionLoop shows the state through a backend's status place and releases it before the close", async () => {
  const h = setup();
  withStatusPlace(h.backend);
  const spawn = h.backend.spawn.bind(h.backend);
  const asked: string[] = [];
  h.backend.spawn = (r) => (asked.push(`${r.title} ${r.status?.state}`), spawn(r));
  h.loop.handle(created("ses_a", "child"));
  h.loop.handle(status("ses_a", "busy"));
  await h.clock.advance(1500);
  assert.deepEqual(asked, ["[busy] child busy"]);
  h.loop.handle(status("ses_a", "idle"));
  await h.clock.advance(3000);
  const log = h.backend.log.filter((l) => !l.startsWith("find"));
  // The pane opened showing busy already (the spawn carries the status): no call for it.
  assert.deepEqual(log, [
    "spawn ses_a",
    "status %1 idle [idle] child",
    "release %1 ses_a",
    "interrupt %1",
  ]);
  const req = h.backend.panes.size === 0 ? null : [...h.backend.panes.values()][0].req;
  assert.equal(req, null, "closed");
  assert.deepEqual(h.titles, [], "no setTitle where the backend has a status place");
});
