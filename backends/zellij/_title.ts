/**
 * Private to the zellij backend: pane titles (`rename-pane`, which exits 0 and does nothing for
 * an unknown id, §5).
 *
 * @module
 */

import { cleanTitle, type PaneId } from "../../lib/sys/validate.ts";
import type { ZellijCommand } from "./_command.ts";
import type { ZellijPanes } from "./_panes.ts";
import { zellijPaneId } from "./_parse.ts";

/**
 * `setTitle`: renames a listed pane; a title that cleans to nothing changes nothing.
 *
 * @param ctx The backend's command runner and reads.
 * @param paneId The pane.
 * @param title The title (cleaned and capped here).
 * @param signal Aborts the calls.
 * @throws {MuxError} `pane_not_found` when zellij does not list the pane, or what zellij
 *   answered.
 */
export async function setPaneTitle(
  ctx: { zellij: ZellijCommand; panes: ZellijPanes },
  paneId: PaneId,
  title: string,
  signal?: AbortSignal,
): Promise<void> {
  const id = zellijPaneId(paneId);
  const clean = cleanTitle(title);
  await ctx.panes.require(id, "title the pane", signal);
  if (clean === "") return;
  await ctx.zellij.must(`title pane "${id}"`, ["rename-pane", "-p", id, "--", clean], signal);
}
