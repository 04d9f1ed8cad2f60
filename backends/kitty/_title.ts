/**
 * Private to the kitty backend: titling a window (`set-window-title`) and bringing one to the
 * front (`focus-window`).
 *
 * @module
 */

import { cleanTitle, type PaneId } from "../../lib/sys/validate.ts";
import type { KittyCommand } from "./_command.ts";
import { kittyWindowId } from "./_parse.ts";

/**
 * Titles a window; an empty title gives it back to its program's title.
 *
 * @param kitty The backend's command runner.
 * @param paneId The window id.
 * @param title The title, cleaned here.
 * @param signal Aborts the call.
 * @throws {MuxError} `pane_not_found` for an unknown window, or what kitty answered.
 */
export async function titleWindow(
  kitty: KittyCommand,
  paneId: PaneId,
  title: string,
  signal?: AbortSignal,
): Promise<void> {
  const id = kittyWindowId(paneId);
  // set-window-title joins its arguments with spaces and takes no special values (0.26.5
  // rc/set_window_title.py); an empty title gives the window back to its program's title.
  const clean = cleanTitle(title);
  await kitty.must(
    `title kitty window ${id}`,
    ["set-window-title", `--match=id:${id}`, "--", ...(clean === "" ? [] : [clean])],
    signal,
  );
}

/**
 * Brings a window to the front: its tab and OS window activated, the window focused
 * (`attention_focus`).
 *
 * @param kitty The backend's command runner.
 * @param paneId The window id.
 * @param signal Aborts the call.
 * @throws {MuxError} `pane_not_found` for an unknown window, or what kitty answered.
 */
export async function focusWindow(
  kitty: KittyCommand,
  paneId: PaneId,
  signal?: AbortSignal,
): Promise<void> {
  const id = kittyWindowId(paneId);
  await kitty.must(`focus kitty window ${id}`, [
    "focus-window",
    `--match=id:${id}`,
  ], signal);
}
