/**
 * A recording fake of the exec seam. It answers by exact argv and throws on any call nobody
 * registered, so a test states every program invocation it expects.
 *
 * @module
 */

import type { Runner, RunOptions, RunResult } from "../../lib/sys/exec.ts";

/** One answer: a result, an error to throw, or a function of the call. */
export type FakeAnswer =
  | Partial<RunResult>
  | Error
  | ((
    argv: readonly string[],
    opts: RunOptions,
  ) => Partial<RunResult> | Promise<Partial<RunResult>>);

/** A recorded call. */
export interface FakeCall {
  /** The argv. */
  argv: readonly string[];
  /** The options. */
  opts: RunOptions;
}

/** The fake runner with its recording and registration methods. */
export interface FakeRunner {
  /** The runner to inject. */
  run: Runner;
  /** Every call so far, in order. */
  calls: FakeCall[];
  /** Registers an answer for an exact argv; several answers are used in turn, the last repeats. */
  on(argv: readonly string[], ...answers: FakeAnswer[]): FakeRunner;
  /** Registers a fallback for calls whose argv starts with `prefix`. */
  onPrefix(prefix: readonly string[], answer: FakeAnswer): FakeRunner;
}

const key = (argv: readonly string[]) => argv.join("\u0000");

/**
 * Creates a fake runner.
 *
 * @returns The fake.
 */
export function createFakeRunner(): FakeRunner {
  const exact = new Map<string, FakeAnswer[]>();
  const prefixes: Array<[readonly string[], FakeAnswer]> = [];
  const calls: FakeCall[] = [];
  const fake: FakeRunner = {
    calls,
    on(argv, ...answers) {
      exact.set(key(argv), answers.length ? answers : [{}]);
      return fake;
    },
    onPrefix(prefix, answer) {
      prefixes.push([prefix, answer]);
      return fake;
    },
    async run(argv, opts) {
      calls.push({ argv: [...argv], opts });
      let answer: FakeAnswer | undefined;
      const queue = exact.get(key(argv));
      if (queue) answer = queue.length > 1 ? queue.shift() : queue[0];
      else answer = prefixes.find(([p]) => p.every((v, i) => argv[i] === v))?.[1];
      if (answer === undefined) {
        throw new Error(`fake runner: unexpected call ${JSON.stringify(argv)}`);
      }
      if (answer instanceof Error) throw answer;
      const result = typeof answer === "function" ? await answer(argv, opts) : answer;
      return { code: result.code ?? 0, stdout: result.stdout ?? "", stderr: result.stderr ?? "" };
    },
  };
  return fake;
}
