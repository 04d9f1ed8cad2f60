/**
 * Private to backends: gating the version a backend read against its oldest supported one.
 *
 * @module
 */

import semver from "semver";
import { MuxError } from "../sys/errors.ts";
import type { VersionGate } from "./backend.ts";

/**
 * Gates a version a backend read: none in the text is `unparseable_output`, one older than the
 * gate's minimum is `unsupported_version` (semver order: a preview sorts before its release).
 *
 * @param gate The backend's gate.
 * @param text What the program printed (trimmed), for the message.
 * @param version The semver read from it, or `null` when there was none.
 * @param options `argv` that printed it; `shown`, the version as messages show it.
 * @returns The version.
 * @throws {MuxError} `unparseable_output`, `unsupported_version`.
 *
 * @example
 * ```ts ignore
 * gateVersion(TMUX_GATE, "tmux 3.3a", "3.3.0"); // "3.3.0"
 * ```
 */
export function gateVersion(
  gate: VersionGate,
  text: string,
  version: string | null,
  options: { argv?: readonly string[]; shown?: string } = {},
): string {
  if (version === null) {
    throw new MuxError(
      "unparseable_output",
      `Cannot read the ${gate.program} version from ${JSON.stringify(text.slice(0, 100))}`,
      { argv: options.argv, hint: gate.unreadableHint },
    );
  }
  if (semver.lt(version, gate.min)) {
    throw new MuxError(
      "unsupported_version",
      `${gate.program} ${options.shown ?? version} is too old, need >= ${
        gate.minShown ?? gate.min
      }`,
      { hint: gate.tooOldHint },
    );
  }
  return version;
}
