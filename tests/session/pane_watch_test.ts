import assert from "node:assert/strict";
import type { Logger } from "../../lib/sys/log.ts";
import { type PaneId, validatePaneId, validateSessionId } from "../../lib/sys/validate.ts";
import { PaneWatch, type WatchedPane } from "../../lib/session/pane_watch.ts";
import { MuxError } from "../../lib/sys/errors.ts";
import { createFakeBackend, type FakeBackend } from "../fakes/fake_backend.ts";
import { createFakeClock } from "../fakes/fake_clock.ts";
import { fakeProcesses } from "../fakes/memory_store.ts";

const SID = validateSessionId("ses_w");

function setup(caps: { marks?: boolean } = {}) {
  const clock = createFakeClock();
  const backend: FakeBackend = createFakeBackend("tmux", caps);
  const calls = { inspect: 0, listOwned: 0, sweep: 0 };
  const inspect = backend.inspect.bind(backend);
  backend.inspect = (id) => (calls.inspect++, inspect(id));
  const listOwned = backend.listOwned.bind(backend);
  backend.listOwned = () => (calls.listOwned++, listOwned());
  const open = new Map<PaneId, WatchedPane>();
  const gone: string[] = [];
  const warnings: string[] = [];
  const log: Logger = {
    debug: () => {},
    info: () => {},
    warn: (m) => warnings.push(m),
    error: () => {},
  };
  let lost = false;
  let interval = 2000;
  const watch = new PaneWatch({
    clock,
    log,
    processes: fakeProcesses(),
    intervalMs: () => interval,
    panes: () => [...open.values()],
    lost: () => lost,
    sweep: () => Promise.resolve(void calls.sweep++),
    gone: (sessionId, paneId) => {
      gone.push(`${sessionId} ${paneId}`);
      open.delete(paneId);
    },
  });
  const add = async () => {
    const pane = await backend.spawn({
      sessionId: SID,
      title: "t",
      argv: ["opencode"],
      cwd: "/",
      env: {},
      owner: "1:1",
    });
    const paneId = validatePaneId(pane.paneId);
    open.set(paneId, { sessionId: SID, paneId, backend });
    return paneId;
  };
  return {
    clock,
    backend,
    calls,
    gone,
    warnings,
    watch,
    add,
    open,
    setLost: (v: boolean) => (lost = v),
    setInterval: (ms: number) => (interval = ms),
  };
}

Deno.test("PaneWatch lists panes once per tick and inspects only a pane missing from the list", async () => {
  const h = setup();
  await h.add();
  const second = await h.add();
  h.watch.ensure();
  await h.clock.advance(2000);
  assert.deepEqual(h.calls, { inspect: 0, listOwned: 1, sweep: 0 });
  h.backend.vanish(second);
  await h.clock.advance(2000);
  assert.equal(h.calls.listOwned, 2);
  assert.equal(h.calls.inspect, 1, "only the missing pane is confirmed");
  assert.deepEqual(h.gone, [`ses_w ${second}`]);
});

Deno.test("PaneWatch inspects every pane of a backend without marks", async () => {
  const h = setup({ marks: false });
  await h.add();
  await h.add();
  h.watch.ensure();
  await h.clock.advance(2000);
  assert.deepEqual(h.calls, { inspect: 2, listOwned: 0, sweep: 0 });
});

Deno.test("PaneWatch closes what is left of a dead pane, then reports it gone", async () => {
  const h = setup();
  const paneId = await h.add();
  h.backend.panes.get(paneId)!.dead = true;
  h.watch.ensure();
  await h.clock.advance(2000);
  assert.ok(h.backend.log.includes(`kill ${paneId}`));
  assert.equal(h.backend.panes.size, 0);
  assert.deepEqual(h.gone, [`ses_w ${paneId}`]);
});

Deno.test("PaneWatch warns once while panes cannot be checked, and never calls them gone", async () => {
  const h = setup({ marks: false });
  await h.add();
  h.watch.ensure();
  for (let i = 0; i < 3; i++) {
    h.backend.failNext("inspect", new MuxError("backend_unreachable", "tmux is gone"));
    await h.clock.advance(2000);
  }
  assert.equal(h.warnings.length, 1, h.warnings.join("\n"));
  assert.deepEqual(h.gone, []);
});

Deno.test("PaneWatch runs only while something is watched, at the interval of each tick", async () => {
  const h = setup();
  h.watch.ensure();
  await h.clock.advance(2000);
  assert.equal(h.clock.pending(), 0, "nothing open: no next tick");
  const paneId = await h.add();
  h.setInterval(500);
  h.watch.ensure();
  h.watch.ensure();
  assert.equal(h.clock.pending(), 1, "one tick scheduled however often it is asked");
  await h.clock.advance(500);
  assert.equal(h.calls.listOwned, 1);
  h.open.delete(paneId);
  await h.clock.advance(500);
  assert.equal(h.clock.pending(), 0);
});

Deno.test("PaneWatch looks again for lost spawns on each tick while there are any", async () => {
  const h = setup();
  h.setLost(true);
  h.watch.ensure();
  await h.clock.advance(2000);
  await h.clock.advance(2000);
  assert.equal(h.calls.sweep, 2);
  h.setLost(false);
  await h.clock.advance(2000);
  assert.equal(h.calls.sweep, 2);
  assert.equal(h.clock.pending(), 0);
});

Deno.test("PaneWatch stop() ends it for good", async () => {
  const h = setup();
  await h.add();
  h.watch.ensure();
  h.watch.stop();
  h.watch.ensure();
  await h.clock.advance(10_000);
  assert.equal(h.calls.listOwned, 0);
  assert.equal(h.clock.pending(), 0);
});

Deno.test("PaneWatch reports a pane gone, and closes nothing, when its id now shows another program's token", async () => {
  const h = setup({ marks: false });
  const token = "0123456789abcdef0123456789abcdef";
  const paneId = await h.add();
  h.open.set(paneId, { ...h.open.get(paneId)!, token });
  // A restarted multiplexer gave the id to a pane of the user's (no token in its start command).
  const pane = h.backend.panes.get(paneId)!;
  h.backend.panes.set(paneId, { ...pane, req: { ...pane.req, token: undefined } });
  h.watch.ensure();
  await h.clock.advance(2000);
  assert.deepEqual(h.gone, [`${SID} ${paneId}`]);
  assert.ok(h.backend.panes.has(paneId), "the user's pane stays");
  assert.deepEqual(h.backend.log.filter((l) => /kill|interrupt/.test(l)), []);
  assert.match(h.warnings.join("\n"), /did not start/);
});
