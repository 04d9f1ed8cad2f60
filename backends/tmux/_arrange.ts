/**
 * Private to the tmux backend: applying a layout, the I/O around the plan `_layout.ts` makes.
 * Each window is arranged in the same call only while its layout is still the one the plan was
 * made on; a call that ran on a stale listing plans again on the listing it ends with.
 *
 * @module
 */

import type { LayoutRequest, LayoutResult } from "../../lib/backend/backend.ts";
import { MuxError } from "../../lib/sys/errors.ts";
import type { Anchor } from "./_anchor.ts";
import { commandLine, type TmuxCommand, tmuxError } from "./_command.ts";
import { planLayout } from "./_layout.ts";
import { layoutGuard, parseOpenOutput, sessionListing } from "./_open.ts";
import { isMarked } from "./_place.ts";
import { OPEN_ATTEMPTS } from "./_spawn.ts";

/** What a guarded layout step prints when its window changed since the listing. */
const STALE = "muxbridge-stale";

/**
 * Arranges the anchor's window and muxbridge's overflow windows (never reshaping a user's pane,
 * see `planLayout`).
 *
 * @param ctx The backend's command runner and anchor.
 * @param req The layout, the main pane's size, and the panes the caller owns.
 * @param signal Aborts the calls.
 * @returns Whether anything was applied, and what was decided.
 * @throws {MuxError} `invalid_argument` for a main pane size outside 1-99, `pane_not_found`
 *   (the anchor), `command_failed` when the session kept changing, or what tmux answered.
 */
export async function arrangePanes(
  ctx: { tmux: TmuxCommand; anchor: Anchor },
  req: LayoutRequest,
  signal?: AbortSignal,
): Promise<LayoutResult> {
  const { tmux, anchor } = ctx;
  if (!Number.isInteger(req.mainPaneSize) || req.mainPaneSize < 1 || req.mainPaneSize > 99) {
    throw new MuxError("invalid_argument", `Cannot use main pane size ${req.mainPaneSize}`, {
      hint: "The main pane size is a percentage from 1 to 99",
    });
  }
  const at = await anchor.resolve(signal);
  let current = anchor.cached(at);
  let now = false; // `current` was listed by this call, not kept from an earlier one
  for (let attempt = 0; attempt < OPEN_ATTEMPTS; attempt++) {
    if (!current) {
      current = await anchor.list(signal);
      now = true;
    }
    const { rows } = current;
    const owned = new Set<string>([...req.panes, ...rows.filter(isMarked).map((r) => r.paneId)]);
    owned.delete(at);
    const plan = planLayout({
      rows,
      anchor: at,
      owned,
      layout: req.layout,
      mainPaneSize: req.mainPaneSize,
    });
    const detail = plan.detail.join("; ");
    if (plan.commands.length === 0) {
      // "Nothing to do" cannot be checked by a guard: decide it on a listing of now.
      if (!now) {
        current = undefined;
        continue;
      }
      return { applied: false, detail };
    }
    // Each window is arranged only while its layout is the one the plan was made on.
    const guarded = plan.steps.map((step) => [
      "if-shell",
      "-F",
      "-t",
      step.window,
      layoutGuard(rows.find((r) => r.windowId === step.window)!),
      commandLine(step.commands),
      commandLine([["display-message", "-p", STALE]]),
    ]);
    const result = await tmux.run([...guarded, sessionListing(at)], signal);
    const out = parseOpenOutput(result.stdout.replaceAll(`${STALE}\n`, ""));
    current = anchor.absorb(at, out.listing);
    now = current !== undefined;
    if (result.code !== 0) throw tmuxError(`arrange the panes next to "${at}"`, result);
    if (!result.stdout.includes(STALE)) return { applied: true, detail };
  }
  throw new MuxError(
    "command_failed",
    `Cannot arrange the panes: the tmux session changed under ${OPEN_ATTEMPTS} attempts in a row`,
    { hint: "Run `muxbridge layout` again once the panes settle" },
  );
}
