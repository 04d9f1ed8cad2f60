/**
 * Private to the tmux backend: a pane's title (`select-pane -T`), the child's state, kept in a
 * pane user option for a user's `pane-border-format`, and bringing a pane to the front.
 *
 * @module
 */

import type { PaneStatus } from "../../lib/backend/pane_status.ts";
import { cleanTitle, type PaneId } from "../../lib/sys/validate.ts";
import type { TmuxCommand } from "./_command.ts";
import { escapeTitle, tmuxPaneId } from "./_parse.ts";

/**
 * The pane user option holding the child's state (`busy`, `retry`, `idle`, `error`, `waiting`,
 * `failed`) for a user's `pane-border-format` (docs/backends/tmux.md, "The child's state in the
 * border").
 * Stored verbatim: `set-option` expands nothing without `-F`.
 */
const STATUS_OPTION = "@muxbridge-status";

/**
 * The status option a new pane gets with its marks (none before anything is known).
 *
 * @param status The child's status when the pane opens, if known.
 * @returns The option to set, or none.
 */
export function statusOption(status: PaneStatus | undefined): Array<[string, string]> {
  return status === undefined || status.state === "unknown" ? [] : [[STATUS_OPTION, status.state]];
}

/**
 * Titles a pane.
 *
 * @param tmux The backend's command runner.
 * @param paneId The pane (`%N`).
 * @param title The title, cleaned and escaped here.
 * @param signal Aborts the call.
 * @throws {MuxError} `pane_not_found` for an unknown pane, or what tmux answered.
 */
export async function titlePane(
  tmux: TmuxCommand,
  paneId: PaneId,
  title: string,
  signal?: AbortSignal,
): Promise<void> {
  const id = tmuxPaneId(paneId);
  await tmux.must(
    `title pane "${id}"`,
    [["select-pane", "-t", id, "-T", escapeTitle(cleanTitle(title))]],
    signal,
  );
}

/**
 * Shows the child's status on its pane: the title, then the status option (unset when the
 * state is unknown).
 *
 * @param tmux The backend's command runner.
 * @param paneId The pane (`%N`).
 * @param status The title and state to show.
 * @param signal Aborts the call.
 * @throws {MuxError} `pane_not_found` for an unknown pane, or what tmux answered.
 */
export async function showStatus(
  tmux: TmuxCommand,
  paneId: PaneId,
  status: PaneStatus,
  signal?: AbortSignal,
): Promise<void> {
  // One tmux process: the title, then the user option (select-pane fails first on a pane
  // that is gone, with the "can't find pane" tmuxError reads as pane_not_found).
  const id = tmuxPaneId(paneId);
  await tmux.must(
    `show the status of pane "${id}"`,
    [
      ["select-pane", "-t", id, "-T", escapeTitle(cleanTitle(status.title))],
      status.state === "unknown"
        ? ["set-option", "-p", "-u", "-t", id, STATUS_OPTION]
        : ["set-option", "-p", "-t", id, STATUS_OPTION, status.state],
    ],
    signal,
  );
}

/**
 * Brings a pane to the front: its window becomes its session's current window, and the pane
 * its window's active pane (`attention_focus`).
 *
 * @param tmux The backend's command runner.
 * @param paneId The pane (`%N`).
 * @param signal Aborts the call.
 * @throws {MuxError} `pane_not_found` for an unknown pane, or what tmux answered.
 */
export async function focusPane(
  tmux: TmuxCommand,
  paneId: PaneId,
  signal?: AbortSignal,
): Promise<void> {
  const id = tmuxPaneId(paneId);
  // A pane id is a window target too: its window.
  await tmux.must(
    `focus pane "${id}"`,
    [["select-window", "-t", id], ["select-pane", "-t", id]],
    signal,
  );
}
