/**
 * The provider backend against providers that misbehave: a real provider process
 * (`tests/fakes/bin/pane-provider`) that prints non-JSON, answers with the wrong id, never
 * answers, exits mid-call, names a pane its list never shows or sends a huge line. Each must be
 * a bounded, logged error; the provider is restarted; no pane is opened twice; nothing is left
 * running. No wall-clock bound is asserted: waits are conditions.
 */

import assert from "node:assert/strict";
import { createProviderBackend } from "../../backends/provider/backend.ts";
import type { Backend } from "../../lib/backend/backend.ts";
import { type Clock, createRealClock, waitFor } from "../../lib/sys/clock.ts";
import { isMuxError, toMuxError } from "../../lib/sys/errors.ts";
import { createLogger } from "../../lib/sys/log.ts";
import { createProcesses } from "../../lib/sys/processes.ts";
import { isPending, resolveLostSpawn, spawnRecorded } from "../../lib/session/lost_spawns.ts";
import { closePane } from "../../lib/session/close_pane.ts";
import { runCleanup } from "../../lib/session/cleanup.ts";
import { createFakeClock, type FakeClock } from "../fakes/fake_clock.ts";
import { createMemoryStore } from "../fakes/memory_store.ts";
import { writeStandIn } from "../helpers/stand_in.ts";
import { until } from "../helpers/until.ts";
import { FAKE_PROVIDER, openerWith, providerDeps } from "./provider_fixture.ts";
import { validatePaneId, validateSessionId } from "../../lib/sys/validate.ts";

const clock = createRealClock();
const processes = createProcesses();

interface FakeState {
  panes: Array<{ id: string; pid: number; token?: string }>;
  calls: string[];
  starts: number;
  pids: number[];
  spawned: number[];
}

/** A fake provider with `fault`, a backend on it and what it logged. */
async function fakeProvider(
  fault: string,
  flags: Record<string, unknown> = {},
  options: { command?: readonly string[]; clock?: Clock; env?: Record<string, string> } = {},
) {
  const dir = await Deno.makeTempDir({ prefix: "muxbridge-provider-" });
  const statePath = `${dir}/state.json`;
  const logs: string[] = [];
  const deps = providerDeps(
    options.command ?? [FAKE_PROVIDER],
    { command_timeout_ms: 3000, ...flags },
    createLogger("debug", (l) => logs.push(l)),
  );
  const open = openerWith({
    FAKE_PROVIDER_STATE: statePath,
    FAKE_PROVIDER_FAULT: fault,
    ...options.env,
    // The fake is a Deno script: the Deno running the tests first on PATH.
    PATH: `${Deno.execPath().replace(/\/[^/]*$/, "")}:${Deno.env.get("PATH") ?? ""}`,
  });
  // How many provider processes have started and not yet ended.
  let running = 0;
  const backend = createProviderBackend(options.clock ? { ...deps, clock: options.clock } : deps, {
    open: (argv, o) => {
      running++;
      return open(argv, {
        ...o,
        onExit: (exit) => {
          running--;
          o.onExit(exit);
        },
      });
    },
    backoffMs: 20,
    maxBackoffMs: 200,
  });
  const state = (): FakeState => JSON.parse(Deno.readTextFileSync(statePath));
  return {
    dir,
    backend,
    logs,
    state,
    running: () => running,
    async close() {
      await backend.dispose?.();
      let pids: number[] = [];
      try {
        pids = state().pids;
      } catch { /* never started */ }
      await until("every provider process is gone", () => pids.every((p) => !processes.alive(p)));
      try {
        for (const p of state().panes) {
          try {
            Deno.kill(-p.pid, "SIGKILL");
          } catch { /* gone */ }
        }
      } catch { /* no state */ }
      await Deno.remove(dir, { recursive: true });
    },
  };
}

