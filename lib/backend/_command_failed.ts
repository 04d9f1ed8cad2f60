/**
 * Private to backends: the error of a failed program run that means nothing more specific.
 *
 * @module
 */

import { MuxError } from "../sys/errors.ts";
import { describeArgv } from "../sys/exec.ts";
import type { CommandRun } from "./_run_command.ts";

/**
 * What a failed run tells: its argv, exit code and stderr (trimmed), for a `MuxError`.
 *
 * @param run The failed run.
 * @returns The error options.
 */
export function runDetails(
  run: CommandRun,
): { argv: readonly string[]; exitCode: number; stderr: string } {
  return { argv: run.argv, exitCode: run.code, stderr: run.stderr.trim() };
}

/**
 * The error for a failed run that means nothing more specific: `command_failed`, `Cannot
 * <action>: <argv> exited <code>: <text>`, with {@linkcode runDetails}.
 *
 * @param action What was being done ("close pane \"%3\"").
 * @param run The failed run.
 * @param text What the program said. @default its stderr, trimmed
 * @returns The error.
 */
export function commandFailed(
  action: string,
  run: CommandRun,
  text: string = run.stderr.trim(),
): MuxError {
  return new MuxError(
    "command_failed",
    `Cannot ${action}: ${describeArgv(run.argv)} exited ${run.code}: ${text}`,
    runDetails(run),
  );
}
