/**
 * Private to backends: reading a program's version the way its {@linkcode VersionGate} states, and
 * gating it against the oldest supported one.
 *
 * @module
 */

import semver from "semver";
import { MuxError } from "../sys/errors.ts";
import type { Version, VersionGate } from "./backend.ts";

/** A date version as WezTerm prints it: `YYYYMMDD-HHMMSS-<commit>`. */
const DATE_VERSION = /^(?<date>\d{8})-(?<time>\d{6})-(?<commit>[0-9a-f]{6,40})$/;

/** A date version from its parts, or null when the date or time does not exist. */
function dateVersion(date: string, time: string, commit: string): Version | null {
  const iso = `${date.slice(0, 4)}-${date.slice(4, 6)}-${date.slice(6, 8)}`;
  const when = new Date(`${iso}T${time.slice(0, 2)}:${time.slice(2, 4)}:${time.slice(4, 6)}Z`);
  if (Number.isNaN(when.getTime()) || when.toISOString().slice(0, 10) !== iso) return null;
  return {
    semver: `${Number(date)}.${Number(time)}.0+${commit}`,
    text: `${date}-${time}-${commit}`,
    date: iso,
  };
}

/**
 * Reads a version from what a program printed, as its gate's pattern and scheme say.
 *
 * @param gate The backend's gate.
 * @param text What the program printed.
 * @returns The version, or null when the text holds none.
 *
 * @example
 * ```ts
 * import { readVersion } from "./_version_gate.ts";
 * const gate = {
 *   program: "tmux",
 *   scheme: "semver" as const,
 *   pattern: /^(?:tmux\s+)?(?:next-)?(?<major>\d+)\.(?<minor>\d+)[a-z]?(?:-rc\d*)?$/,
 *   min: "3.0.0",
 *   unreadableHint: "Check that tmux.bin names tmux",
 *   tooOldHint: "Install tmux 3.0 or later",
 * };
 * readVersion(gate, "tmux 3.3a")?.semver; // "3.3.0"
 * ```
 */
export function readVersion(gate: VersionGate, text: string): Version | null {
  const g = gate.pattern.exec(text.trim())?.groups;
  if (!g) return null;
  if (gate.scheme === "date") {
    return g.date && g.time && g.commit ? dateVersion(g.date, g.time, g.commit) : null;
  }
  if (g.major === undefined || g.minor === undefined) return null;
  const release = `${Number(g.major)}.${Number(g.minor)}.${Number(g.patch ?? 0)}`;
  const v = semver.valid(g.pre === undefined ? release : `${release}-${g.pre}`);
  return v === null ? null : { semver: v };
}

/** The gate's oldest version, read in its scheme. */
function minimum(gate: VersionGate): Version {
  if (gate.scheme === "date") {
    const g = DATE_VERSION.exec(gate.min)?.groups;
    const v = g ? dateVersion(g.date, g.time, g.commit) : null;
    if (!v) throw new TypeError(`Cannot read the ${gate.program} gate's minimum "${gate.min}"`);
    return v;
  }
  const v = semver.valid(gate.min);
  if (!v) throw new TypeError(`Cannot read the ${gate.program} gate's minimum "${gate.min}"`);
  return { semver: v };
}

/**
 * A version as messages show it: a date version with its date.
 *
 * @param version The version.
 * @returns `3.3.0`, or `20240203-110809-5046fc22 (2024-02-03)`.
 */
export function showVersion(version: Version): string {
  return version.text !== undefined ? `${version.text} (${version.date})` : version.semver;
}

/**
 * Reads and gates a version a backend's program printed: none in the text is
 * `unparseable_output`, one older than the gate's minimum is `unsupported_version` (semver order:
 * a preview sorts before its release; a date version by its date and time).
 *
 * @param gate The backend's gate.
 * @param text What the program printed (trimmed), for the message.
 * @param options `argv` that printed it; `shown`, the version as messages show it.
 * @returns The version.
 * @throws {MuxError} `unparseable_output`, `unsupported_version`.
 *
 * @example
 * ```ts
 * import { gateVersion } from "./_version_gate.ts";
 * const gate = {
 *   program: "zellij",
 *   scheme: "semver" as const,
 *   pattern: /^zellij\s+v?(?<major>\d+)\.(?<minor>\d+)(?:\.(?<patch>\d+))?$/,
 *   min: "0.44.1",
 *   unreadableHint: "Check that zellij.bin names zellij",
 *   tooOldHint: "Upgrade zellij to 0.44.1 or later",
 * };
 * gateVersion(gate, "zellij 0.45.0").semver; // "0.45.0"
 * ```
 */
export function gateVersion(
  gate: VersionGate,
  text: string,
  options: { argv?: readonly string[]; shown?: string } = {},
): Version {
  const version = readVersion(gate, text);
  if (version === null) {
    throw new MuxError(
      "unparseable_output",
      `Cannot read the ${gate.program} version from ${JSON.stringify(text.slice(0, 100))}`,
      { argv: options.argv, hint: gate.unreadableHint },
    );
  }
  const min = minimum(gate);
  if (semver.lt(version.semver, min.semver)) {
    const need = gate.minShown ?? (min.text !== undefined ? showVersion(min) : gate.min);
    throw new MuxError(
      "unsupported_version",
      `${gate.program} ${options.shown ?? showVersion(version)} is too old, need >= ${need}`,
      { hint: gate.tooOldHint },
    );
  }
  return version;
}
