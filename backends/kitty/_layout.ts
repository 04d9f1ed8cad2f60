/**
 * Private to the kitty backend: layouts (`goto-layout`), applied to the anchor's tab only when
 * it holds nothing but the anchor and muxbridge's windows.
 *
 * @module
 */

import type { BackendDeps, LayoutRequest, LayoutResult } from "../../lib/backend/backend.ts";
import type { LayoutName } from "../../lib/config/config.ts";
import { anchorWindow } from "./_anchor.ts";
import type { KittyCommand } from "./_command.ts";
import { findWindow } from "./_parse.ts";
import type { KittyConfig } from "./_traits.ts";
import { listWindows, marksOf } from "./_windows.ts";

/**
 * tmux layout names → kitty layouts (§5). kitty layouts rearrange a whole tab and
 * have no main-pane-size setting of their own (the size is the layout's `bias` option in
 * `enabled_layouts`).
 */
export const KITTY_LAYOUTS: Readonly<Record<LayoutName, string>> = {
  "main-vertical": "tall",
  "main-horizontal": "fat",
  tiled: "grid",
  "even-horizontal": "horizontal",
  "even-vertical": "vertical",
};

/**
 * Applies a layout to the anchor's tab, or says why not.
 *
 * @param ctx The backend's deps (config, identity) and command runner.
 * @param req The layout, its main pane size, and the panes muxbridge owns.
 * @param signal Aborts the calls.
 * @returns Whether it was applied, and what was done or why not.
 * @throws {MuxError} What kitty answered.
 */
export async function arrangeTab(
  ctx: { deps: BackendDeps<KittyConfig>; kitty: KittyCommand },
  req: LayoutRequest,
  signal?: AbortSignal,
): Promise<LayoutResult> {
  const name = KITTY_LAYOUTS[req.layout];
  const anchorId = anchorWindow(ctx.deps);
  if (anchorId === undefined) {
    return {
      applied: false,
      detail: "no anchor window (set kitty.window_id): layout left as it is",
    };
  }
  const found = findWindow(await listWindows(ctx.kitty, signal), anchorId);
  if (!found) return { applied: false, detail: `anchor window ${anchorId} not found` };
  const { tab } = found;
  const owned = new Set(req.panes);
  for (const w of tab.windows) if (marksOf(w).sessionId !== undefined) owned.add(w.id);
  const others = tab.windows.filter((w) => w.id !== anchorId);
  const foreign = others.filter((w) => !owned.has(w.id));
  const isMain = req.layout === "main-vertical" || req.layout === "main-horizontal";
  // goto-layout rearranges every window of the tab, so it only runs when the tab holds the
  // anchor and muxbridge's windows alone.
  let why: string | undefined;
  if (others.length === foreign.length) why = `no owned windows in tab ${tab.id}`;
  else if (foreign.length > 0) {
    why = `user windows in tab ${tab.id} (${foreign.map((w) => w.id).join(" ")})`;
  } else if (isMain && tab.windows[0]?.id !== anchorId) {
    why = `anchor window ${anchorId} is not the first window of tab ${tab.id}`;
  } else if (tab.enabledLayouts.length > 0 && !tab.enabledLayouts.includes(name)) {
    why = `layout ${name} is not in enabled_layouts (${tab.enabledLayouts.join(",")})`;
  } else if (tab.layout === name) why = `tab ${tab.id} already uses ${name}`;
  if (why) return { applied: false, detail: `${why}: ${name} not applied` };
  await ctx.kitty.must(
    `set layout ${name} in tab ${tab.id}`,
    ["goto-layout", `--match=window_id:${anchorId}`, name],
    signal,
  );
  const size = isMain
    ? `; main pane size ${req.mainPaneSize}% not set (kitty takes it from enabled_layouts ${name}:bias=${req.mainPaneSize})`
    : "";
  return { applied: true, detail: `${name} on tab ${tab.id}${size}` };
}
