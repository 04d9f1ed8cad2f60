/**
 * Which OpenCode versions muxbridge's pane command works with.
 *
 * Panes run `opencode attach <url> --session <id> --dir <dir>` (the contract). That is the
 * OpenCode 1.x CLI: verified live on 1.18.33; `attach` had `--session` and `--dir` through 1.x
 * (opencode issues #5380, #6413, #8981 discuss `--dir` on 1.0/1.1). OpenCode 2 has no `attach`
 * and opens a session with `opencode --server <url> --session <id>`, so a 2.x server gets no pane
 * rather than a pane whose program exits at once (`docs/opencode.md`, "Which `attach` a pane can
 * run").
 *
 * @module
 */

import semver from "semver";

/** The OpenCode versions whose `attach` matches the contract's pane command. */
export const SUPPORTED_OPENCODE = ">=1.0.0 <2.0.0";

/** The verdict on one version. */
export type VersionVerdict =
  | { readonly supported: true; readonly version: string }
  | { readonly supported: false; readonly version: string; readonly hint: string }
  | { readonly supported: null; readonly version: null };

/**
 * Tells whether panes can attach to an OpenCode of this version.
 *
 * A prerelease counts as the release it leads to (`2.0.0-beta.1` is 2.x: its `attach` already
 * differs), so the version is coerced before the range check.
 *
 * @param version The version the server or binary reported; undefined or null when unknown.
 * @returns `supported: null` when the version is unknown or not semver (the caller goes on and
 *   says so), else whether it is in {@linkcode SUPPORTED_OPENCODE}, with a hint when not.
 *
 * @example
 * ```ts
 * import { attachSupport } from "./version.ts";
 * attachSupport("1.18.33").supported; // true
 * attachSupport("2.0.1").supported; // false
 * ```
 */
export function attachSupport(version: string | null | undefined): VersionVerdict {
  const coerced = version ? semver.coerce(version) : null;
  if (!version || !coerced) return { supported: null, version: null };
  if (semver.satisfies(coerced, SUPPORTED_OPENCODE)) return { supported: true, version };
  const major = coerced.major;
  return {
    supported: false,
    version,
    hint: major >= 2
      ? `OpenCode ${version} has no \`opencode attach\`; muxbridge panes need OpenCode ${SUPPORTED_OPENCODE} (npm install -g opencode-ai@1)`
      : `OpenCode ${version} is too old for \`opencode attach --session --dir\`; upgrade to ${SUPPORTED_OPENCODE}`,
  };
}
