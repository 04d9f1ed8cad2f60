/**
 * Runs the tests (`deno test --allow-all`, then the given arguments: files, `--filter`…) and
 * ends with what was skipped and why, and with what the tests left running.
 *
 * Skips: a test that needs something this machine lacks says so through
 * `tests/helpers/requires.ts`, which appends it to the skip log this script hands every test
 * process (`MUXBRIDGE_SKIP_LOG`). In CI (`CI=true`) such a test fails instead of skipping, and
 * any skip that still reaches the log fails the run here too.
 *
 * Leaks: every process the tests start must be stopped by them. This script tags the run
 * (`MUXBRIDGE_TEST_RUN=<random>`, inherited by whatever the tests start; helpers that clear a
 * child's environment pass it on through `tests/helpers/run_tag.ts`). When `deno test` has
 * ended, any process of this user still carrying the tag (after a few seconds to finish
 * exiting) is listed with its pid, argv and cwd, stopped (SIGTERM, then SIGKILL) and fails the
 * run, locally and in CI. That includes the tmux servers of `tests/helpers/tmux_server.ts`.
 *
 * ```sh
 * ./node_modules/.bin/deno run --allow-all scripts/run_tests.ts tests/backends/
 * ```
 *
 * @module
 */

import { describeTagged, RUN_TAG_VAR, settleTagged, stopTagged } from "./_tagged_processes.ts";

/** How long tagged processes get to end on their own once `deno test` has ended. */
const SETTLE_MS = 3000;

if (Deno.env.get("MUXBRIDGE_SKIP_LOG") !== undefined) {
  // Already inside a run: never start another (a runner that runs itself is a fork bomb).
  console.error("scripts/run_tests.ts: already inside a test run (MUXBRIDGE_SKIP_LOG is set)");
  Deno.exit(2);
}
const log = await Deno.makeTempFile({ prefix: "muxbridge-skips-", suffix: ".jsonl" });
const tag = crypto.randomUUID();
try {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["test", "--allow-all", ...Deno.args],
    env: { MUXBRIDGE_SKIP_LOG: log, [RUN_TAG_VAR]: tag },
    stdin: "inherit",
    stdout: "inherit",
    stderr: "inherit",
  }).spawn();
  const { code } = await child.status;
  const skips = (await Deno.readTextFile(log)).split("\n").filter((l) => l !== "")
    .map((l) => JSON.parse(l) as { test: string; why: string });
  const ci = Deno.env.get("CI") === "true";
  if (skips.length === 0) {
    console.log("\nskipped: nothing (every tool the tests need was found)");
  } else {
    console.log(
      ci
        ? `\nFAILED in CI: ${skips.length} group(s) of tests could not run, something is missing:`
        : `\nskipped: ${skips.length} group(s) of tests, because something is missing here:`,
    );
    for (const s of skips) console.log(`  - ${s.test}: needs ${s.why}`);
    console.log("  (scripts/setup.sh installs all of it; in CI, CI=true, a missing tool fails)");
  }
  const leaked = await settleTagged(tag, SETTLE_MS, { exclude: [Deno.pid] });
  if (leaked.length === 0) {
    console.log(`left running: nothing (no process carries ${RUN_TAG_VAR}=${tag})`);
  } else {
    console.log(
      `\nFAILED: ${leaked.length} process(es) the tests started were still running ` +
        `(${RUN_TAG_VAR}=${tag}); every process a test starts must be stopped by it:`,
    );
    for (const p of leaked) console.log(`  - ${describeTagged(p)}`);
    const resisted = await stopTagged(tag, leaked.map((p) => p.pid), { exclude: [Deno.pid] });
    console.log(
      resisted.length === 0
        ? "  (all of them are stopped now)"
        : `  (still running after SIGKILL: ${resisted.join(", ")})`,
    );
  }
  Deno.exitCode = code !== 0 ? code : (ci && skips.length > 0) || leaked.length > 0 ? 1 : 0;
} finally {
  await Deno.remove(log).catch(() => {});
}
