import assert from "node:assert/strict";
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { constants, tmpdir } from "node:os";
import { join } from "node:path";
import { MuxError } from "../../lib/sys/errors.ts";
import { createRunner, describeArgv } from "../../lib/sys/exec.ts";
import { createProcesses } from "../../lib/sys/processes.ts";
import { markProcesses } from "../helpers/process_mark.ts";

// These tests run real programs and assert no wall-clock bound: a program that would run for
// minutes proves a timeout or kill by the error code and the process's state afterwards, and a
// wait that must come first is a condition (a file the program writes when it is ready).

const run = createRunner();
const processes = createProcesses();

/** Kills a process this test started, by its id, if it is still there. */
function reap(pid: number | undefined): void {
  // Never 0 or less: kill(0) would hit this very process group (the test run) and kill(-1)
  // every process of the user.
  if (pid === undefined || !Number.isInteger(pid) || pid <= 0) return;
  try {
    Deno.kill(pid, "SIGKILL");
  } catch { /* already gone */ }
}

/** Waits (bounded by `ms`, generous) until `path` exists. */
async function ready(path: string, ms = 30_000): Promise<void> {
  const deadline = performance.now() + ms;
  while (performance.now() < deadline) {
    try {
      Deno.statSync(path);
      return;
    } catch { /* not yet */ }
    await new Promise((r) => setTimeout(r, 10));
  }
  assert.fail(`${path} never appeared`);
}

async function rejection(promise: Promise<unknown>): Promise<MuxError> {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof MuxError, `expected a MuxError, got ${err}`);
    return err;
  }
  assert.fail("expected the run to reject");
}

// ---------------------------------------------------------------- results

Deno.test("createRunner() captures stdout, stderr and the exit code", async () => {
  const r = await run(["sh", "-c", "printf 'out\\n'; printf 'err' >&2; exit 3"], {
    timeoutMs: 5000,
  });
  assert.deepEqual(r, { code: 3, stdout: "out\n", stderr: "err" });
});

Deno.test("createRunner() resolves a non-zero exit instead of throwing", async () => {
  assert.equal((await run(["false"], { timeoutMs: 5000 })).code, 1);
  assert.equal((await run(["sh", "-c", "exit 255"], { timeoutMs: 5000 })).code, 255);
});

Deno.test("createRunner() passes argv elements as they are, without a shell", async () => {
  const args = ["$(touch x)", "a b", "'", "", "-n", "*"];
  const r = await run(["printf", "%s\\0", ...args], { timeoutMs: 5000 });
  assert.equal(r.stdout, args.map((a) => `${a}\0`).join(""));
});

Deno.test("createRunner() reports death by signal N as 128 + N", async () => {
  const term = await run(["sh", "-c", "kill -TERM $$"], { timeoutMs: 5000 });
  assert.equal(term.code, 128 + constants.signals.SIGTERM);
  const usr1 = await run(["sh", "-c", "kill -USR1 $$"], { timeoutMs: 5000 });
  assert.equal(usr1.code, 128 + constants.signals.SIGUSR1);
  const abrt = await run(["sh", "-c", "kill -ABRT $$"], { timeoutMs: 5000 });
  assert.equal(abrt.code, 128 + constants.signals.SIGABRT);
});

Deno.test("createRunner() decodes output that is not UTF-8 without throwing", async () => {
  const r = await run(["printf", "a\\377b"], { timeoutMs: 5000 });
  assert.equal(r.stdout, "a\ufffdb");
});

// ---------------------------------------------------------------- options

Deno.test("createRunner() writes the stdin option and closes it", async () => {
  const r = await run(["cat"], { timeoutMs: 5000, stdin: "hello\nworld ü\n" });
  assert.deepEqual(r, { code: 0, stdout: "hello\nworld ü\n", stderr: "" });
});

Deno.test("createRunner() writes a stdin larger than a pipe while the program writes back", async () => {
  // cat echoes as it reads: once the stdout pipe is full, cat waits for us to read it. A runner
  // that finishes writing stdin before reading stdout deadlocks here until the timeout.
  const input = "0123456789abcdef".repeat(64 * 1024); // 1 MiB
  // A deadlock would end in timed_out: the run resolving at all is the check.
  const result = await run(["cat"], { timeoutMs: 60_000, stdin: input });
  assert.equal(result.code, 0);
  assert.equal(result.stdout.length, input.length);
  assert.ok(result.stdout === input);
});

