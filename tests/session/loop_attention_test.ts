/**
 * A child that waits for the user, through the session loop on fakes (simulated clock, fake
 * backend with a status place, fake runner, fake bell, fake server): the pane shows it at once,
 * rings once per wait, `attention_focus` and `attention_command` run as configured and at most
 * once a second across a burst, the server's pending lists correct missed events, and the
 * server is warmed for the first pane's `opencode attach`.
 */

import assert from "node:assert/strict";
import type { Credentials } from "../../lib/opencode/credentials.ts";
import { createOpencodeClient } from "../../lib/opencode/client.ts";
import type { LoopInput } from "../../lib/session/events.ts";
import type { BellOutcome, PaneBell } from "../../lib/session/pane_bell.ts";
import type { Logger } from "../../lib/sys/log.ts";
import { validateSessionId as sid } from "../../lib/sys/validate.ts";
import { createFakeBackend, type FakeBackend, withStatusPlace } from "../fakes/fake_backend.ts";
import { createFakeClock } from "../fakes/fake_clock.ts";
import { createFakeOpencode } from "../fakes/fake_opencode.ts";
import { createFakeRunner } from "../fakes/fake_runner.ts";
import { loopHarness } from "../helpers/loop_harness.ts";

const created = (id: string, title = `child ${id}`): LoopInput => ({
  kind: "created",
  info: { id: sid(id), title, parentId: sid("ses_parent"), directory: "/srv/project" },
});
const busy = (id: string): LoopInput => ({ kind: "status", sessionId: sid(id), status: "busy" });
const ask = (id: string, rid: string, open = true): LoopInput => ({
  kind: "attention",
  sessionId: sid(id),
  requestId: rid,
  what: "permission",
  open,
});

interface Setup {
  flags?: Record<string, unknown>;
  server?: ReturnType<typeof createFakeOpencode>;
}

function setup(options: Setup = {}) {
  const clock = createFakeClock();
  const backend: FakeBackend = withStatusPlace(createFakeBackend());
  const focused: string[] = [];
  backend.focus = (paneId) => {
    focused.push(paneId);
    return Promise.resolve();
  };
  const rung: Array<{ exitFile: string; pid?: number }> = [];
  const bell: PaneBell = {
    ring(pane): BellOutcome {
      rung.push(pane);
      return "rung";
    },
  };
  const runner = createFakeRunner().onPrefix(["notify"], {});
  const logs: string[] = [];
  const log: Logger = {
    debug: (m) => logs.push(`debug ${m}`),
    info: (m) => logs.push(`info ${m}`),
    warn: (m) => logs.push(`warn ${m}`),
    error: (m) => logs.push(`error ${m}`),
  };
  const server = options.server;
  const h = loopHarness({
    flags: { poll_interval_ms: 2000, ...options.flags },
    clock,
    backend,
    deps: {
      log,
      run: runner.run,
      bell,
      ...(server
        ? {
          server: (url: string, auth?: Credentials) =>
            createOpencodeClient({ url, fetch: server.fetch, clock, ...(auth ? { auth } : {}) }),
        }
        : {}),
    },
  });
  return { ...h, focused, rung, runner, logs };
}

async function openBusy(h: ReturnType<typeof setup>, id: string): Promise<string> {
  h.loop.handle(created(id));
  h.loop.handle(busy(id));
  await h.clock.advance(50);
  const pane = [...h.backend.panes.values()].find((p) => p.req.sessionId === id);
  assert.ok(pane, `a pane for ${id}`);
  return pane.paneId;
}

const statuses = (b: FakeBackend, pane: string) =>
  b.log.filter((l) => l.startsWith(`status ${pane} `)).map((l) => l.split(" ")[2]);

Deno.test("SessionLoop shows a waiting child at once and rings its pane's bell once per wait", async () => {
  const h = setup();
  const pane = await openBusy(h, "ses_a");
  await h.clock.advance(100); // inside the status rate limit of the pane's first view
  h.loop.handle(ask("ses_a", "per_1"));
  h.loop.handle(ask("ses_a", "per_2"));
  await h.clock.advance(0);
  assert.deepEqual(statuses(h.backend, pane).at(-1), "waiting");
  assert.equal(h.backend.panes.get(pane)?.title, "[needs you] child ses_a");
  const token = [...h.backend.panes.values()][0].req.token;
  assert.deepEqual(h.rung, [{ exitFile: `/memory/exits/${token}` }], "one bell for the wait");
  // The durable record says it too, for `list`.
  const record = h.store.list().records.find((r) => r.sessionId === "ses_a");
  assert.equal(record?.status?.state, "waiting");
  assert.equal(record?.status?.waitingFor, "permission");

  h.loop.handle(ask("ses_a", "per_1", false));
  h.loop.handle(ask("ses_a", "per_2", false));
  await h.clock.advance(1500);
  assert.deepEqual(statuses(h.backend, pane).at(-1), "busy");
  h.loop.handle(ask("ses_a", "per_3"));
  await h.clock.advance(0);
  assert.equal(h.rung.length, 2, "a new wait rings again");
  assert.deepEqual(h.focused, [], "attention_focus is off by default");
  assert.deepEqual(h.runner.calls, [], "no attention_command by default");
});

