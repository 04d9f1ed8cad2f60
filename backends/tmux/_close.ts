/**
 * Private to the tmux backend: interrupting a pane (Ctrl+C) and killing it, with a listing of the
 * anchor's session in the same call.
 *
 * @module
 */

import type { PaneId } from "../../lib/sys/validate.ts";
import type { Anchor } from "./_anchor.ts";
import { commandLine, type TmuxCommand, tmuxError } from "./_command.ts";
import { parseOpenOutput, sessionListing } from "./_open.ts";
import { tmuxPaneId } from "./_parse.ts";

/**
 * Types Ctrl+C into a pane.
 *
 * @param tmux The backend's command runner.
 * @param paneId The pane (`%N`).
 * @param signal Aborts the call.
 * @throws {MuxError} `pane_not_found` for an unknown pane, or what tmux answered.
 */
export async function interruptPane(
  tmux: TmuxCommand,
  paneId: PaneId,
  signal?: AbortSignal,
): Promise<void> {
  const id = tmuxPaneId(paneId);
  await tmux.must(`interrupt pane "${id}"`, [["send-keys", "-t", id, "C-c"]], signal);
}

/**
 * Kills a pane. When the anchor is known, the kill and a listing of its session go in one call
 * and the listing is kept for the next decision.
 *
 * @param ctx The backend's command runner and anchor.
 * @param paneId The pane (`%N`).
 * @param signal Aborts the calls.
 * @throws {MuxError} `pane_not_found` for an unknown pane, or what tmux answered.
 */
export async function killPane(
  ctx: { tmux: TmuxCommand; anchor: Anchor },
  paneId: PaneId,
  signal?: AbortSignal,
): Promise<void> {
  const { tmux, anchor } = ctx;
  const id = tmuxPaneId(paneId);
  const action = `close pane "${id}"`;
  const at = anchor.known();
  if (at !== undefined) {
    // The kill and a listing of the session in one call; the kill sits in a block, a command
    // group of its own, so the listing runs even when the pane had already gone and the
    // next open decides on what is there now. kill-pane removes the pane before it returns
    // (`server_kill_pane`, tmux 3.3a `server-fn.c`): exit 0 means it is gone.
    const result = await tmux.run(
      [["if-shell", "-F", "1", commandLine([["kill-pane", "-t", id]])], sessionListing(at)],
      signal,
    );
    const { listing } = parseOpenOutput(result.stdout);
    anchor.absorb(at, listing);
    if (result.code === 0) return;
    if (listing !== undefined) throw tmuxError(action, result);
    // No listing (the anchor went away): whether the kill ran is unknown, so kill alone.
  }
  await tmux.must(action, [["kill-pane", "-t", id]], signal);
}
