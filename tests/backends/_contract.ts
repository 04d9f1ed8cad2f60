/**
 * The backend contract: what every backend must do alike, whatever multiplexer is behind it.
 * Each backend's test file calls {@linkcode backendContract} with a fixture that starts its
 * multiplexer (the real program, or a faithful fake CLI where the real one cannot run here).
 *
 * @module
 */

import assert from "node:assert/strict";
import semver from "semver";
import { BACKENDS } from "../../backends/mod.ts";
import type { Backend, SpawnRequest } from "../../lib/backend/backend.ts";
import { createRealClock, waitFor } from "../../lib/sys/clock.ts";
import { closePane } from "../../lib/session/close_pane.ts";
import { isMuxError } from "../../lib/sys/errors.ts";
import { createProcesses } from "../../lib/sys/processes.ts";
import { silentLogger } from "../../lib/sys/log.ts";
import { isPending, resolveLostSpawn, spawnRecorded } from "../../lib/session/lost_spawns.ts";
import { runCleanup } from "../../lib/session/cleanup.ts";
import { provePane } from "../../lib/session/pane_proof.ts";
import type { PaneRecord } from "../../lib/session/pane_store.ts";
import { createMemoryStore } from "../fakes/memory_store.ts";
import { type Launch, recordedLaunches, writeStandIn } from "../helpers/stand_in.ts";
import type { AnswerFault } from "./_lost_answer.ts";
import { type Requirement, requires } from "../helpers/requires.ts";
import { type PaneId, validatePaneId, validateSessionId } from "../../lib/sys/validate.ts";
import { forgedPaneId } from "../helpers/ids.ts";
import { newSpawnToken } from "../../lib/backend/spawn_token.ts";

/** A started multiplexer with a backend pointed at it. */
export interface ContractFixture {
  /** The backend under test. */
  backend: Backend;
  /** A scratch directory (removed by `close`). */
  dir: string;
  /**
   * The fault of the backend's seam (`_lost_answer.ts`): armed, the next command that creates a
   * pane runs and its answer is lost.
   */
  answers: AnswerFault;
  /** Every pane (window, surface) of the multiplexer, read without the backend's own code. */
  paneIds(): Promise<string[]>;
  /**
   * Restarts the multiplexer at the same address (socket, session, listen address): every pane
   * and its program ends, and the new instance hands out pane ids from the start again.
   */
  restart(): Promise<void>;
  /**
   * Opens a pane of the user's, not through muxbridge, running `sleep 424242`.
   *
   * @returns Its id and its program's pid.
   */
  userPane(): Promise<{ paneId: string; pid: number }>;
  /**
   * Whether a restarted multiplexer hands out the ids muxbridge's panes had (false: the
   * provider makes its ids unique itself, as the screen example does). @default true
   */
  idsRepeat?: boolean;
  /** Stops the multiplexer and removes everything the fixture made. */
  close(): Promise<void>;
}

/** Options of {@linkcode backendContract}. */
export interface ContractOptions {
  /**
   * What the suite needs (the real program and its helpers): missing locally, the suite is
   * skipped and listed at the end of the run; missing in CI, it fails (`requires`).
   */
  requires?: readonly Requirement[];
  /** How long a pane program may take to start. @default 5000 */
  startMs?: number;
}

const clock = createRealClock();

/** Spawns the stand-in and waits until it recorded its launch. */
async function spawnStandIn(
  f: ContractFixture,
  sessionId: string,
  extra: Partial<SpawnRequest> = {},
  ignoreSignals = false,
  startMs = 5000,
): Promise<{ paneId: PaneId; launch: Launch; progDir: string; token: string }> {
  const progDir = await Deno.makeTempDir({ dir: f.dir, prefix: "prog-" });
  const standIn = await writeStandIn(progDir, { ignoreSignals });
  const cwd = extra.cwd ?? progDir;
  const argv = [standIn, "attach", "http://127.0.0.1:4096", "--session", sessionId, "--dir", cwd];
  // As the bridge spawns: always with a token (a provider's pid is signalled only with it).
  const token = extra.token ?? newSpawnToken();
  const { paneId } = await f.backend.spawn({
    sessionId: validateSessionId(sessionId),
    title: `title ${sessionId}`,
    argv,
    cwd,
    env: {},
    owner: "4242:1",
    ...extra,
    token,
  });
  let launch: Launch | undefined;
  const started = await waitFor(clock, async () => {
    launch = (await recordedLaunches(progDir))[0];
    return launch !== undefined;
  }, { deadline: clock.now() + startMs, maxIntervalMs: 50 });
  assert.ok(started && launch, `the pane program of ${paneId} did not start`);
  return { paneId, launch, progDir, token };
}

