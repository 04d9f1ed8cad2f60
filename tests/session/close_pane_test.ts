/**
 * closePane() and terminateSurvivor() on a fake backend, fake processes and a fake clock: which
 * pid is trusted when, the whole group is ended, a reused pid is never signalled.
 */

import assert from "node:assert/strict";
import { closePane, terminateSurvivor } from "../../lib/session/close_pane.ts";
import { isMuxError } from "../../lib/sys/errors.ts";
import { createFakeBackend, type FakeBackend } from "../fakes/fake_backend.ts";
import { createFakeClock } from "../fakes/fake_clock.ts";
import { fakeProcesses } from "../fakes/memory_store.ts";
import { type PaneId, validatePaneId, validateSessionId } from "../../lib/sys/validate.ts";

/** Runs `p` while the fake clock moves on, so its waits end. */
async function settle<T>(clock: ReturnType<typeof createFakeClock>, p: Promise<T>): Promise<T> {
  let done = false;
  // Caught at once (a rejection left pending while time moves counts as unhandled).
  const outcome = p.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  ).finally(() => (done = true));
  for (let i = 0; i < 200 && !done; i++) await clock.advance(50);
  const r = await outcome;
  if (!r.ok) throw r.error;
  return r.value;
}

/** A fake backend whose panes report a program pid. */
async function paneWithPid(pid: number): Promise<{ backend: FakeBackend; paneId: PaneId }> {
  const backend = createFakeBackend();
  const inspect = backend.inspect.bind(backend);
  backend.inspect = async (id) => {
    const info = await inspect(id);
    return info ? { ...info, pid } : null;
  };
  backend.exitsOnInterrupt = false;
  const { paneId } = await backend.spawn({
    sessionId: validateSessionId("ses_a"),
    title: "a",
    argv: ["opencode"],
    cwd: "/",
    env: {},
    owner: "cli",
  });
  return { backend, paneId };
}

Deno.test("terminateSurvivor() ends a whole group whose leader ignores SIGTERM, child included", async () => {
  const clock = createFakeClock();
  const processes = fakeProcesses([700, 701]);
  processes.leaders.set(701, 700);
  processes.ignores.set(700, new Set(["SIGTERM"]));
  processes.ignores.set(701, new Set(["SIGTERM"]));
  const ended = await settle(clock, terminateSurvivor(processes, 700, clock, 250, "100"));
  assert.equal(ended, true);
  assert.deepEqual(processes.signals, [
    "SIGTERM -700",
    "SIGTERM 701",
    "SIGKILL -700",
    "SIGKILL 701",
  ]);
  assert.deepEqual([...processes.living], []);
});

Deno.test("terminateSurvivor() ends the child a dead wrapper left in its group", async () => {
  const clock = createFakeClock();
  const processes = fakeProcesses([801]); // the leader 800 is gone; its child lives on
  processes.leaders.set(801, 800);
  const ended = await settle(clock, terminateSurvivor(processes, 800, clock, 250, "100"));
  assert.equal(ended, true);
  assert.deepEqual(processes.signals, ["SIGTERM -800", "SIGTERM 801"]);
  assert.deepEqual([...processes.living], []);
});

Deno.test("terminateSurvivor() never signals a pid that now belongs to a later process", async () => {
  const clock = createFakeClock();
  const processes = fakeProcesses([900, 901]);
  processes.leaders.set(901, 900);
  processes.starts.set(900, "555"); // recorded at spawn: "100"
  const ended = await settle(clock, terminateSurvivor(processes, 900, clock, 250, "100"));
  assert.equal(ended, false);
  assert.deepEqual(processes.signals, []);
  assert.deepEqual([...processes.living].sort(), [900, 901]);
});

Deno.test("terminateSurvivor() does nothing when the program ended with its pane", async () => {
  const clock = createFakeClock();
  const processes = fakeProcesses();
  assert.equal(await settle(clock, terminateSurvivor(processes, 1000, clock, 250, "100")), false);
  assert.equal(await settle(clock, terminateSurvivor(processes, 1, clock, 250)), false);
  assert.deepEqual(processes.signals, []);
});

