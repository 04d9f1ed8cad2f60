/**
 * Ids for tests. Checked ids are made as the code makes them (`validateSessionId`,
 * `validatePaneId`); {@linkcode forgedPaneId} is the one place a test skips the check, to prove
 * that a backend still refuses a bad id it is handed (by a caller outside the type system, or a
 * cast), before the id reaches a program's argv.
 *
 * @module
 */

import type { PaneId } from "../../lib/sys/validate.ts";

/**
 * A pane id that did not go through a check, for tests of a backend's own refusal.
 *
 * @param text Any text, such as `-t` or `%1;kill-server`.
 * @returns The text, typed as a pane id.
 */
export function forgedPaneId(text: string): PaneId {
  return text as PaneId;
}
