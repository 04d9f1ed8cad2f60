/**
 * Private to the zellij backend: `zellij --version`, gated, and what the version turns on
 * (`new-pane --no-focus`, PR #5346, §7).
 *
 * @module
 */

import semver from "semver";
import { keepSuccess } from "../../lib/backend/_keep_success.ts";
import { gateVersion } from "../../lib/backend/_version_gate.ts";
import type { Capabilities } from "../../lib/backend/backend.ts";
import { type ZellijCommand, zellijError } from "./_command.ts";
import { ZELLIJ_GATE } from "./_traits.ts";

/** `new-pane --no-focus` (PR #5346, §7). */
export const NO_FOCUS_VERSION = "0.45.0";

/**
 * Parses and gates `zellij --version`.
 *
 * @param stdout What `zellij --version` printed.
 * @param argv The command, for the error.
 * @returns The version.
 * @throws {MuxError} `unparseable_output`, `unsupported_version`.
 */
export function gateZellij(stdout: string, argv: readonly string[]): string {
  const text = stdout.trim();
  return gateVersion(ZELLIJ_GATE, text, { argv }).semver;
}

/**
 * `zellij --version`, gated; a success is kept for the backend's life and sets
 * `capabilities.focusSafe` (whether new panes keep the user's focus).
 *
 * @param zellij The backend's command runner.
 * @param capabilities The backend's capabilities, whose `focusSafe` the version sets.
 * @returns The version step.
 * @throws {MuxError} What zellij answered, `unparseable_output`, `unsupported_version`.
 */
export function createZellijVersion(
  zellij: ZellijCommand,
  capabilities: Capabilities,
): (signal?: AbortSignal) => Promise<string> {
  return keepSuccess(async (signal?: AbortSignal): Promise<string> => {
    const result = await zellij.version(signal);
    if (result.code !== 0) throw zellijError("read the zellij version", result);
    const v = gateZellij(result.stdout, result.argv);
    capabilities.focusSafe = semver.gte(v, NO_FOCUS_VERSION);
    return v;
  });
}