/**
 * Opens a pane as the bridge does (pending record first, then the pane's record with its spawn
 * token, the instance it opened on and its program), owned by `cli`.
 */
async function openRecorded(
  f: ContractFixture,
  store: ReturnType<typeof createMemoryStore>,
  sessionId: string,
  startMs: number,
): Promise<{ record: PaneRecord; launch: Launch }> {
  const processes = createProcesses();
  const progDir = await Deno.makeTempDir({ dir: f.dir, prefix: "owned-" });
  const standIn = await writeStandIn(progDir);
  const id = validateSessionId(sessionId);
  const fields = { sessionId: id, title: "owned", openedAt: "2026-01-01T00:00:00Z", owner: "cli" };
  const spawned = await spawnRecorded(
    f.backend,
    {
      sessionId: id,
      title: "owned",
      argv: [standIn, "attach", "http://127.0.0.1:4096", "--session", sessionId],
      cwd: progDir,
      env: {},
      owner: "cli",
    },
    fields,
    { store, clock, processes, graceMs: 300, log: silentLogger },
  );
  assert.ok(spawned.ok, "the pane opened");
  const { pane, pending, instance } = spawned;
  assert.ok(instance, `${f.backend.name} tells the instance the pane opened on`);
  const start = pane.pid === undefined ? undefined : processes.startTime(pane.pid);
  store.put({
    ...fields,
    paneId: pane.paneId,
    backend: f.backend.name,
    token: pending.token,
    instance,
    ...(pane.pid !== undefined && start !== undefined ? { pid: pane.pid, pidStart: start } : {}),
  });
  store.remove(f.backend.name, pending.paneId);
  let launch: Launch | undefined;
  await waitFor(clock, async () => {
    launch = (await recordedLaunches(progDir))[0];
    return launch !== undefined;
  }, { deadline: clock.now() + startMs, maxIntervalMs: 50 });
  assert.ok(launch, `the pane program of ${pane.paneId} did not start`);
  const record = [...store.records.values()].find((r) => r.paneId === pane.paneId);
  assert.ok(record);
  return { record, launch };
}

/** Cleanup as `muxbridge cleanup --all` runs it, with no server to ask. */
function cleanupAll(f: ContractFixture, store: ReturnType<typeof createMemoryStore>) {
  return runCleanup({
    store,
    backends: { [f.backend.name]: f.backend },
    processes: createProcesses(),
    client: () => null,
    clock,
    log: silentLogger,
    graceMs: 300,
  }, { dryRun: false, all: true });
}

/**
 * Registers the contract tests for one backend.
 *
 * @param name The label in test names.
 * @param start Starts a fresh fixture for one test.
 * @param options Skip reason and timing.
 */