/** Runs `op` until it stops failing for want of a provider (a slow start under load). */
async function eventually<T>(op: () => Promise<T>): Promise<T> {
  let last: unknown;
  const ok = await waitFor(clock, async () => {
    try {
      last = await op();
      return true;
    } catch (err) {
      if (!isMuxError(err, "timed_out", "backend_unreachable", "command_failed")) throw err;
      last = err;
      return false;
    }
  }, { deadline: clock.now() + 30_000, maxIntervalMs: 200 });
  if (!ok) throw last;
  return last as T;
}

const FAULTS = [
  {
    fault: "garbage",
    code: "unparseable_output",
    restarts: true,
    what: "prints a line that is not JSON",
  },
  {
    fault: "wrong-id",
    code: "unparseable_output",
    restarts: true,
    what: "answers with the wrong id",
  },
  { fault: "huge", code: "unparseable_output", restarts: true, what: "sends a 2 MiB line" },
  { fault: "exit", code: "command_failed", restarts: true, what: "exits mid-call" },
  { fault: "hang", code: "timed_out", restarts: true, what: "never answers" },
  {
    fault: "ghost",
    code: "unparseable_output",
    restarts: false,
    what: "names a pane its list never shows",
  },
] as const;

for (const { fault, code, restarts, what } of FAULTS) {
  Deno.test(`provider backend: a provider that ${what} fails the spawn with ${code}, logged; the pane it made is closed by its token, opened once, and nothing is left running`, async () => {
    // Only the hanging provider needs a short command timeout; for the others a timeout under
    // load would be a second fault (a restart, another code) the test is not about.
    const f = await fakeProvider(fault, { command_timeout_ms: fault === "hang" ? 3000 : 60_000 });
    try {
      await eventually(() => f.backend.probe());
      const progDir = await Deno.makeTempDir({ dir: f.dir });
      const standIn = await writeStandIn(progDir);
      const store = createMemoryStore();
      const deps = { store, clock, processes, graceMs: 300, log: createLogger("error", () => {}) };
      const sessionId = validateSessionId("ses_providerFault");
      const result = await spawnRecorded(
        f.backend,
        {
          sessionId,
          title: "fault",
          argv: [standIn, "attach", "http://127.0.0.1:4096", "--session", sessionId],
          cwd: progDir,
          env: {},
          owner: "4242:1",
        },
        { sessionId, title: "fault", openedAt: "2026-01-01T00:00:00Z", owner: "4242:1" },
        deps,
      );
      assert.equal(result.ok, false);
      assert.ok(!result.ok);
      assert.equal(toMuxError(result.error).code, code, toMuxError(result.error).message);
      // The lost spawn is resolved as the bridge does: at once (spawnRecorded closes the pane
      // it finds by its token, often before the program has run at all), or on a later look.
      await waitFor(clock, async () => {
        const record = [...store.records.values()].find(isPending);
        if (record) await resolveLostSpawn(f.backend, record, deps, false);
        return store.records.size === 0;
      }, { deadline: clock.now() + 30_000, maxIntervalMs: 200 });
      assert.equal(store.records.size, 0, "no record is left");
      // The program's pid as the provider spawned it (not as the program records its own
      // launch, which a close under load comes before: the wait for it timed out in the load
      // gate, 2 runs of 4).
      const [program] = f.state().spawned;
      assert.ok(program > 0, "the provider made the pane");
      await until("the pane's program is gone", () => !processes.alive(program));
      const state = f.state();
      assert.equal(state.calls.filter((c) => c === "spawn").length, 1, "the spawn was sent once");
      assert.ok(
        !(await f.backend.findSpawned(result.pending.token)).length,
        "no pane carries the token",
      );
      assert.equal(state.starts > 1, restarts, `provider starts: ${state.starts}`);
      assert.ok(
        f.logs.some((l) => / (warn|error): provider /.test(l)),
        `the failure is logged:\n${f.logs.join("")}`,
      );
    } finally {
      await f.close();
    }
  });
}

