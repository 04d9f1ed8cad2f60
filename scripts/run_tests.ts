/**
 * Runs the tests (`deno test --allow-all`, then the given arguments: files, `--filter`…) and
 * ends with what was skipped and why. A test that needs something this machine lacks says so
 * through `tests/helpers/requires.ts`, which appends it to the skip log this script hands every
 * test process (`MUXBRIDGE_SKIP_LOG`). In CI (`CI=true`) such a test fails instead of
 * skipping, and any skip that still reaches the log fails the run here too.
 *
 * ```sh
 * ./node_modules/.bin/deno run --allow-all scripts/run_tests.ts tests/backends/
 * ```
 *
 * @module
 */

if (Deno.env.get("MUXBRIDGE_SKIP_LOG") !== undefined) {
  // Already inside a run: never start another (a runner that runs itself is a fork bomb).
  console.error("scripts/run_tests.ts: already inside a test run (MUXBRIDGE_SKIP_LOG is set)");
  Deno.exit(2);
}
const log = await Deno.makeTempFile({ prefix: "muxbridge-skips-", suffix: ".jsonl" });
try {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["test", "--allow-all", ...Deno.args],
    env: { MUXBRIDGE_SKIP_LOG: log },
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
  Deno.exitCode = code !== 0 ? code : ci && skips.length > 0 ? 1 : 0;
} finally {
  await Deno.remove(log).catch(() => {});
}
