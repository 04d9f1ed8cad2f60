/**
 * Private to the herdr backend: which herdr versions and socket protocols muxbridge accepts.
 *
 * @module
 */

import type { VersionGate } from "../../lib/backend/backend.ts";

/** The oldest herdr muxbridge supports (see `backends/herdr/backend.ts`). */
export const HERDR_MIN_VERSION = "0.8.2";

/**
 * The socket protocols muxbridge's own socket client speaks: 20 (herdr 0.8.2, whose source was
 * read) through 22 (0.9.0: eleven methods added, none removed or changed among those used here,
 * herdr.md §2). herdr bumps the protocol on most minor releases and its own CLI refuses any
 * server whose protocol differs from its own (herdr.md §6, §12), so a server outside this range
 * is left to the installed herdr CLI, which is herdr's own compatibility check.
 */
export const HERDR_PROTOCOLS = { min: 20, max: 22 } as const;

/** herdr's version gate: previews sort before their release. */
export const HERDR_GATE: VersionGate = {
  program: "herdr",
  min: HERDR_MIN_VERSION,
  unreadableHint: "Check that herdr.bin names herdr",
  tooOldHint: `Upgrade herdr to ${HERDR_MIN_VERSION} or later (a release, not a preview)`,
};
