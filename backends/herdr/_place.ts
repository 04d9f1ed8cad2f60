/**
 * Private to the herdr backend: where a new pane goes. The first splits the pane muxbridge runs
 * in (the anchor), later ones stack beside the newest pane still open, in the directions of the
 * configured layout; herdr has no layout command for a subset of panes, so the layout itself is
 * an honest no-op.
 *
 * @module
 */

import type { LayoutRequest, LayoutResult } from "../../lib/backend/backend.ts";
import type { Layer } from "../../lib/backend/identity.ts";
import type { LayoutName } from "../../lib/config/config.ts";
import type { Logger } from "../../lib/sys/log.ts";
import type { PaneId } from "../../lib/sys/validate.ts";
import type { HerdrPane } from "./_ops.ts";
import { herdrPaneId } from "./_parse.ts";
import type { HerdrConfig } from "./_traits.ts";

/** The split directions of a layout: from the anchor, then from the newest owned pane. */
const DIRECTIONS: Record<LayoutName, readonly ["right" | "down", "right" | "down"]> = {
  "main-vertical": ["right", "down"],
  "main-horizontal": ["down", "right"],
  "even-horizontal": ["right", "right"],
  "even-vertical": ["down", "down"],
  tiled: ["right", "down"],
};

/**
 * The caller's pane, when muxbridge talks to the herdr server it runs in: a pane id of another
 * server would name an unrelated pane.
 *
 * @param config The `herdr` section (`session`, `socket_path`).
 * @param layer The herdr layer muxbridge runs in, if any.
 * @returns The anchor pane, or undefined.
 * @throws {MuxError} `invalid_argument` when the layer's pane id is not herdr's.
 */
export function anchorPane(
  config: HerdrConfig["herdr"],
  layer: Layer | undefined,
): PaneId | undefined {
  if (!layer?.paneId) return undefined;
  const { session, socket_path } = config;
  if (
    (session !== undefined && session !== layer.session) ||
    (socket_path !== undefined && socket_path !== layer.socket)
  ) {
    return undefined;
  }
  return herdrPaneId(layer.paneId);
}

/** What {@linkcode placePane} reads. */
export interface PlaceContext {
  /** The configured layout. */
  layout: LayoutName;
  /** Panes this backend opened, oldest first; closed ones are dropped from the end. */
  opened: string[];
  /** Every pane of the server. */
  list(signal?: AbortSignal): Promise<HerdrPane[]>;
  /** The anchor pane, if any (see {@linkcode anchorPane}). */
  anchor(): PaneId | undefined;
}

/**
 * Where the next split goes: beside the newest pane still open, else off the anchor (else
 * herdr's choice, no target).
 *
 * @param ctx The layout, the opened panes, the listing and the anchor.
 * @param signal Aborts the listing.
 * @returns The pane to split and the direction.
 */
export async function placePane(
  ctx: PlaceContext,
  signal?: AbortSignal,
): Promise<{ target: string | undefined; direction: "right" | "down" }> {
  const { opened } = ctx;
  const [first, next] = DIRECTIONS[ctx.layout];
  if (opened.length > 0) {
    const live = new Set((await ctx.list(signal)).map((p) => p.pane_id));
    while (opened.length > 0 && !live.has(opened[opened.length - 1])) opened.pop();
    const last = opened.at(-1);
    if (last) return { target: last, direction: next };
  }
  return { target: ctx.anchor(), direction: first };
}

/**
 * The layout step: herdr has no command that rebalances a subset of panes, so nothing is
 * arranged and the layout only picks split directions ({@linkcode placePane}).
 *
 * @param log Where the reason goes (debug).
 * @param req The layout asked for.
 * @returns Not applied, and why.
 */
export function applyHerdrLayout(log: Logger, req: LayoutRequest): Promise<LayoutResult> {
  const detail =
    `herdr has no command that rebalances only muxbridge's panes; ${req.layout} picks the split directions of new panes`;
  log.debug(`herdr layout: ${detail}`);
  return Promise.resolve({ applied: false, detail });
}
