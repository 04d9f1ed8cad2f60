/**
 * Runs one muxbridge CLI command as a black box (the compiled binary when `MUXBRIDGE_TEST_BIN`
 * is set, else `deno run main.ts`; see {@linkcode muxbridgeArgv}) with an isolated environment,
 * and returns its exit code, stdout and stderr separately.
 *
 * @module
 */

import { muxbridgeArgv } from "./bridge_process.ts";
import { runTag } from "./run_tag.ts";

/** What one run printed. */
export interface CliRun {
  /** Exit code. */
  code: number;
  /** Standard output. */
  stdout: string;
  /** Standard error. */
  stderr: string;
}

/** Options of {@linkcode runCli}. */
export interface CliOptions {
  /** The whole environment (PATH is added when absent). @default {} */
  env?: Record<string, string>;
  /** Text on stdin, then end of file. @default no input (stdin is /dev/null) */
  stdin?: string;
  /** Kill the run after this many ms; a ceiling for a hung process. @default 120000 */
  timeoutMs?: number;
}

/**
 * Runs `muxbridge …args`.
 *
 * @param args Command and flags.
 * @param options Environment, stdin, timeout.
 * @returns Exit code, stdout and stderr.
 */
export async function runCli(args: string[], options: CliOptions = {}): Promise<CliRun> {
  const [cmd, ...pre] = muxbridgeArgv();
  const child = new Deno.Command(cmd, {
    args: [...pre, ...args],
    env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", ...options.env, ...runTag() },
    clearEnv: true,
    stdin: options.stdin === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(options.timeoutMs ?? 120_000),
  }).spawn();
  if (options.stdin !== undefined) {
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(options.stdin));
    await writer.close();
  }
  const out = await child.output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}