Deno.test("terminateSurvivor() reports close_unverified when a process outlives SIGKILL", async () => {
  const clock = createFakeClock();
  const processes = fakeProcesses([1100]);
  processes.ignores.set(1100, new Set(["SIGTERM", "SIGKILL"]));
  await assert.rejects(
    settle(clock, terminateSurvivor(processes, 1100, clock, 250, "100")),
    (err: unknown) => isMuxError(err, "close_unverified"),
  );
});

Deno.test("closePane() ends the live pane's program by the pid and start stamp read at close", async () => {
  const clock = createFakeClock();
  const { backend, paneId } = await paneWithPid(1200);
  const processes = fakeProcesses([1200, 1201]);
  processes.leaders.set(1201, 1200);
  processes.ignores.set(1201, new Set(["SIGTERM"]));
  // The recorded pid is stale (say, a pane respawned): the live one wins.
  const result = await settle(
    clock,
    closePane(backend, paneId, { graceMs: 250, clock, processes, pid: 4, pidStart: "1" }),
  );
  assert.deepEqual(result, { alreadyGone: false, killed: true, programTerminated: true });
  assert.ok(processes.signals.every((s) => !s.endsWith(" -4") && !s.endsWith(" 4")));
  assert.deepEqual([...processes.living], []);
});

Deno.test("closePane() gives a surviving program survivorGraceMs between SIGTERM and SIGKILL", async () => {
  const clock = createFakeClock();
  const { backend, paneId } = await paneWithPid(1300);
  const processes = fakeProcesses([1300]);
  processes.ignores.set(1300, new Set(["SIGTERM"]));
  const sent: Array<[string, number]> = [];
  const signal = processes.signal.bind(processes);
  processes.signal = (pid, sig, group) => (sent.push([sig, clock.now()]), signal(pid, sig, group));
  await settle(
    clock,
    closePane(backend, paneId, { graceMs: 0, survivorGraceMs: 2000, clock, processes }),
  );
  const [[term, termAt], [kill, killAt]] = sent;
  assert.deepEqual([term, kill], ["SIGTERM", "SIGKILL"]);
  assert.ok(killAt - termAt >= 2000, `SIGKILL ${killAt - termAt} ms after SIGTERM`);
});

Deno.test("closePane() of a pane already gone ends its recorded program only with a matching stamp", async () => {
  const clock = createFakeClock();
  const backend = createFakeBackend();
  const processes = fakeProcesses([1300]);
  processes.ignores.set(1300, new Set(["SIGTERM"]));
  // No stamp recorded: the pid may be anyone's by now; left alone.
  let result = await settle(
    clock,
    closePane(backend, validatePaneId("%9"), { graceMs: 250, clock, processes, pid: 1300 }),
  );
  assert.deepEqual(result, { alreadyGone: true, killed: false, programTerminated: false });
  // A stamp that no longer matches: a reused pid; left alone.
  result = await settle(
    clock,
    closePane(backend, validatePaneId("%9"), {
      graceMs: 250,
      clock,
      processes,
      pid: 1300,
      pidStart: "99",
    }),
  );
  assert.equal(result.programTerminated, false);
  assert.deepEqual(processes.signals, []);
  // The very process recorded at spawn: ended.
  result = await settle(
    clock,
    closePane(backend, validatePaneId("%9"), {
      graceMs: 250,
      clock,
      processes,
      pid: 1300,
      pidStart: "100",
    }),
  );
  assert.deepEqual(result, { alreadyGone: true, killed: false, programTerminated: true });
  assert.deepEqual([...processes.living], []);
});

