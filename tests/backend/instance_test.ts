/**
 * lib/backend/instance.ts: an instance is the recorded one only when every fact either side has,
 * the other has too and agrees with; a server named by pid is read once and then looked up.
 */

import assert from "node:assert/strict";
import { currentInstance, instanceDiffers, recordInstance } from "../../lib/backend/instance.ts";
import { createFakeBackend } from "../fakes/fake_backend.ts";
import { fakeProcesses } from "../fakes/memory_store.ts";

const tmux = { address: "/tmp/tmux-1000/default", pid: 10, pidStart: "500", startedAt: [7, 7] } as {
  address: string;
  pid: number;
  pidStart: string;
  startedAt: [number, number];
};

Deno.test("instanceDiffers() says nothing for the same server, and why for another", () => {
  assert.equal(instanceDiffers(tmux, { ...tmux }), null);
  assert.match(
    instanceDiffers(tmux, { ...tmux, address: "/tmp/x" }) ?? "",
    /answers at "\/tmp\/x"/,
  );
  assert.match(
    instanceDiffers(tmux, { ...tmux, pid: 11, pidStart: "900" }) ?? "",
    /another process \(pid 10 when the pane opened, now 11\)/,
  );
  assert.match(
    instanceDiffers(tmux, { ...tmux, pidStart: "900" }) ?? "",
    /a later process with the same pid 10/,
  );
  assert.match(instanceDiffers(tmux, { ...tmux, startedAt: [9, 9] }) ?? "", /started again/);
  assert.match(
    instanceDiffers({ address: "s", stamp: "a" }, { address: "s", stamp: "b" }) ?? "",
    /another instance/,
  );
});

Deno.test("instanceDiffers() takes a fact known on one side only as no proof", () => {
  const { pidStart: _, ...noStart } = tmux;
  assert.match(instanceDiffers(tmux, noStart) ?? "", /known on one side only/);
  assert.match(instanceDiffers({ address: "s" }, { address: "s", stamp: "x" }) ?? "", /one side/);
});

Deno.test("instanceDiffers() reads start times as spans: overlapping is the same, apart is not", () => {
  const z = (a: number, b: number) => ({ address: "work", startedAt: [a, b] as [number, number] });
  assert.equal(instanceDiffers(z(100, 102), z(101, 103)), null);
  assert.match(instanceDiffers(z(100, 102), z(104, 105)) ?? "", /started again/);
});

Deno.test("recordInstance() adds the server pid's start stamp", () => {
  const processes = fakeProcesses([10]);
  processes.starts.set(10, "500");
  assert.deepEqual(recordInstance({ address: "a", pid: 10 }, processes), {
    address: "a",
    pid: 10,
    pidStart: "500",
  });
  assert.deepEqual(recordInstance({ address: "a", pid: 11 }, processes), { address: "a", pid: 11 });
});

Deno.test("currentInstance() asks once while the server by pid and start stamp runs, and again after", async () => {
  const backend = createFakeBackend();
  backend.instanceNow = { address: "s", pid: 10 };
  let asked = 0;
  const instance = backend.instance.bind(backend);
  backend.instance = () => (asked++, instance());
  const processes = fakeProcesses([10]);
  processes.starts.set(10, "500");
  await currentInstance(backend, processes);
  await currentInstance(backend, processes);
  assert.equal(asked, 1);
  // The server was restarted: the same pid, another process.
  processes.starts.set(10, "600");
  assert.equal((await currentInstance(backend, processes))?.pidStart, "600");
  assert.equal(asked, 2);
  // No pid: asked every time.
  backend.instanceNow = { address: "s", stamp: "x" };
  processes.living.delete(10);
  await currentInstance(backend, processes);
  await currentInstance(backend, processes);
  assert.equal(asked, 4);
});
