/**
 * Private to the kitty backend: the anchor, the window whose tab panes open in, next to it.
 *
 * @module
 */

import type { BackendDeps } from "../../lib/backend/backend.ts";
import { WINDOW_ID } from "./_parse.ts";
import type { KittyConfig } from "./_traits.ts";

/** What to do when the anchor window cannot be found. */
export const ANCHOR_HINT =
  "Run muxbridge in the kitty window panes should open next to, or set kitty.window_id to a live window";

/**
 * The anchor window: `kitty.window_id`, else `$KITTY_WINDOW_ID` when the address is the one of
 * the kitty muxbridge runs in (a window id of another kitty would name an unrelated window).
 *
 * @param deps The backend's deps (config `kitty.window_id`, `kitty.listen_on`; identity).
 * @returns The window id, or undefined when there is none.
 */
export function anchorWindow(deps: BackendDeps<KittyConfig>): string | undefined {
  const layer = deps.identity.layers.find((l) => l.backend === "kitty");
  const configured = deps.config.kitty.window_id;
  if (configured !== undefined) return String(configured);
  const listenOn = deps.config.kitty.listen_on;
  const sameInstance = listenOn === undefined || listenOn === layer?.socket;
  if (layer?.paneId && sameInstance && WINDOW_ID.test(layer.paneId)) return layer.paneId;
  return undefined;
}
