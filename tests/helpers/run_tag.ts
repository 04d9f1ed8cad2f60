/**
 * The test run's tag, for children started with a cleared environment. `scripts/run_tests.ts`
 * sets `MUXBRIDGE_TEST_RUN` for the whole run and, once `deno test` has ended, fails the run
 * for every process that still carries it (a process a test started and did not stop). A
 * child that inherits the environment carries it already; one started with `clearEnv` (an
 * isolated OpenCode, a bridge, a CLI run) must be handed it explicitly, with
 * {@linkcode runTag}, or its leaks would go unseen.
 *
 * @module
 */

import { RUN_TAG_VAR } from "../../scripts/_tagged_processes.ts";

/**
 * The tag as an environment entry to spread into a child's `env`: `{ MUXBRIDGE_TEST_RUN }`
 * inside a run of `scripts/run_tests.ts`, `{}` outside one (a bare `deno test`).
 *
 * @returns The entry, or nothing.
 *
 * @example An isolated child that still carries the tag
 * ```ts
 * import { runTag } from "./run_tag.ts";
 * new Deno.Command("true", { env: { PATH: "/usr/bin:/bin", ...runTag() }, clearEnv: true });
 * ```
 */
export function runTag(): Record<string, string> {
  const tag = Deno.env.get(RUN_TAG_VAR);
  return tag === undefined ? {} : { [RUN_TAG_VAR]: tag };
}
