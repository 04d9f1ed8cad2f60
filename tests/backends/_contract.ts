/**
 * The backend contract: what every backend must do alike, whatever multiplexer is behind it.
 * Each backend's test file calls {@linkcode backendContract} with a fixture that starts its
 * multiplexer (the real program, or a faithful fake CLI where the real one cannot run here).
 *
 * @module
 */

import assert from "node:assert/strict";
import semver from "semver";
import type { Backend, SpawnRequest } from "../../lib/backend.ts";
import { createRealClock, waitFor } from "../../lib/sys/clock.ts";
import { closePane } from "../../lib/session/close_pane.ts";
import { isMuxError } from "../../lib/sys/errors.ts";
import { createProcesses } from "../../lib/sys/processes.ts";
import { type Launch, recordedLaunches, writeStandIn } from "../helpers/stand_in.ts";

/** A started multiplexer with a backend pointed at it. */
export interface ContractFixture {
  /** The backend under test. */
  backend: Backend;
  /** A scratch directory (removed by `close`). */
  dir: string;
  /** Stops the multiplexer and removes everything the fixture made. */
  close(): Promise<void>;
}

/** Options of {@linkcode backendContract}. */
export interface ContractOptions {
  /** Why the whole suite is skipped here (the program is absent); printed, never counted as passed. */
  ignore?: string;
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
): Promise<{ paneId: string; launch: Launch; progDir: string }> {
  const progDir = await Deno.makeTempDir({ dir: f.dir, prefix: "prog-" });
  const standIn = await writeStandIn(progDir, { ignoreSignals });
  const cwd = extra.cwd ?? progDir;
  const argv = [standIn, "attach", "http://127.0.0.1:4096", "--session", sessionId, "--dir", cwd];
  const { paneId } = await f.backend.spawn({
    sessionId,
    title: `title ${sessionId}`,
    argv,
    cwd,
    env: {},
    owner: "4242:1",
    ...extra,
  });
  let launch: Launch | undefined;
  const started = await waitFor(clock, async () => {
    launch = (await recordedLaunches(progDir))[0];
    return launch !== undefined;
  }, { deadline: clock.now() + startMs, maxIntervalMs: 50 });
  assert.ok(started && launch, `the pane program of ${paneId} did not start`);
  return { paneId, launch, progDir };
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
      ignore: options.ignore !== undefined,
      sanitizeResources: false,
      sanitizeOps: false,
      async fn() {
        const f = await start();
        try {
          await fn(f);
        } finally {
          await f.close();
        }
      },
    });
  if (options.ignore) console.log(`skipping the ${name} backend contract: ${options.ignore}`);
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

  test("spawn() refuses credentials with auth_unsupported when the backend has no environment flag", async (f) => {
    if (f.backend.capabilities.env) return;
    await assert.rejects(
      () =>
        f.backend.spawn({
          sessionId: "ses_contractNoEnv",
          title: "t",
          argv: ["/bin/sh", "-c", "exit 0"],
          cwd: f.dir,
          env: { OPENCODE_SERVER_PASSWORD: "secret" },
          owner: "4242:1",
        }),
      (e) => isMuxError(e, "auth_unsupported"),
    );
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
      await assert.rejects(() => f.backend.kill(bad), (e) => isMuxError(e, "invalid_argument"));
    }
  });

  test("setTitle() sets the title a hostile session title cleans to", async (f) => {
    if (!f.backend.capabilities.title) return;
    const { paneId } = await spawnStandIn(f, "ses_contractTitle", {}, false, startMs);
    await f.backend.setTitle(paneId, "fix $(touch x) `y` 'q'");
    assert.ok(
      await waitFor(
        clock,
        async () => (await f.backend.inspect(paneId))?.title === "fix $(touch x) `y` 'q'",
        {
          deadline: clock.now() + 3000,
        },
      ),
    );
  });

  test("listOwned() finds the pane by its ownership marks", async (f) => {
    if (!f.backend.capabilities.marks) return;
    const { paneId } = await spawnStandIn(f, "ses_contractMarks", {}, false, startMs);
    const owned = await f.backend.listOwned();
    const mine = owned.find((p) => p.paneId === paneId);
    assert.equal(mine?.sessionId, "ses_contractMarks");
    assert.equal(mine?.owner, "4242:1");
  });

  test("closePane() ends a program that exits on the interrupt without killing, and is idempotent", async (f) => {
    const { paneId, launch } = await spawnStandIn(f, "ses_contractClose", {}, false, startMs);
    const result = await closePane(f.backend, paneId, {
      graceMs: 3000,
      clock,
      processes: createProcesses(),
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
    const { paneId, launch } = await spawnStandIn(f, "ses_contractStubborn", {}, true, startMs);
    const t0 = clock.now();
    const result = await closePane(f.backend, paneId, {
      graceMs: 300,
      clock,
      processes: createProcesses(),
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

  test("applyLayout() answers applied or why not, without throwing", async (f) => {
    const { paneId } = await spawnStandIn(f, "ses_contractLayout", {}, false, startMs);
    const result = await f.backend.applyLayout({
      layout: "main-vertical",
      mainPaneSize: 60,
      panes: [paneId],
    });
    assert.equal(typeof result.applied, "boolean");
    assert.ok(result.detail.length > 0);
  });

  test("doctor() passes every check against a healthy multiplexer", async (f) => {
    const checks = await f.backend.doctor();
    assert.ok(checks.length > 0);
    assert.deepEqual(checks.filter((c) => c.status === "fail"), []);
  });
}

/** A pane id of the backend's own form that names no pane: open one, close it, reuse its id. */
async function unknownPaneId(f: ContractFixture): Promise<string> {
  const { paneId } = await spawnStandIn(f, "ses_contractGhost");
  await f.backend.kill(paneId);
  await waitFor(clock, async () => (await f.backend.inspect(paneId)) === null, {
    deadline: clock.now() + 3000,
  });
  return paneId;
}
