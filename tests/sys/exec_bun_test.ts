/**
 * The exec seam under both runtimes: the release binary is built with Bun, where
 * `createRunner()` takes the `node:child_process` path, so that path must keep the seam's
 * promises (argv only, stdin "null", timeouts that kill and escalate, abort, missing binaries,
 * signal exit codes, output caps) exactly as the `Deno.Command` path does.
 */

import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { createRealClock } from "../../lib/sys/clock.ts";
import { markProcesses } from "../helpers/process_mark.ts";
import { requirement, requires } from "../helpers/requires.ts";

const root = new URL("../../", import.meta.url).pathname;
const bun = `${root}node_modules/.bin/bun`;
const probe = `${root}tests/helpers/exec_probe.ts`;
const clock = createRealClock();
const BUN = [requirement("bun", existsSync(bun), "npm install (bun is a devDependency)")];

type Line = Record<string, unknown> & { name: string };

/**
 * Runs the probe under one runtime with its stdin a pipe held open for the whole run (as the
 * bridge's stdin is): a child that inherited it would hang in `cat` until its timeout.
 */
async function runProbe(argv: string[]): Promise<Map<string, Line>> {
  const dir = await Deno.makeTempDir({ prefix: "muxbridge-exec-" });
  // The probe's programs run for ten minutes unless the seam ends them; if the watchdog kills
  // the probe mid-case, the mark still finds them.
  const mark = markProcesses();
  try {
    const child = new Deno.Command(argv[0], {
      args: [...argv.slice(1), probe, dir],
      env: mark.env,
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
      cwd: root,
    }).spawn();
    // Closing stdin only after the probe exits keeps the pipe open the whole time. A watchdog
    // (a bound on real time for real processes) closes it and kills the probe if the seam hangs,
    // e.g. when a child that inherited stdin keeps it open: the test then fails instead of
    // waiting forever.
    const watchdog = clock.setTimeout(() => {
      child.stdin.close().catch(() => {});
      try {
        child.kill("SIGKILL");
      } catch { /* already gone */ }
    }, 60_000);
    const out = await child.output().finally(() => clock.clearTimeout(watchdog));
    await child.stdin.close().catch(() => {});
    const stderr = new TextDecoder().decode(out.stderr);
    assert.equal(out.code, 0, `probe failed: ${stderr}`);
    assert.deepEqual(await mark.sweep(), [], "the probe's programs all ended with it");
    const lines = new TextDecoder().decode(out.stdout).trim().split("\n").map((l) =>
      JSON.parse(l) as Line
    );
    const real = Deno.realPathSync(dir);
    return new Map(lines.map((l) => [l.name, { ...l, dir: real }]));
  } finally {
    await mark.sweep();
    await Deno.remove(dir, { recursive: true });
  }
}

function checkLines(lines: Map<string, Line>): void {
  const get = (name: string) => {
    const line = lines.get(name);
    assert.ok(line, `no line for ${name}`);
    return line;
  };
  assert.deepEqual(
    pick(get("exit_code"), ["code", "stdout", "stderr"]),
    { code: 3, stdout: "out\n", stderr: "err\n" },
  );
  const stdinNull = get("stdin_null");
  // An inherited stdin (a pipe the test keeps open) would end in timed_out, not "done".
  assert.equal(stdinNull.stdout, "done\n");
  assert.equal(get("stdin_text").stdout, "hello\n");
  assert.equal(get("env").stdout, "a b'c");
  assert.equal(get("cwd").stdout, `${get("cwd").dir}\n`);
  assert.equal(get("killed_by_signal").code, 143);
  // Each program would run for ten minutes: the error code is the proof it was ended.
  for (const name of ["timeout", "timeout_escalates"]) {
    assert.equal(get(name).error, "timed_out", name);
  }
  assert.equal(get("abort").error, "interrupted");
  assert.equal(get("pre_aborted").error, "interrupted");
  assert.equal(get("not_found").error, "binary_not_found");
  assert.equal(get("output_cap").stdoutBytes, 1000);
}

function pick(line: Line, keys: string[]): Record<string, unknown> {
  return Object.fromEntries(keys.map((k) => [k, line[k]]));
}

Deno.test({
  name: "createRunner() under Bun (node:child_process) keeps every exec seam promise",
  ...requires("the exec seam under Bun", BUN),
  async fn() {
    checkLines(await runProbe([bun, "run"]));
  },
});

Deno.test("createRunner() under Deno (Deno.Command) keeps every exec seam promise", async () => {
  checkLines(await runProbe([Deno.execPath(), "run", "--allow-all", "--quiet"]));
});
