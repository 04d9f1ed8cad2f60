/**
 * Private to the herdr backend: which herdr versions and socket protocols muxbridge accepts.
 *
 * @module
 */

import semver from "semver";
import { MuxError } from "../../lib/errors.ts";

/** The oldest herdr muxbridge supports (see `backends/herdr.ts`). */
export const HERDR_MIN_VERSION = "0.8.2";

/**
 * The socket protocols muxbridge's own socket client speaks: 20 (herdr 0.8.2, whose source was
 * read) through 22 (0.9.0: eleven methods added, none removed or changed among those used here,
 * herdr.md §2). herdr bumps the protocol on most minor releases and its own CLI refuses any
 * server whose protocol differs from its own (herdr.md §6, §12), so a server outside this range
 * is left to the installed herdr CLI, which is herdr's own compatibility check.
 */
export const HERDR_PROTOCOLS = { min: 20, max: 22 } as const;

/**
 * Gates a herdr version at {@linkcode HERDR_MIN_VERSION}: previews sort before their release.
 *
 * @param version The semver text (from `herdr --version` or the server's `ping`).
 * @returns The version.
 * @throws {MuxError} `unsupported_version`.
 */
export function gateVersion(version: string): string {
  if (semver.lt(version, HERDR_MIN_VERSION)) {
    throw new MuxError(
      "unsupported_version",
      `herdr ${version} is too old, need >= ${HERDR_MIN_VERSION}`,
      { hint: `Upgrade herdr to ${HERDR_MIN_VERSION} or later (a release, not a preview)` },
    );
  }
  return version;
}
