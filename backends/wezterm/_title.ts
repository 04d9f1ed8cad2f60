/**
 * Private to the wezterm backend: pane titles, which WezTerm cannot set (§3): `set-tab-title`
 * would rename the user's tab, and muxbridge's panes never have a tab of their own.
 *
 * @module
 */

import { MuxError } from "../../lib/sys/errors.ts";
import type { PaneId } from "../../lib/sys/validate.ts";
import type { WeztermPanes } from "./_panes.ts";
import { weztermPaneId } from "./_parse.ts";

/**
 * `setTitle`: refuses, once the pane is known to exist.
 *
 * @param panes The backend's reads.
 * @param paneId The pane.
 * @param _title The title (never set).
 * @param signal Aborts the listing.
 * @throws {MuxError} `pane_not_found` when WezTerm does not list the pane, else `unsupported`.
 */
export async function setPaneTitle(
  panes: WeztermPanes,
  paneId: PaneId,
  _title: string,
  signal?: AbortSignal,
): Promise<void> {
  const id = weztermPaneId(paneId);
  if (!(await panes.list(signal)).some((p) => p.paneId === id)) {
    throw new MuxError("pane_not_found", `Cannot title pane ${id}: WezTerm does not list it`);
  }
  throw new MuxError(
    "unsupported",
    `Cannot title WezTerm pane ${id}: wezterm has no pane title command, and set-tab-title would rename the user's tab`,
  );
}
