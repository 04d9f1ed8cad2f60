import assert from "node:assert/strict";
import type { Logger } from "../../lib/sys/log.ts";
import { createOpencodeClient } from "../../lib/opencode/client.ts";
import { type PollTarget, StatusPoller } from "../../lib/opencode/status_poller.ts";
import { createFakeClock } from "../fakes/fake_clock.ts";
import { createFakeOpencode } from "../fakes/fake_opencode.ts";

function setup(opts: { intervalMs?: number; maxBackoffMs?: number } = {}) {
  const clock = createFakeClock(0);
  const server = createFakeOpencode();
  const pollTimes: number[] = [];
  const client = createOpencodeClient({
    url: "http://oc",
    fetch: (input, init) => {
      pollTimes.push(clock.now());
      return server.fetch(input, init);
    },
    clock,
  });
  let targets: PollTarget[] = [];
  const seen: string[] = [];
  const logs: string[] = [];
  const log: Logger = {
    debug: () => {},
    info: (m) => logs.push(`info ${m}`),
    warn: (m) => logs.push(`warn ${m}`),
    error: (m) => logs.push(`error ${m}`),
  };
  const poller = new StatusPoller({
    clock,
    log,
    intervalMs: opts.intervalMs ?? 1000,
    ...(opts.maxBackoffMs ? { maxBackoffMs: opts.maxBackoffMs } : {}),
    active: () => targets.length > 0,
    targets: () => targets,
    client: () => client,
    observe: (id, status, at) => seen.push(`${at} ${id} ${status}`),
  });
  return {
    clock,
    server,
    poller,
    seen,
    logs,
    pollTimes,
    set: (t: PollTarget[]) => {
      targets = t;
      poller.update();
    },
  };
}

Deno.test("StatusPoller arms nothing until something is tracked and stops when nothing is", async () => {
  const h = setup();
  h.poller.update();
  assert.equal(h.clock.pending(), 0);
  h.server.busy("ses_a");
  h.set([{ sessionId: "ses_a", directory: "/w" }, { sessionId: "ses_b", directory: "/w" }]);
  await h.clock.advance(3000);
  assert.deepEqual(h.pollTimes, [1000, 2000, 3000]);
  assert.deepEqual(h.seen.slice(0, 2), ["1000 ses_a busy", "1000 ses_b absent"]);
  h.set([]);
  assert.equal(h.clock.pending(), 0);
  await h.clock.advance(10_000);
  assert.equal(h.pollTimes.length, 3);
  assert.equal(h.poller.running, false);
});

Deno.test("StatusPoller sends one request per directory", async () => {
  const h = setup();
  h.set([
    { sessionId: "ses_a", directory: "/one" },
    { sessionId: "ses_b", directory: "/two" },
    { sessionId: "ses_c", directory: "/one" },
  ]);
  await h.clock.advance(1000);
  assert.deepEqual(h.server.requests.sort(), [
    "GET /session/status?directory=%2Fone",
    "GET /session/status?directory=%2Ftwo",
  ]);
  assert.equal(h.seen.length, 3);
});

Deno.test("StatusPoller backs off on a dead server, capped, observes nothing, and logs once each way", async () => {
  const h = setup({ intervalMs: 1000, maxBackoffMs: 8000 });
  h.server.mode = "down";
  h.set([{ sessionId: "ses_a", directory: "/w" }]);
  await h.clock.advance(40_000);
  const gaps = h.pollTimes.slice(1).map((t, i) => t - h.pollTimes[i]);
  assert.deepEqual(gaps.slice(0, 5), [2000, 4000, 8000, 8000, 8000]);
  assert.deepEqual(h.seen, []);
  assert.equal(h.poller.reachable, false);
  assert.equal(h.logs.filter((l) => l.startsWith("warn")).length, 1);
  h.server.mode = "up";
  await h.clock.advance(20_000);
  assert.equal(h.poller.reachable, true);
  assert.equal(h.logs.filter((l) => l.startsWith("info")).length, 1);
  const after = h.pollTimes.slice(-3);
  assert.deepEqual(
    after.slice(1).map((t, i) => t - after[i]),
    [1000, 1000],
    "back to the interval",
  );
});

Deno.test("StatusPoller never overlaps polls while one hangs, and stop() aborts it", async () => {
  const h = setup({ intervalMs: 1000 });
  h.server.mode = "hang";
  h.set([{ sessionId: "ses_a", directory: "/w" }]);
  await h.clock.advance(1500);
  assert.equal(h.pollTimes.length, 1);
  assert.ok(h.poller.running);
  h.poller.stop();
  await h.clock.advance(10_000);
  assert.equal(h.pollTimes.length, 1);
  assert.equal(h.clock.pending(), 0);
  assert.deepEqual(h.seen, []);
});

Deno.test("StatusPoller does not poll without a server", () => {
  const clock = createFakeClock(0);
  const poller = new StatusPoller({
    clock,
    log: { debug() {}, info() {}, warn() {}, error() {} },
    intervalMs: 1000,
    active: () => true,
    targets: () => [{ sessionId: "ses_a", directory: "/w" }],
    client: () => null,
    observe: () => assert.fail("no observation without a server"),
  });
  poller.update();
  assert.equal(clock.pending(), 0);
});