Deno.test("SessionLoop focuses the pane and runs attention_command with the session id and title, as argv", async () => {
  const h = setup({
    flags: { attention_focus: true, attention_command: ["notify", "OpenCode; needs $you"] },
  });
  const pane = await openBusy(h, "ses_a");
  h.loop.handle(ask("ses_a", "per_1"));
  await h.clock.advance(0);
  assert.deepEqual(h.focused, [pane]);
  assert.deepEqual(h.runner.calls.map((c) => c.argv), [
    ["notify", "OpenCode; needs $you", "ses_a", "child ses_a"],
  ]);
  assert.equal(h.runner.calls[0].opts.timeoutMs, h.config.command_timeout_ms);
});

Deno.test("SessionLoop rings each of ten children asking at once, but focuses and runs the command once a second", async () => {
  const h = setup({ flags: { attention_focus: true, attention_command: ["notify"] } });
  const ids = Array.from({ length: 10 }, (_, i) => `ses_c${i}`);
  for (const id of ids) await openBusy(h, id);
  for (const id of ids) h.loop.handle(ask(id, `per_${id}`));
  for (const id of ids) h.loop.handle(ask(id, `per_${id}_again`)); // the same wait
  await h.clock.advance(0);
  assert.equal(h.rung.length, 10, "one bell per child");
  assert.equal(h.focused.length, 1, "one focus in the burst");
  assert.equal(h.runner.calls.length, 1, "one command in the burst");
  // A child that starts waiting a second later gets its own.
  await h.clock.advance(1000);
  await openBusy(h, "ses_late");
  h.loop.handle(ask("ses_late", "per_late"));
  await h.clock.advance(0);
  assert.equal(h.runner.calls.length, 2);
  assert.equal(h.focused.length, 2);
  assert.ok(h.logs.some((l) => l.includes("attention_command skipped")));
});

Deno.test("SessionLoop ignores a request of a session it does not track", async () => {
  const h = setup();
  await openBusy(h, "ses_a");
  h.loop.handle(ask("ses_other", "per_1"));
  await h.clock.advance(0);
  assert.deepEqual(h.rung, []);
  assert.ok(!h.backend.log.some((l) => l.includes("waiting")));
});

Deno.test("SessionLoop reads the server's pending lists with each poll: a missed ask and a missed reply are corrected", async () => {
  const server = createFakeOpencode();
  server.knowAll = true;
  server.pending = { permission: [], question: [] };
  const h = setup({ server });
  server.busy("ses_a");
  const pane = await openBusy(h, "ses_a");
  // The asked event never reached the bridge; the list has it.
  server.pending.permission.push({ id: "per_1", sessionID: "ses_a", permission: "bash" });
  server.pending.question.push({ id: "que_9", sessionID: "ses_somebody_else" }, { id: 7 });
  await h.clock.advance(2100);
  assert.ok(
    server.requests.includes("GET /permission?directory=%2Fsrv%2Fproject") &&
      server.requests.includes("GET /question?directory=%2Fsrv%2Fproject"),
    "scoped to the child's directory",
  );
  assert.equal(statuses(h.backend, pane).at(-1), "waiting");
  assert.equal(h.rung.length, 1);
  // The reply never reached the bridge either; the next list no longer has the request.
  server.pending.permission.length = 0;
  await h.clock.advance(2100);
  assert.equal(statuses(h.backend, pane).at(-1), "busy");
});

Deno.test("SessionLoop keeps the wait when the pending lists cannot be read", async () => {
  const server = createFakeOpencode();
  server.knowAll = true; // pending stays null: /permission and /question answer 404
  const h = setup({ server });
  server.busy("ses_a");
  const pane = await openBusy(h, "ses_a");
  h.loop.handle(ask("ses_a", "per_1"));
  await h.clock.advance(6100);
  assert.equal(statuses(h.backend, pane).at(-1), "waiting");
});

Deno.test("SessionLoop warms what opencode attach asks first, once per server and directory", async () => {
  const server = createFakeOpencode();
  server.knowAll = true;
  const h = setup({ server });
  await h.clock.advance(0);
  const warm = () =>
    server.requests.filter((r) => /^GET \/(agent|provider|config\/providers)\?/.test(r)).sort();
  assert.deepEqual(warm(), [
    "GET /agent?directory=%2Fwork",
    "GET /config/providers?directory=%2Fwork",
    "GET /provider?directory=%2Fwork",
  ]);
  server.busy("ses_a");
  server.busy("ses_b");
  await openBusy(h, "ses_a");
  await openBusy(h, "ses_b");
  assert.deepEqual(warm().filter((r) => r.includes("srv")), [
    "GET /agent?directory=%2Fsrv%2Fproject",
    "GET /config/providers?directory=%2Fsrv%2Fproject",
    "GET /provider?directory=%2Fsrv%2Fproject",
  ]);
});