Deno.test("closePane() of a dead (held) pane trusts only the recorded pid, not the stale one", async () => {
  const clock = createFakeClock();
  const { backend, paneId } = await paneWithPid(1400); // tmux keeps reporting the old pid
  backend.panes.get(paneId)!.dead = true;
  const processes = fakeProcesses([1400]); // 1400 is now someone else's process
  processes.starts.set(1400, "777");
  const result = await settle(
    clock,
    closePane(backend, paneId, { graceMs: 250, clock, processes }),
  );
  assert.deepEqual(result, { alreadyGone: false, killed: true, programTerminated: false });
  assert.deepEqual(processes.signals, []);
});

Deno.test("closePane() notices a kill that silently does nothing and reports close_unverified", async () => {
  const clock = createFakeClock();
  const backend = createFakeBackend();
  backend.exitsOnInterrupt = false;
  backend.ignoreKills = true;
  const { paneId } = await backend.spawn({
    sessionId: validateSessionId("ses_k"),
    title: "k",
    argv: ["opencode"],
    cwd: "/",
    env: {},
    owner: "cli",
  });
  await assert.rejects(
    settle(clock, closePane(backend, paneId, { graceMs: 100, clock, verifyMs: 500 })),
    (e: unknown) => isMuxError(e, "close_unverified"),
  );
  assert.ok(backend.log.includes(`kill ${paneId}`), "the kill was sent");
  assert.ok(backend.panes.has(paneId), "the pane is still there, and said so");
});

/**
 * A pane whose recorded program (`pid`, start "100") ends on the interrupt while the pane stays
 * until the kill, with the order of the kill and of each process-table scan logged in `order`.
 */
async function recordedPane(pid: number) {
  const { backend, paneId } = await paneWithPid(pid);
  const processes = fakeProcesses([pid]);
  const order: string[] = [];
  const interrupt = backend.interrupt.bind(backend);
  backend.interrupt = async (id, signal) => {
    await interrupt(id, signal);
    processes.living.delete(pid); // the program exits on Ctrl+C
  };
  const kill = backend.kill.bind(backend);
  backend.kill = (id, signal) => {
    order.push("kill started");
    const done = kill(id, signal);
    return done.then(() => void order.push("kill answered"));
  };
  const members = processes.members;
  processes.members = (leader) => (order.push("scan"), members(leader));
  const signal = processes.signal.bind(processes);
  processes.signal = (p, sig, group) => (order.push(sig), signal(p, sig, group));
  return { backend, paneId, processes, order };
}

Deno.test("closePane() looks for what an ended program left while the kill runs, not after it", async () => {
  const clock = createFakeClock();
  const { backend, paneId, processes, order } = await recordedPane(1500);
  const result = await settle(
    clock,
    closePane(backend, paneId, { graceMs: 250, clock, processes, pid: 1500, pidStart: "100" }),
  );
  assert.deepEqual(result, { alreadyGone: false, killed: false, programTerminated: false });
  // One scan, once the kill's call was made and before its answer; none after it.
  assert.deepEqual(order, ["kill started", "scan", "kill answered"]);
  assert.ok(!backend.panes.has(paneId));
});

Deno.test("closePane() still ends what an ended program left in its group, after the kill", async () => {
  const clock = createFakeClock();
  const { backend, paneId, processes, order } = await recordedPane(1600);
  processes.living.add(1601); // a child the program started, left running
  processes.leaders.set(1601, 1600);
  processes.ignores.set(1601, new Set(["SIGHUP"]));
  const result = await settle(
    clock,
    closePane(backend, paneId, { graceMs: 250, clock, processes, pid: 1600, pidStart: "100" }),
  );
  assert.deepEqual(result, { alreadyGone: false, killed: false, programTerminated: true });
  // Found while the kill ran, then ended the usual way once the pane was gone.
  assert.deepEqual(order.slice(0, 3), ["kill started", "scan", "kill answered"]);
  assert.ok(order.indexOf("SIGTERM") > order.indexOf("kill answered"));
  assert.deepEqual([...processes.living], []);
});

/** A provider-like backend: its panes' pids are another program's word. */
async function claimedPane(pid: number) {
  const made = await paneWithPid(pid);
  Object.assign(made.backend, { ownership: { instance: "fake", pid: "claimed" } });
  return made;
}

