/**
 * The session loop's pane watch on a fake backend, fake processes and a fake clock: one listing
 * per poll, a vanished pane reported `gone` and dropped, the program that outlived it (or the
 * child a dying wrapper left) terminated, never a pid that was reused meanwhile.
 */

import assert from "node:assert/strict";
import { createFakeBackend } from "../fakes/fake_backend.ts";
import { fakeProcesses } from "../fakes/memory_store.ts";
import { loopHarness } from "../helpers/loop_harness.ts";
import { validateSessionId as sid } from "../../lib/sys/validate.ts";

function setup(pid: number) {
  const backend = createFakeBackend();
  const spawn = backend.spawn.bind(backend);
  backend.spawn = async (req) => ({ ...(await spawn(req)), pid });
  const calls = { inspect: 0, listOwned: 0 };
  const inspect = backend.inspect.bind(backend);
  backend.inspect = (id) => (calls.inspect++, inspect(id));
  const listOwned = backend.listOwned.bind(backend);
  backend.listOwned = () => (calls.listOwned++, listOwned());
  const { loop, clock, out, store, processes } = loopHarness({
    flags: { close_grace_ms: 250, poll_interval_ms: 2000 },
    backend,
    processes: fakeProcesses([pid]),
    deps: { owner: "1:1" },
  });
  const open = async (id: string) => {
    loop.handle({
      kind: "created",
      info: { id: sid(id), title: id, parentId: sid("ses_parent"), directory: "/work" },
    });
    await clock.advance(10);
  };
  return { loop, backend, clock, out, store, processes, calls, open };
}

Deno.test("SessionLoop watch lists panes once per poll and inspects only a pane missing from it", async () => {
  const h = setup(500);
  await h.open("ses_a");
  await h.open("ses_b");
  await h.open("ses_c");
  const before = { ...h.calls };
  await h.clock.advance(2000);
  assert.equal(h.calls.listOwned - before.listOwned, 1);
  assert.equal(h.calls.inspect - before.inspect, 0);
  h.backend.vanish("%2");
  await h.clock.advance(2000);
  assert.equal(h.calls.inspect - before.inspect, 1, "only the missing pane is confirmed");
  assert.deepEqual(
    h.out.filter((m) => m.type === "pane.closed").map((m) => JSON.stringify(m)),
    [JSON.stringify({ type: "pane.closed", sessionID: "ses_b", paneId: "%2", reason: "gone" })],
  );
  assert.deepEqual([...h.store.records.values()].map((r) => r.paneId).sort(), ["%1", "%3"]);
});

Deno.test("SessionLoop ends the child a wrapper left behind when its pane was closed by hand", async () => {
  const h = setup(600);
  h.processes.living.add(601);
  h.processes.leaders.set(601, 600);
  h.processes.ignores.set(601, new Set(["SIGTERM"]));
  await h.open("ses_a");
  // The user closes the pane: the wrapper (600) dies of SIGHUP, its child (601) does not.
  h.backend.vanish("%1");
  h.processes.living.delete(600);
  await h.clock.advance(2000);
  await h.clock.advance(1000);
  assert.deepEqual(h.processes.signals, [
    "SIGTERM -600",
    "SIGTERM 601",
    "SIGKILL -600",
    "SIGKILL 601",
  ]);
  assert.deepEqual([...h.processes.living], []);
});

Deno.test("SessionLoop never signals a pid reused after its pane went away", async () => {
  const h = setup(700);
  await h.open("ses_a");
  h.backend.vanish("%1");
  h.processes.starts.set(700, "999"); // 700 ended and the number went to a new process
  await h.clock.advance(2000);
  await h.clock.advance(1000);
  assert.equal(h.out.at(-1)?.type, "pane.closed");
  assert.deepEqual(h.processes.signals, []);
});

Deno.test("SessionLoop keeps no pid of a program that already ended when its pane opened", async () => {
  const h = setup(800);
  h.processes.living.delete(800);
  await h.open("ses_a");
  assert.equal([...h.store.records.values()][0].pid, undefined);
  h.processes.living.add(800); // a later process with that number
  h.backend.vanish("%1");
  await h.clock.advance(3000);
  assert.deepEqual(h.processes.signals, []);
});

Deno.test("SessionLoop shutdown waits for a survivor it is still ending", async () => {
  const h = setup(900);
  h.processes.ignores.set(900, new Set(["SIGTERM"]));
  await h.open("ses_a");
  h.backend.vanish("%1");
  await h.clock.advance(2000); // gone noticed; termination under way (SIGTERM ignored)
  let done = false;
  const shutdown = h.loop.shutdown(true).then(() => (done = true));
  await h.clock.flush();
  assert.equal(done, false, "shutdown waits");
  await h.clock.advance(1000);
  await shutdown;
  assert.deepEqual(h.processes.signals, ["SIGTERM -900", "SIGKILL -900"]);
});