Deno.test("provider backend: dispose() stops the provider and nothing it ran is left", async () => {
  const f = await fakeProvider("");
  try {
    await eventually(() => f.backend.probe());
    const progDir = await Deno.makeTempDir({ dir: f.dir });
    const { paneId } = await f.backend.spawn({
      sessionId: validateSessionId("ses_providerDispose"),
      title: "t",
      argv: [await writeStandIn(progDir)],
      cwd: progDir,
      env: {},
      owner: "cli",
    });
    const pane = f.state().panes.find((p) => p.id === paneId)!;
    await f.backend.kill(paneId);
    await until("the pane's program is gone", () => !processes.alive(pane.pid));
    await f.backend.dispose?.();
    const [pid] = f.state().pids;
    await until("the provider is gone", () => !processes.alive(pid));
    // A later call starts it again; the pane stays gone.
    await assert.rejects(f.backend.kill(paneId), (e) => isMuxError(e, "pane_not_found"));
    assert.equal(f.state().starts, 2);
  } finally {
    await f.close();
  }
});

Deno.test("provider backend: a notification from the provider is ignored, no violation", async () => {
  const f = await fakeProvider("notify:list");
  try {
    await eventually(() => f.backend.probe());
    assert.deepEqual(await f.backend.inspect(validatePaneId("p99")), null);
    assert.ok(f.logs.some((l) => l.includes("notification paneExited ignored")), f.logs.join(""));
    assert.equal(f.state().starts, 1, "a notification is no violation");
  } finally {
    await f.close();
  }
});

/**
 * Settles `op` on a fake clock that moves only while no provider process runs: the backoff
 * before a start passes at once, a call's timeout never fires while a provider starts or runs
 * (however long that takes on a loaded machine), so the provider's own exit decides.
 */
async function whileNoneRuns<T>(
  clock: FakeClock,
  running: () => number,
  op: Promise<T>,
): Promise<T> {
  let done = false;
  const settled = op.finally(() => (done = true));
  settled.catch(() => {});
  while (!done) {
    if (running() === 0 && clock.pending() > 0) await clock.advance(1);
    else await new Promise((r) => setTimeout(r, 5)); // a provider runs: real time passes
  }
  return await settled;
}

Deno.test("provider backend: a provider that fails at start, however slowly it starts, is retried with a capped backoff; a call that cannot wait for it fails at once with backend_unreachable", async () => {
  // The test's clock: the 100 ms call timeout (shorter than the 160 and 200 ms backoffs, so
  // calls must fail at once) is never what ends a start. Each start takes over 300 ms of real
  // time (as a Deno start does on a loaded machine), which must not matter.
  const clock = createFakeClock();
  const f = await fakeProvider("start-fail", { command_timeout_ms: 100 }, {
    command: ["/bin/sh", "-c", 'sleep 0.3; exec "$0" "$@"', FAKE_PROVIDER],
    clock,
  });
  try {
    const seen: string[] = [];
    for (let i = 0; i < 8; i++) {
      const startsBefore = readStarts(f);
      const err = await whileNoneRuns(clock, f.running, f.backend.probe()).then(
        () => null,
        toMuxError,
      );
      assert.ok(err, "every probe fails");
      const delay = /restarts in (\d+) ms/.exec(err.message)?.[1];
      seen.push(delay ? `${err.code} ${delay}` : err.code);
      if (err.code === "backend_unreachable") {
        assert.equal(readStarts(f), startsBefore, "failed at once: no start");
        await clock.advance(Number(delay)); // time passes: the next call may start it
      } else assert.match(err.message, /exited 1: fake provider: failing at start/);
    }
    // The delay doubles from 20 ms per failure in a row (20, 40, 80: waited within the call),
    // 160 ms cannot be waited within 100 ms, and it stops at the 200 ms cap.
    assert.deepEqual(seen, [
      "command_failed",
      "command_failed",
      "command_failed",
      "command_failed",
      "backend_unreachable 160",
      "command_failed",
      "backend_unreachable 200",
      "command_failed",
    ]);
    assert.equal(f.state().starts, 6, "started only when the backoff allowed");
    assert.ok(
      f.logs.some((l) => l.includes("exited 1: fake provider: failing at start")),
      f.logs.join(""),
    );
  } finally {
    await f.close();
  }
});

