/**
 * Private to backends: the `<backend> binary` doctor check of a backend that runs a CLI.
 *
 * @module
 */

import type { MuxError } from "../sys/errors.ts";
import type { Check } from "./backend.ts";
import type { CommandRun } from "./_run_command.ts";
import { failedCheck } from "./failed_check.ts";

/**
 * The `<backend> binary` doctor check of a CLI backend from its `--version` run, or from what
 * running it threw; when nothing ran, the checks that need the binary follow as not checked.
 *
 * @param backend The backend's name (`tmux`).
 * @param bin The program, as the passing check names it.
 * @param raw The `--version` run, or the error running it threw.
 * @param failed The error of a run that exited non-zero.
 * @param dependents The checks that cannot run without the binary.
 * @returns The checks, the binary's first.
 */
export function binaryChecks(
  backend: string,
  bin: string,
  raw: CommandRun | Error,
  failed: (run: CommandRun) => MuxError,
  dependents: readonly string[],
): Check[] {
  const name = `${backend} binary`;
  if (raw instanceof Error) {
    return [
      failedCheck(name, raw),
      ...dependents.map((d): Check => ({
        name: d,
        status: "fail",
        detail: `not checked: no ${backend} binary`,
      })),
    ];
  }
  return [
    raw.code !== 0
      ? failedCheck(name, failed(raw))
      : { name, status: "pass", detail: `${bin}: ${raw.stdout.trim()}` },
  ];
}
