/**
 * Private to the wezterm backend: ending a pane — the interrupt (Ctrl+C typed into it) and the
 * kill, which also removes the pane's credentials file and forgets it as a split target.
 *
 * @module
 */

import { removeCredentialsFile } from "../../lib/sys/credentials_file.ts";
import type { PaneId } from "../../lib/sys/validate.ts";
import type { WeztermCommand } from "./_command.ts";
import type { WeztermState } from "./_panes.ts";
import { weztermPaneId } from "./_parse.ts";

/**
 * `kill`: closes a pane (`kill-pane`), after removing its credentials file.
 *
 * @param ctx The command runner and the backend's state.
 * @param paneId The pane.
 * @param signal Aborts the call.
 * @throws {MuxError} `invalid_argument`, `pane_not_found`, or the call's error.
 */
export async function killPane(
  ctx: { wezterm: WeztermCommand; state: WeztermState },
  paneId: PaneId,
  signal?: AbortSignal,
): Promise<void> {
  const { state } = ctx;
  const id = weztermPaneId(paneId);
  const credentials = state.credentialFiles.get(id);
  if (credentials) {
    state.credentialFiles.delete(id);
    removeCredentialsFile(credentials);
  }
  state.opened.delete(id);
  // kill-pane: SIGHUP, then SIGKILL after ~200 ms, and the pane leaves the list before the call
  // returns (§3).
  await ctx.wezterm.must(`close pane ${id}`, ["kill-pane", "--pane-id", id], signal);
}

/**
 * `interrupt`: types Ctrl+C into a pane.
 *
 * @param wezterm The command runner.
 * @param paneId The pane.
 * @param signal Aborts the call.
 * @throws {MuxError} `invalid_argument`, `pane_not_found`, or the call's error.
 */
export async function interruptPane(
  wezterm: WeztermCommand,
  paneId: PaneId,
  signal?: AbortSignal,
): Promise<void> {
  const id = weztermPaneId(paneId);
  // --no-paste: the byte goes to the pty as typed, so the tty makes SIGINT of it (a cooked
  // program) or a TUI reads Ctrl+C; a paste would be bracketed text (§3).
  await wezterm.must(`interrupt pane ${id}`, [
    "send-text",
    "--pane-id",
    id,
    "--no-paste",
    "--",
    "\x03",
  ], signal);
}