Deno.test("createRunner() does not let the program read our stdin", async () => {
  // A child process of the test holds its stdin open (a pipe that never ends) and runs `cat`
  // with no stdin option. With our stdin inherited, cat would wait until the timeout.
  const exec = new URL("../../lib/sys/exec.ts", import.meta.url).href;
  const script = `
    import { createRunner } from ${JSON.stringify(exec)};
    const started = performance.now();
    try {
      const r = await createRunner()(["cat"], { timeoutMs: 30_000 });
      console.log(JSON.stringify({ ...r, ms: performance.now() - started }));
    } catch (err) {
      console.log(JSON.stringify({ error: err.code, ms: performance.now() - started }));
    }
  `;
  const child = new Deno.Command(Deno.execPath(), {
    args: ["eval", "--quiet", script],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode("this must not reach cat\n"));
  try {
    const out = await child.output();
    const text = new TextDecoder().decode(out.stdout);
    assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
    const result = JSON.parse(text);
    assert.equal(result.error, undefined, `cat did not see EOF: ${text}`);
    assert.equal(result.code, 0);
    assert.equal(result.stdout, "");
  } finally {
    await writer.close().catch(() => {});
  }
});

Deno.test("createRunner() adds env variables to the inherited environment", async () => {
  const r = await run(["sh", "-c", 'printf "%s|%s" "$MUXBRIDGE_TEST_VAR" "${PATH:+has-path}"'], {
    timeoutMs: 5000,
    env: { MUXBRIDGE_TEST_VAR: "a b $(c)" },
  });
  assert.equal(r.stdout, "a b $(c)|has-path");
});

Deno.test("createRunner() runs in the cwd option", async () => {
  const dir = mkdtempSync(join(tmpdir(), "muxbridge-exec-"));
  try {
    const r = await run(["pwd", "-P"], { timeoutMs: 5000, cwd: dir });
    assert.equal(r.stdout.trim(), realpathSync(dir));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

Deno.test("createRunner() keeps at most maxOutputBytes of huge output and still finishes", async () => {
  const r = await run(["sh", "-c", "head -c 5000000 /dev/zero; head -c 300000 /dev/zero >&2"], {
    timeoutMs: 10_000,
    maxOutputBytes: 1000,
  });
  assert.equal(r.code, 0);
  assert.equal(r.stdout.length, 1000);
  assert.equal(r.stderr.length, 1000);
});

// ---------------------------------------------------------------- failures

Deno.test("createRunner() throws binary_not_found for a missing program", async () => {
  const err = await rejection(run(["muxbridge-no-such-program-42", "-V"], { timeoutMs: 5000 }));
  assert.equal(err.code, "binary_not_found");
  assert.deepEqual(err.argv, ["muxbridge-no-such-program-42", "-V"]);
  assert.match(err.message, /^Cannot run "muxbridge-no-such-program-42": program not found$/);
  assert.match(err.hint ?? "", /PATH/);
});

Deno.test("createRunner() throws binary_not_found for a missing absolute path", async () => {
  const err = await rejection(run(["/nonexistent/bin/tmux"], { timeoutMs: 5000 }));
  assert.equal(err.code, "binary_not_found");
});

Deno.test("createRunner() kills a program at the timeout and throws timed_out", async () => {
  // `sleep 600` would end on its own only after ten minutes: timed_out means it was killed.
  const err = await rejection(run(["sleep", "600"], { timeoutMs: 200, killGraceMs: 500 }));
  assert.equal(err.code, "timed_out");
  assert.deepEqual(err.argv, ["sleep", "600"]);
  assert.match(err.message, /^Cannot finish "sleep" "600": no answer within 200 ms, killed$/);
});

Deno.test("createRunner() keeps the stderr of a timed-out program in the error", async () => {
  const err = await rejection(
    run(["sh", "-c", "echo started >&2; exec sleep 30"], { timeoutMs: 300 }),
  );
  assert.equal(err.code, "timed_out");
  assert.equal(err.stderr, "started\n");
});

Deno.test("createRunner() SIGKILLs a program that survives SIGTERM, killGraceMs after it", async () => {
  // The program traps TERM (records it, goes on) and says when the trap is set; only then is
  // the run ended (an abort: the same SIGTERM, grace, SIGKILL as a timeout), so a slow start
  // can never let SIGTERM land before the trap.
  const dir = mkdtempSync(join(tmpdir(), "muxbridge-exec-"));
  const controller = new AbortController();
  // The SIGKILL ends sh, not the `sleep` it waits on: the mark finds that one for the sweep.
  const mark = markProcesses();
  const script = `trap 'echo term > term' TERM; echo $$ > pid.tmp && mv pid.tmp pid; ` +
    `while :; do sleep 5 >/dev/null 2>&1 & wait $!; done`;
  const pending = rejection(run(["sh", "-c", script], {
    timeoutMs: 600_000,
    killGraceMs: 300,
    cwd: dir,
    signal: controller.signal,
    env: mark.env,
  }));
  let pid: number | undefined;
  try {
    await ready(`${dir}/pid`);
    pid = Number(Deno.readTextFileSync(`${dir}/pid`).trim());
    const abortedAt = performance.now();
    controller.abort();
    const err = await pending;
    const waited = performance.now() - abortedAt;
    assert.equal(err.code, "interrupted");
    assert.equal(
      Deno.readTextFileSync(`${dir}/term`),
      "term\n",
      "SIGTERM came first and was survived",
    );
    assert.equal(processes.alive(pid), false, `pid ${pid} survived SIGKILL`);
    // A lower bound only (load can only add to it): SIGKILL waited for the grace period.
    assert.ok(waited >= 290, `SIGKILL after ${waited} ms, before the 300 ms grace ended`);
  } finally {
    controller.abort();
    await pending.catch(() => {});
    reap(pid);
    await mark.sweep();
    rmSync(dir, { recursive: true, force: true });
  }
});

Deno.test("createRunner() ends at timeout + grace even when a grandchild holds the pipes", async () => {
  // `sh -c "trap '' TERM; sleep 30"`: sh ignores TERM and its child `sleep` inherits stdout and
  // stderr. SIGKILL ends sh, but sleep keeps the pipes open for 30 s; the runner must not wait
  // for them. The sleep's pid is printed to check it still runs; the sweep stops it.
  const mark = markProcesses();
  try {
    const err = await rejection(run(["sh", "-c", "trap '' TERM; sleep 600 & echo $! >&2; wait"], {
      timeoutMs: 200,
      killGraceMs: 300,
      env: mark.env,
    }));
    const sleeper = Number(err.stderr?.trim());
    assert.equal(err.code, "timed_out");
    // The run ended while the grandchild (a ten-minute sleep holding the pipes) still lives.
    assert.equal(processes.alive(sleeper), true, "the runner did not wait for the grandchild");
  } finally {
    await mark.sweep();
  }
});

Deno.test("createRunner() ends at the timeout when a program never reads a large stdin", async () => {
  const mark = markProcesses();
  try {
    const err = await rejection(run(["sh", "-c", "trap '' TERM; sleep 600 & echo $! >&2; wait"], {
      timeoutMs: 200,
      killGraceMs: 300,
      stdin: "x".repeat(4 * 1024 * 1024),
      env: mark.env,
    }));
    const sleeper = Number(err.stderr?.trim());
    assert.equal(err.code, "timed_out");
    assert.equal(processes.alive(sleeper), true, "the runner did not wait for the grandchild");
  } finally {
    await mark.sweep();
  }
});

Deno.test("createRunner() stops waiting for a background process the program left behind", async () => {
  // The program exits at once, but a background child keeps its stdout open.
  const mark = markProcesses();
  try {
    const err = await rejection(
      run(["sh", "-c", "sleep 600 & echo $! >&2"], {
        timeoutMs: 300,
        killGraceMs: 200,
        env: mark.env,
      }),
    );
    const sleeper = Number(err.stderr?.trim());
    assert.equal(err.code, "timed_out");
    assert.equal(
      processes.alive(sleeper),
      true,
      "the runner did not wait for the background child",
    );
  } finally {
    await mark.sweep();
  }
});

Deno.test("createRunner() kills the program when the signal aborts and throws interrupted", async () => {
  const controller = new AbortController();
  // A ten-minute program and a longer timeout: only the abort can end it.
  const pending = rejection(
    run(["sleep", "600"], { timeoutMs: 900_000, signal: controller.signal }),
  );
  controller.abort();
  const err = await pending;
  assert.equal(err.code, "interrupted");
  assert.match(err.message, /^Cannot finish "sleep" "600": interrupted$/);
});

Deno.test("createRunner() throws interrupted without starting when the signal is already aborted", async () => {
  const dir = mkdtempSync(join(tmpdir(), "muxbridge-exec-"));
  try {
    const err = await rejection(
      run(["touch", "started"], { timeoutMs: 5000, cwd: dir, signal: AbortSignal.abort() }),
    );
    assert.equal(err.code, "interrupted");
    assert.deepEqual([...Deno.readDirSync(dir)], [], "the program ran");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

Deno.test("createRunner() refuses an empty argv and a non-positive timeout before spawning", async () => {
  await assert.rejects(run([], { timeoutMs: 1000 }), TypeError);
  await assert.rejects(run([""], { timeoutMs: 1000 }), TypeError);
  await assert.rejects(run(["true"], { timeoutMs: 0 }), RangeError);
  await assert.rejects(run(["true"], { timeoutMs: -5 }), RangeError);
  await assert.rejects(run(["true"], { timeoutMs: Number.NaN }), RangeError);
});

Deno.test("describeArgv() quotes each element and cuts long commands", () => {
  assert.equal(describeArgv(["tmux", "split-window", "a b"]), '"tmux" "split-window" "a b"');
  assert.equal(describeArgv(["x\ny"]), '"x\\ny"');
  const long = describeArgv(["x".repeat(1000)]);
  assert.equal(long.length, 301);
  assert.ok(long.endsWith("…"));
});