export function backendContract(
  name: string,
  start: () => Promise<ContractFixture>,
  options: ContractOptions = {},
): void {
  const test = (title: string, fn: (f: ContractFixture) => Promise<void>) =>
    Deno.test({
      name: `${name} contract: ${title}`,
      ...requires(`the ${name} backend contract`, options.requires ?? []),
      async fn() {
        const f = await start();
        try {
          await fn(f);
        } finally {
          await f.close();
        }
      },
    });
  const startMs = options.startMs ?? 5000;

  test("probe() reports a semver version", async (f) => {
    const probe = await f.backend.probe();
    assert.ok(semver.valid(probe.version), `not semver: ${probe.version}`);
  });

  test("spawn() runs the program with exactly its argv, in its directory, with the environment given", async (f) => {
    const hostileDir = `${f.dir}/dir with 'q' "d" $(x) \`y\` -n`;
    await Deno.mkdir(hostileDir);
    const { paneId, launch } = await spawnStandIn(
      f,
      "ses_contractArgv",
      {
        cwd: hostileDir,
        // A backend without an environment flag refuses credentials (tested below).
        env: f.backend.capabilities.env ? { OPENCODE_SERVER_PASSWORD: "p@ss 'word' $(nope)" } : {},
      },
      false,
      startMs,
    );
    assert.deepEqual(launch.argv, [
      "attach",
      "http://127.0.0.1:4096",
      "--session",
      "ses_contractArgv",
      "--dir",
      hostileDir,
    ]);
    assert.equal(await Deno.realPath(launch.cwd), await Deno.realPath(hostileDir));
    if (f.backend.capabilities.env) assert.equal(launch.password, "p@ss 'word' $(nope)");
    assert.ok(await f.backend.inspect(paneId));
  });

  test("spawn() hands credentials to the pane where the backend has an environment flag, and refuses them with auth_unsupported where not", async (f) => {
    const env = { OPENCODE_SERVER_USERNAME: "u", OPENCODE_SERVER_PASSWORD: "s3cret 'x' $(no)" };
    if (f.backend.capabilities.env) {
      const { launch } = await spawnStandIn(f, "ses_contractEnv", { env }, false, startMs);
      assert.equal(launch.password, env.OPENCODE_SERVER_PASSWORD);
      return;
    }
    const before = await f.paneIds();
    await assert.rejects(
      () =>
        f.backend.spawn({
          sessionId: validateSessionId("ses_contractNoEnv"),
          title: "t",
          argv: ["/bin/sh", "-c", "exit 0"],
          cwd: f.dir,
          env,
          owner: "4242:1",
        }),
      (e) => isMuxError(e, "auth_unsupported"),
    );
    assert.deepEqual(await f.paneIds(), before, "nothing was opened");
  });

  test("inspect() returns null for a pane that does not exist", async (f) => {
    assert.equal(await f.backend.inspect(await unknownPaneId(f)), null);
  });

  test("interrupt(), kill() and setTitle() report pane_not_found for an unknown pane", async (f) => {
    const ghost = await unknownPaneId(f);
    for (
      const op of [
        () => f.backend.interrupt(ghost),
        () => f.backend.kill(ghost),
        () => f.backend.setTitle(ghost, "x"),
      ]
    ) {
      await assert.rejects(op, (e) => isMuxError(e, "pane_not_found"));
    }
  });

  test("ids that could be read as flags are refused before anything runs", async (f) => {
    for (const bad of ["-t", "--help", "", "a\nb"]) {
      await assert.rejects(
        () => f.backend.kill(forgedPaneId(bad)),
        (e) => isMuxError(e, "invalid_argument"),
      );
    }
  });

  test("spawn() refuses a program it cannot run (none, an empty name, a NUL) and no pane appears", async (f) => {
    const before = await f.paneIds();
    for (const argv of [[], [""], ["sh", "a\0b"]]) {
      await assert.rejects(
        f.backend.spawn({
          sessionId: validateSessionId("ses_contractBadArgv"),
          title: "bad argv",
          argv,
          cwd: f.dir,
          env: {},
          owner: "4242:1",
        }),
        (e) => isMuxError(e, "invalid_argument"),
        JSON.stringify(argv),
      );
    }
    assert.deepEqual(await f.paneIds(), before);
  });

  test("setTitle() sets the title a hostile session title cleans to where the backend has titles", async (f) => {
    const { paneId } = await spawnStandIn(f, "ses_contractTitle", {}, false, startMs);
    const title = "fix $(touch x) `y` 'q'";
    if (!f.backend.capabilities.title) {
      await assert.rejects(f.backend.setTitle(paneId, title), (e) => isMuxError(e, "unsupported"));
      return;
    }
    await f.backend.setTitle(paneId, title);
    assert.ok(
      await waitFor(clock, async () => (await f.backend.inspect(paneId))?.title === title, {
        deadline: clock.now() + 3000,
      }),
    );
  });

  test("listOwned() finds the pane by its ownership marks exactly where the backend keeps marks", async (f) => {
    const { paneId } = await spawnStandIn(f, "ses_contractMarks", {}, false, startMs);
    const owned = await f.backend.listOwned();
    if (!f.backend.capabilities.marks) {
      assert.deepEqual(owned, [], "no marks, so nothing is listed as owned");
      return;
    }
    const mine = owned.find((p) => p.paneId === paneId);
    assert.equal(mine?.sessionId, "ses_contractMarks");
    assert.equal(mine?.owner, "4242:1");
  });

  test("closePane() ends a program that exits on the interrupt without killing, and is idempotent", async (f) => {
    const { paneId, launch, token } = await spawnStandIn(
      f,
      "ses_contractClose",
      {},
      false,
      startMs,
    );
    const result = await closePane(f.backend, paneId, {
      graceMs: 3000,
      clock,
      processes: createProcesses(),
      token,
    });
    assert.equal(result.alreadyGone, false);
    assert.equal(result.killed, false, "the interrupt alone should end it");
    assert.equal(await f.backend.inspect(paneId), null);
    assert.ok(
      await waitFor(clock, () => !createProcesses().alive(launch.pid), {
        deadline: clock.now() + 3000,
      }),
    );
    const again = await closePane(f.backend, paneId, { graceMs: 3000, clock });
    assert.equal(again.alreadyGone, true);
  });

  test("closePane() kills a program that ignores the interrupt after the grace period, and nothing survives", async (f) => {
    const { paneId, launch, token } = await spawnStandIn(
      f,
      "ses_contractStubborn",
      {},
      true,
      startMs,
    );
    const t0 = clock.now();
    const result = await closePane(f.backend, paneId, {
      graceMs: 300,
      clock,
      processes: createProcesses(),
      token,
    });
    assert.equal(result.killed, true);
    assert.ok(clock.now() - t0 >= 250, "waited for the grace period first");
    assert.equal(await f.backend.inspect(paneId), null);
    assert.ok(
      await waitFor(clock, () => !createProcesses().alive(launch.pid), {
        deadline: clock.now() + 3000,
      }),
      "the stubborn program did not outlive its pane",
    );
  });

  test("applyLayout() arranges muxbridge's panes exactly where the backend can, and says why not elsewhere", async (f) => {
    const a = await spawnStandIn(f, "ses_contractLayoutA", {}, false, startMs);
    const b = await spawnStandIn(f, "ses_contractLayoutB", {}, false, startMs);
    const apply = (layout: "tiled" | "even-vertical") =>
      f.backend.applyLayout({ layout, mainPaneSize: 60, panes: [a.paneId, b.paneId] });
    const first = await apply("tiled");
    const second = await apply("even-vertical");
    const can = f.backend.capabilities.layout;
    // The first may find its layout already in place; the second, a different one, may not.
    assert.ok(first.applied === can || (can && /already/.test(first.detail)), first.detail);
    assert.equal(second.applied, can, second.detail);
    assert.ok(second.detail.length > 0);
    for (const { paneId } of [a, b]) assert.ok(await f.backend.inspect(paneId), "panes stay");
  });

  for (const mode of ["garbage", "timeout"] as const) {
    const lost = mode === "garbage" ? "is unreadable" : "never comes";
    test(`a spawn whose answer ${lost} leaves nothing behind`, async (f) => {
      const before = new Set(await f.paneIds());
      const fresh = async () => (await f.paneIds()).filter((id) => !before.has(id));
      const store = createMemoryStore();
      const deps = {
        store,
        clock,
        processes: createProcesses(),
        graceMs: 300,
        log: silentLogger,
      };
      const progDir = await Deno.makeTempDir({ dir: f.dir, prefix: "lost-" });
      const standIn = await writeStandIn(progDir);
      const sessionId = validateSessionId(`ses_contractLost${mode}`);
      f.answers.next = mode;
      const result = await spawnRecorded(
        f.backend,
        {
          sessionId,
          title: "lost",
          argv: [standIn, "attach", "http://127.0.0.1:4096", "--session", sessionId],
          cwd: progDir,
          env: {},
          owner: "4242:1",
        },
        { sessionId, title: "lost", openedAt: "2026-01-01T00:00:00Z", owner: "4242:1" },
        deps,
      );
      assert.equal(f.answers.next, null, "the command that makes the pane ran");
      assert.equal(result.ok, false, "a lost answer fails the spawn");
      if (mode === "timeout" && !f.backend.capabilities.spawnToken) {
        // What the backend promises without a token: nothing. Its pane cannot be told from one
        // the user opened meanwhile, so it is left (docs/backends/<name>.md says so).
        assert.ok(!result.ok);
        assert.deepEqual(result.outcome, { kind: "none", kept: false });
        assert.deepEqual(await f.backend.findSpawned(result.pending.token), []);
        const left = await fresh();
        assert.equal(left.length, 1, "the split was carried out");
        for (const id of left) await f.backend.kill(validatePaneId(id));
        return;
      }
      // Found by its token (or, for a backend without one, by what its spawn saw at once) and
      // closed, at once or on a later look (as the bridge does on its watch ticks); the last
      // look (bye, cleanup) also drops the record of a split the multiplexer never carried out.
      const pending = () => [...store.records.values()].find(isPending);
      await waitFor(clock, async () => {
        const record = pending();
        if (record) await resolveLostSpawn(f.backend, record, deps, false);
        return store.records.size === 0 && (await fresh()).length === 0;
      }, { deadline: clock.now() + 15_000, maxIntervalMs: 250 });
      const last = pending();
      if (last) await resolveLostSpawn(f.backend, last, deps, true);
      assert.deepEqual(await fresh(), [], "no pane is left");
      assert.equal(store.records.size, 0, "no record is left");
      const launch = (await recordedLaunches(progDir))[0];
      if (launch) {
        assert.ok(
          await waitFor(clock, () => !createProcesses().alive(launch.pid), {
            deadline: clock.now() + 5000,
          }),
          "the pane's program did not survive it",
        );
      }
    });
  }

  test("cleanup closes a pane it proves is the recorded one: the same instance, the recorded program", async (f) => {
    const store = createMemoryStore();
    const { record, launch } = await openRecorded(f, store, "ses_contractProven", startMs);
    const live = await f.backend.inspect(record.paneId);
    assert.ok(live);
    const proof = await provePane(f.backend, record, live, { processes: createProcesses() });
    assert.ok(proof.proven, proof.proven ? "" : proof.reason);
    const report = await cleanupAll(f, store);
    assert.deepEqual(report.closed.map((c) => c.paneId), [record.paneId]);
    assert.equal(store.records.size, 0);
    assert.ok(
      await waitFor(clock, async () => (await f.backend.inspect(record.paneId)) === null, {
        deadline: clock.now() + 5000,
      }),
    );
    assert.ok(
      await waitFor(clock, () => !createProcesses().alive(launch.pid), {
        deadline: clock.now() + 5000,
      }),
    );
  });

  test("after a restart that gave the recorded id to a user's pane, cleanup touches nothing of the user's and retires the record", async (f) => {
    // A fresh instance first, so the pane below gets one of the first ids.
    await f.restart();
    const store = createMemoryStore();
    const { record } = await openRecorded(f, store, "ses_contractReuse", startMs);
    await f.restart();
    let user = await f.userPane();
    for (let i = 0; i < 8 && f.idsRepeat !== false && user.paneId !== record.paneId; i++) {
      user = await f.userPane();
    }
    const processes = createProcesses();
    if (f.idsRepeat !== false) {
      assert.equal(user.paneId, record.paneId, "the restarted multiplexer handed out the id again");
      const live = await f.backend.inspect(record.paneId);
      assert.ok(live, "the user's pane is listed under the recorded id");
      const proof = await provePane(f.backend, record, live, { processes });
      assert.equal(proof.proven, false, "the user's pane is not provably the recorded one");
    }
    const report = await cleanupAll(f, store);
    if (f.idsRepeat !== false) {
      assert.deepEqual(report.closed, []);
      assert.deepEqual(report.retired.map((r) => r.paneId), [record.paneId]);
    } else {
      assert.deepEqual(report.closed.map((c) => c.reason), ["already gone"]);
    }
    assert.equal(store.records.size, 0, "the record is retired");
    assert.ok(processes.alive(user.pid), "the user's program runs on");
    assert.ok(await f.backend.inspect(validatePaneId(user.paneId)), "the user's pane stays");
  });

  test("doctor() passes every check against a healthy multiplexer, each one its module declares", async (f) => {
    const checks = await f.backend.doctor();
    assert.ok(checks.length > 0);
    assert.deepEqual(checks.filter((c) => c.status === "fail"), []);
    const declared = BACKENDS.find((b) => b.name === f.backend.name)?.doctor ?? [];
    assert.deepEqual(checks.map((c) => c.name).filter((n) => !declared.includes(n)), []);
  });
}

/** A pane id of the backend's own form that names no pane: open one, close it, reuse its id. */
async function unknownPaneId(f: ContractFixture): Promise<PaneId> {
  const { paneId } = await spawnStandIn(f, "ses_contractGhost");
  await f.backend.kill(paneId);
  await waitFor(clock, async () => (await f.backend.inspect(paneId)) === null, {
    deadline: clock.now() + 3000,
  });
  return paneId;
}
