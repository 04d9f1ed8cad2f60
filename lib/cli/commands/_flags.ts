/**
 * Checks of command-line values that commands share, run first in a command's `run` so that
 * argv is refused (exit 2, naming the flag) before any file is read or anything is probed.
 *
 * @module
 */

import { isMuxError, MuxError } from "../../sys/errors.ts";
import type { Invocation } from "./_command.ts";
import {
  normalizeServerUrl,
  type PaneId,
  type ServerUrl,
  type SessionId,
  validateDirectory,
  validatePaneId,
  validateSessionId,
} from "../../sys/validate.ts";

/** Rethrows a value check's `invalid_argument` as the `usage` error of the flag it came from. */
function asUsage<T>(check: () => T): T {
  try {
    return check();
  } catch (err) {
    if (isMuxError(err, "invalid_argument")) {
      throw new MuxError("usage", err.message, err.hint ? { hint: err.hint } : {});
    }
    throw err;
  }
}

/**
 * Reads a string flag that must be given.
 *
 * @param values The command's flag values.
 * @param name The flag, without `--`.
 * @param command The command, for the hint.
 * @returns Its value.
 * @throws {MuxError} `usage` when it is missing or empty.
 */
export function requiredFlag(
  values: Invocation["values"],
  name: string,
  command: string,
): string {
  const v = values[name];
  if (typeof v !== "string" || v === "") {
    throw new MuxError("usage", `Cannot run ${command} without --${name}`, {
      hint: `Run \`muxbridge ${command} --help\``,
    });
  }
  return v;
}

/**
 * Normalises the server URL a flag gave.
 *
 * @param raw The flag's value.
 * @param flag The flag, for messages. @default "--url"
 * @returns The URL and any credentials it held.
 * @throws {MuxError} `usage` naming the flag when it is not an http(s) URL.
 */
export function urlFlag(raw: string, flag = "--url"): ServerUrl {
  return asUsage(() => normalizeServerUrl(raw, flag));
}

/**
 * Checks the directory a flag gave: absolute, no control characters.
 *
 * @param dir The flag's value.
 * @param flag The flag, for messages. @default "--dir"
 * @returns The directory.
 * @throws {MuxError} `usage` naming the flag.
 */
export function dirFlag(dir: string, flag = "--dir"): string {
  return asUsage(() => validateDirectory(dir, flag));
}

/**
 * Checks a session id given on the command line.
 *
 * @param id The id.
 * @returns The id.
 * @throws {MuxError} `usage` unless it is `ses_` and 1–128 letters or digits.
 */
export function sessionIdFlag(id: string): SessionId {
  return asUsage(() => validateSessionId(id));
}

/**
 * Checks a pane id given on the command line, before any backend is chosen.
 *
 * @param id The id.
 * @returns The id.
 * @throws {MuxError} `usage` when no multiplexer could have such an id.
 */
export function paneIdArgument(id: string): PaneId {
  return asUsage(() => validatePaneId(id));
}
