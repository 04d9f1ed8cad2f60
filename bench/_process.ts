/**
 * The processes the memory and idle benchmarks measure: a program that says it is ready on its
 * first stdout line and then waits on its stdin (the bridge, the bare reader, the module probe),
 * and the Bun binaries built the way the release builds them.
 *
 * @module
 */

import { BUN_JIT_POLICY, compileArgv } from "../scripts/build_release.ts";
import { pause, ROOT, sampleProc } from "./_harness.ts";

/**
 * Starts a program with piped stdin and stdout and returns once it has printed its first stdout
 * line (`ready`, or the bare reader's stand-in); stop it with {@linkcode stopAnswered}.
 *
 * @param argv The program and its arguments.
 * @param env Its environment (the caller's when absent).
 * @returns The running program.
 */
export async function startAnswered(
  argv: readonly string[],
  env?: Record<string, string>,
): Promise<Deno.ChildProcess> {
  const child = new Deno.Command(argv[0], {
    args: argv.slice(1),
    ...(env ? { env } : {}),
    stdin: "piped",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  try {
    const reader = child.stdout.getReader();
    await reader.read();
    reader.releaseLock();
    return child;
  } catch (err) {
    await stopAnswered(child);
    throw err;
  }
}

/**
 * Ends a program {@linkcode startAnswered} started: closes its stdin (each of them exits at its
 * end) and waits for it.
 *
 * @param child The program.
 */
export async function stopAnswered(child: Deno.ChildProcess): Promise<void> {
  await child.stdin.close().catch(() => {});
  await child.status;
  await child.stdout.cancel().catch(() => {});
}

/**
 * A program's RSS in MiB, `settleMs` after its first stdout line.
 *
 * @param argv The program and its arguments.
 * @param env Its environment (the caller's when absent).
 * @param settleMs How long start-up gets to settle before the sample.
 * @returns The RSS.
 */
export async function rssAfter(
  argv: readonly string[],
  env: Record<string, string> | undefined,
  settleMs: number,
): Promise<number> {
  const child = await startAnswered(argv, env);
  try {
    await pause(settleMs);
    return sampleProc(child.pid).rssKiB / 1024;
  } finally {
    await stopAnswered(child);
  }
}

/**
 * Builds a Bun binary of `entry` as the release does (`scripts/build_release.ts`), optionally
 * without its JIT policy.
 *
 * @param entry The entry module.
 * @param output Where the binary goes.
 * @param options `jitPolicy: false` leaves out {@linkcode BUN_JIT_POLICY}.
 * @returns `output`.
 */
export async function compileBun(
  entry: string,
  output: string,
  options: { jitPolicy?: boolean } = {},
): Promise<string> {
  const argv = compileArgv({
    target: null,
    host: null,
    entry,
    output,
    bun: `${ROOT}node_modules/.bin/bun`,
  }).filter((a) => options.jitPolicy !== false || a !== BUN_JIT_POLICY);
  const out = await new Deno.Command(argv[0], { args: argv.slice(1), stdout: "null" }).output();
  if (!out.success) {
    throw new Error(`cannot build ${entry}: ${new TextDecoder().decode(out.stderr)}`);
  }
  return output;
}
