/**
 * The muxbridge OpenCode 2.x plugin's TUI entry (`tui.js` of the installed
 * `plugins/muxbridge/` folder): runs in every OpenCode 2.x TUI process, in the user's terminal.
 * In muxbridge's own panes it keeps the pane on its child session; in the user's TUI it starts
 * one bridge and feeds it the TUI's events and view (see `src/tui.ts`).
 *
 * @module
 */

import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { type Cleanup, startTui } from "./src/tui.ts";

const here = dirname(fileURLToPath(import.meta.url));

/** The plugin module. */
export default {
  id: "muxbridge",
  /**
   * Starts muxbridge for this TUI.
   *
   * @param ctx OpenCode's TUI plugin context.
   * @returns The cleanup OpenCode runs when it unloads the plugin.
   */
  setup(ctx: unknown): Cleanup {
    return startTui(ctx, here);
  },
};