const TOKEN = "0123456789abcdef0123456789abcdef";

Deno.test("closePane() never signals a pid a backend only claims, without the pane's token in its environment", async () => {
  const clock = createFakeClock();
  // The pane "runs" 900: an unrelated process the backend names (a lying provider).
  const processes = fakeProcesses([900]);
  processes.ignores.set(900, new Set(["SIGHUP"]));
  const { backend, paneId } = await claimedPane(900);
  await settle(
    clock,
    closePane(backend, paneId, { graceMs: 100, clock, processes, token: TOKEN }),
  );
  const recorded = await claimedPane(900);
  await settle(
    clock,
    closePane(recorded.backend, recorded.paneId, {
      graceMs: 100,
      clock,
      processes,
      pid: 900,
      pidStart: "100",
      token: TOKEN,
    }),
  );
  assert.deepEqual(processes.signals, [], "nothing of 900 was signalled");
  assert.ok(processes.alive(900));
});

Deno.test("closePane() ends a claimed pane's surviving program, one process at a time, while it carries the token", async () => {
  const clock = createFakeClock();
  const processes = fakeProcesses([910, 911, 912]);
  processes.leaders.set(911, 910);
  processes.leaders.set(912, 910);
  for (const pid of [910, 911]) processes.environs.set(pid, { MUXBRIDGE_SPAWN_TOKEN: TOKEN });
  // 912 is in the group but does not carry the token: left alone.
  processes.environs.set(912, {});
  const { backend, paneId } = await claimedPane(910);
  backend.exitsOnInterrupt = true;
  const result = await settle(
    clock,
    closePane(backend, paneId, { graceMs: 100, clock, processes, token: TOKEN }),
  );
  assert.equal(result.programTerminated, true);
  assert.deepEqual(processes.signals, ["SIGTERM 910", "SIGTERM 911"]);
  assert.ok(processes.alive(912));
});

Deno.test("closePane() with interrupt signal sends SIGTERM to the recorded program's group, not a typed Ctrl+C", async () => {
  const { backend, paneId } = await paneWithPid(777);
  const processes = fakeProcesses([777]);
  const clock = createFakeClock();
  const result = await settle(
    clock,
    closePane(backend, paneId, {
      graceMs: 250,
      clock,
      processes,
      pid: 777,
      pidStart: "100",
      interrupt: "signal",
    }),
  );
  assert.equal(processes.signals[0], "SIGTERM -777");
  assert.ok(!backend.log.includes(`interrupt ${paneId}`), backend.log.join("; "));
  assert.equal(result.alreadyGone, false);
});

Deno.test("closePane() with interrupt signal types Ctrl+C when the program is not the recorded one", async () => {
  const { backend, paneId } = await paneWithPid(777);
  // The recorded pid now belongs to a later process (another start stamp): never signalled.
  const processes = fakeProcesses([777]);
  processes.starts.set(777, "999");
  const clock = createFakeClock();
  await settle(
    clock,
    closePane(backend, paneId, {
      graceMs: 250,
      clock,
      processes,
      pid: 777,
      pidStart: "100",
      interrupt: "signal",
    }),
  );
  assert.ok(backend.log.includes(`interrupt ${paneId}`), backend.log.join("; "));
});

Deno.test("closePane() with interrupt signal types Ctrl+C instead when the pid is a claim without the pane's token", async () => {
  const { backend, paneId } = await claimedPane(920);
  const processes = fakeProcesses([920]);
  const clock = createFakeClock();
  await settle(
    clock,
    closePane(backend, paneId, {
      graceMs: 250,
      clock,
      processes,
      pid: 920,
      pidStart: "100",
      token: TOKEN,
      interrupt: "signal",
    }),
  );
  assert.deepEqual(processes.signals, [], "nothing of 920 was signalled");
  assert.ok(backend.log.includes(`interrupt ${paneId}`), backend.log.join("; "));
});