/** The fake provider's starts so far (0 before its first). */
function readStarts(f: { state(): FakeState }): number {
  try {
    return f.state().starts;
  } catch {
    return 0;
  }
}

Deno.test("provider backend: a provider speaking another protocol version is unsupported_version", async () => {
  const f = await fakeProvider("old-protocol");
  try {
    await assert.rejects(f.backend.probe(), (e) => isMuxError(e, "unsupported_version"));
  } finally {
    await f.close();
  }
});

Deno.test("provider backend: a provider command that does not exist is binary_not_found, naming provider.command", async () => {
  const backend = createProviderBackend(providerDeps(["/nonexistent/muxbridge-provider"]));
  try {
    await assert.rejects(
      backend.probe(),
      (e) => isMuxError(e, "binary_not_found") && /provider\.command/.test(e.hint ?? ""),
    );
  } finally {
    await backend.dispose?.();
  }
});

Deno.test("provider backend: without provider.command the backend is invalid_config", async () => {
  const backend: Backend = createProviderBackend({
    ...providerDeps(["x"]),
    config: { ...providerDeps(["x"]).config, provider: {} },
  });
  await assert.rejects(backend.probe(), (e) => isMuxError(e, "invalid_config"));
  const checks = await backend.doctor();
  assert.equal(checks[0].status, "fail");
});

Deno.test("provider backend: a provider that names an unrelated process as its pane's program gets nothing of it signalled", async () => {
  // An unrelated process, in a process group and session of its own.
  const victim = new Deno.Command("sleep", {
    args: ["424242"],
    detached: true,
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
  const f = await fakeProvider("", {}, {
    env: { FAKE_PROVIDER_PID: String(victim.pid), FAKE_PROVIDER_INSTANCE: "fake server 1" },
  });
  try {
    const store = createMemoryStore();
    const progDir = await Deno.makeTempDir({ dir: f.dir, prefix: "prog-" });
    const standIn = await writeStandIn(progDir, { ignoreSignals: true });
    const sessionId = validateSessionId("ses_providerLies");
    const fields = { sessionId, title: "lies", openedAt: "2026-01-01T00:00:00Z", owner: "cli" };
    const deps = { store, clock, processes, graceMs: 300, log: createLogger("error") };
    await eventually(() => f.backend.probe());
    const spawned = await spawnRecorded(
      f.backend,
      {
        sessionId,
        title: "lies",
        argv: [standIn, "attach"],
        cwd: progDir,
        env: {},
        owner: "cli",
      },
      fields,
      deps,
    );
    assert.ok(spawned.ok, "the pane opened");
    assert.equal(spawned.pane.pid, victim.pid, "the provider named the unrelated process");
    const start = processes.startTime(victim.pid);
    assert.ok(start);
    // `close` of the pane, with the program the record keeps: the provider's word.
    const close = {
      graceMs: 300,
      clock,
      processes,
      pid: victim.pid,
      pidStart: start,
      token: spawned.pending.token,
    };
    await closePane(f.backend, spawned.pane.paneId, close);
    assert.equal(await f.backend.inspect(spawned.pane.paneId), null, "the pane itself is closed");
    // A cleanup of its record, the pane gone: the recorded program is looked for.
    store.put({
      ...fields,
      paneId: spawned.pane.paneId,
      backend: "provider",
      pid: victim.pid,
      pidStart: start,
      token: spawned.pending.token,
      ...(spawned.instance ? { instance: spawned.instance } : {}),
    });
    await runCleanup({
      store,
      backends: { provider: f.backend },
      processes,
      client: () => null,
      clock,
      log: createLogger("error"),
      graceMs: 300,
    }, { dryRun: false, all: true });
    await closePane(f.backend, spawned.pane.paneId, close);
    assert.ok(processes.alive(victim.pid), "the unrelated process runs on");
    assert.equal(processes.startTime(victim.pid), start, "and is the same process");
  } finally {
    try {
      victim.kill("SIGKILL");
    } catch { /* gone */ }
    await victim.status;
    await f.close();
  }
});
