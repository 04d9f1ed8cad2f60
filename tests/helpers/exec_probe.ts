/**
 * Runs the exec seam's cases in whatever runtime loads this file and prints one JSON line per
 * case: `{"name", "code", "stdout" (cut to 100 characters), "stdoutBytes", "stderr", "ms"}`, or
 * `{"name", "error" (the MuxError code), "ms"}`. `tests/sys/exec_bun_test.ts` runs it under Bun,
 * where `createRunner()` takes the `node:child_process` path the release binary uses, and under
 * Deno (`Deno.Command`), and asserts both give the same answers.
 *
 * @module
 */

import process from "node:process";
import { createRealClock } from "../../lib/sys/clock.ts";
import { isMuxError } from "../../lib/sys/errors.ts";
import { createRunner, type RunOptions } from "../../lib/sys/exec.ts";

const run = createRunner();
const clock = createRealClock();

async function probe(name: string, argv: string[], opts: RunOptions): Promise<void> {
  const start = clock.now();
  let line: Record<string, unknown>;
  try {
    const r = await run(argv, opts);
    line = {
      name,
      code: r.code,
      stdout: r.stdout.slice(0, 100),
      stdoutBytes: r.stdout.length,
      stderr: r.stderr,
    };
  } catch (err) {
    line = { name, error: isMuxError(err) ? err.code : String(err) };
  }
  line.ms = clock.now() - start;
  process.stdout.write(`${JSON.stringify(line)}\n`);
}

/** An abort signal that fires after `ms` on the real clock. */
function abortAfter(ms: number): AbortSignal {
  const ctl = new AbortController();
  clock.setTimeout(() => ctl.abort(), ms);
  return ctl.signal;
}

const dir = process.argv[2] ?? "/";
await probe("exit_code", ["sh", "-c", "echo out; echo err >&2; exit 3"], { timeoutMs: 5000 });
// The parent's stdin is a pipe the test keeps open: a child that inherited it would block in
// `cat` until the timeout. With stdin "null" it reads end of file at once.
await probe("stdin_null", ["sh", "-c", "cat; echo done"], { timeoutMs: 5000 });
await probe("stdin_text", ["cat"], { timeoutMs: 5000, stdin: "hello\n" });
await probe("env", ["sh", "-c", 'printf %s "$PROBE_VAR"'], {
  timeoutMs: 5000,
  env: { PROBE_VAR: "a b'c" },
});
await probe("cwd", ["pwd"], { timeoutMs: 5000, cwd: dir });
await probe("killed_by_signal", ["sh", "-c", "kill -TERM $$"], { timeoutMs: 5000 });
await probe("timeout", ["sleep", "600"], { timeoutMs: 200 });
// SIGTERM is ignored (and stays ignored across exec): only the SIGKILL escalation ends it.
await probe("timeout_escalates", ["sh", "-c", "trap '' TERM; exec sleep 600"], {
  timeoutMs: 200,
  killGraceMs: 200,
});
await probe("abort", ["sleep", "600"], { timeoutMs: 900_000, signal: abortAfter(200) });
await probe("pre_aborted", ["sleep", "30"], { timeoutMs: 10_000, signal: AbortSignal.abort() });
await probe("not_found", ["muxbridge-no-such-program-x"], { timeoutMs: 5000 });
await probe("output_cap", ["sh", "-c", "head -c 100000 /dev/zero"], {
  timeoutMs: 5000,
  maxOutputBytes: 1000,
});
process.exit(0);
