/**
 * Private to the zellij backend: where a new pane goes. zellij has no command that arranges only
 * some panes, so the layout is the split direction chosen when each pane is created.
 *
 * @module
 */

import type { LayoutRequest, LayoutResult } from "../../lib/backend/backend.ts";
import type { LayoutName } from "../../lib/config/config.ts";
import type { Logger } from "../../lib/sys/log.ts";

/**
 * The direction a new pane splits: below for `main-horizontal` and `even-vertical`, else to
 * the right.
 *
 * @param layout The `layout` config.
 * @returns The `new-pane --direction` value.
 */
export function splitDirection(layout: LayoutName): "down" | "right" {
  return layout === "main-horizontal" || layout === "even-vertical" ? "down" : "right";
}

/**
 * `applyLayout`: an honest no-op, and why.
 *
 * @param log Where the reason is logged (debug).
 * @param req The layout asked for.
 * @returns Not applied, with the reason.
 */
export function layoutResult(log: Logger, req: LayoutRequest): Promise<LayoutResult> {
  const detail =
    `zellij has no command that arranges only muxbridge's panes; ${req.layout} is applied as the split direction of new panes`;
  log.debug(`zellij layout: ${detail}`);
  return Promise.resolve({ applied: false, detail });
}
