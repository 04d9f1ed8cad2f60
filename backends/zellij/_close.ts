/**
 * Private to the zellij backend: interrupting a pane (the Ctrl+C byte) and closing it, each only
 * once zellij lists the pane (both exit 0 and do nothing for an unknown id, §5).
 *
 * @module
 */

import type { PaneCredentials } from "../../lib/backend/_pane_credentials.ts";
import type { PaneId } from "../../lib/sys/validate.ts";
import type { ZellijCommand } from "./_command.ts";
import type { ZellijPanes } from "./_panes.ts";
import { zellijPaneId } from "./_parse.ts";

/**
 * `interrupt`: writes the ETX byte to a listed pane.
 *
 * @param ctx The backend's command runner and reads.
 * @param paneId The pane.
 * @param signal Aborts the calls.
 * @throws {MuxError} `pane_not_found` when zellij does not list the pane, or what zellij
 *   answered.
 */
export async function interruptPane(
  ctx: { zellij: ZellijCommand; panes: ZellijPanes },
  paneId: PaneId,
  signal?: AbortSignal,
): Promise<void> {
  const id = zellijPaneId(paneId);
  await ctx.panes.require(id, "interrupt the pane", signal);
  // The raw ETX byte: the pty's line discipline turns it into SIGINT. `send-keys "Ctrl c"`
  // with -p writes kitty CSI-u (ESC[99;5u), which a cooked tty does not (§4).
  await ctx.zellij.must(`interrupt pane "${id}"`, ["write", "-p", id, "3"], signal);
}

/**
 * `kill`: closes a listed pane, after removing its credentials file if its program never read it.
 *
 * @param ctx The backend's command runner and reads.
 * @param paneId The pane.
 * @param signal Aborts the calls.
 * @throws {MuxError} `pane_not_found` when zellij does not list the pane, or what zellij
 *   answered.
 */
export async function killPane(
  ctx: { zellij: ZellijCommand; panes: ZellijPanes; credentials: PaneCredentials },
  paneId: PaneId,
  signal?: AbortSignal,
): Promise<void> {
  const id = zellijPaneId(paneId);
  // A pane that never started leaves its credentials file: it goes with the pane.
  ctx.credentials.forget(id);
  await ctx.panes.require(id, "close the pane", signal);
  await ctx.zellij.must(`close pane "${id}"`, ["close-pane", "-p", id], signal);
}
