/**
 * `scripts/stress_tests.ts`, the load gate: it tallies the tests that failed over its runs with
 * their file and count, and its CPU burners are gone when it ends, whether the runs ended or it
 * was stopped mid-run with SIGTERM (as Ctrl+C would).
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { taggedProcesses } from "../scripts/_tagged_processes.ts";
import { runTag } from "./helpers/run_tag.ts";
import { until } from "./helpers/until.ts";

const REPO = new URL("../", import.meta.url).pathname;
const FIXTURES = "tests/testdata/run_tests";
const MARK = "MUXBRIDGE_STRESS_MARK";

/** The stress script with `args`, outside this run, every process it starts marked. */
function stress(args: string[], mark: string, extra: Record<string, string> = {}) {
  return new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-all", "scripts/stress_tests.ts", ...args],
    cwd: REPO,
    env: {
      PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
      HOME: Deno.env.get("HOME") ?? "/tmp",
      ...(Deno.env.get("DENO_DIR") ? { DENO_DIR: Deno.env.get("DENO_DIR")! } : {}),
      NO_COLOR: "1",
      [MARK]: mark,
      ...runTag(),
      ...extra,
    },
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
}

/** The marked burners still running (`sh -c 'while kill -0 …'`). */
const burners = (mark: string) =>
  taggedProcesses(mark, { variable: MARK }).filter((p) => p.argv.join(" ").includes("kill -0"));

Deno.test("scripts/stress_tests.ts tallies every test that failed over its runs, with its file and count, and stops its burners", async () => {
  const mark = crypto.randomUUID();
  const child = stress(["--runs", "2", "--burners", "1", `${FIXTURES}/failing.ts`], mark);
  const out = await child.output();
  const stdout = new TextDecoder().decode(out.stdout);
  assert.equal(out.code, 1, stdout + new TextDecoder().decode(out.stderr));
  assert.match(stdout, /beside 1 CPU burner\(s\)/);
  assert.match(stdout, /run 1\/2: exit 1, .* 1 failed, 0 left running, 0 skipped; load average/);
  assert.match(stdout, /run 2\/2: exit 1,/);
  assert.match(
    stdout,
    /1 test\(s\) failed at least once in 2 run\(s\):\n {2}2\/2 {2}tests\/testdata\/run_tests\/failing\.ts: fails on purpose \(run 1, 2\)/,
  );
  assert.doesNotMatch(stdout, /passes beside it/);
  await until("the burner to be gone", () => burners(mark).length === 0);
});

Deno.test("scripts/stress_tests.ts stopped by SIGTERM mid-run stops its burners and the running tests, and exits 130", async () => {
  const mark = crypto.randomUUID();
  const dir = Deno.makeTempDirSync({ prefix: "muxbridge-stress-" });
  const started = join(dir, "started");
  const child = stress(["--runs", "3", "--burners", "2", `${FIXTURES}/waiting.ts`], mark, {
    WAITING_STARTED: started,
  });
  const output = child.output();
  try {
    await until("the waiting test to start", () => {
      try {
        return Deno.statSync(started).isFile;
      } catch {
        return false;
      }
    }, { ms: 120_000, maxIntervalMs: 100 });
    assert.equal(burners(mark).length, 2, "two burners spin beside the run");
    child.kill("SIGTERM");
    const out = await output;
    assert.equal(out.code, 130, new TextDecoder().decode(out.stdout));
    await until(
      "every process of the stress run to be gone",
      () => taggedProcesses(mark, { variable: MARK }).length === 0,
      { ms: 30_000, maxIntervalMs: 100 },
    );
  } finally {
    try {
      child.kill("SIGKILL");
    } catch { /* ended */ }
    await output.catch(() => {});
    Deno.removeSync(dir, { recursive: true });
  }
});
