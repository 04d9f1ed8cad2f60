/**
 * Private to the cmux backend: titling a surface (`rename-tab`).
 *
 * @module
 */

import { MuxError } from "../../lib/sys/errors.ts";
import { cleanTitle, type PaneId } from "../../lib/sys/validate.ts";
import type { CmuxCommand } from "./_command.ts";
import { surfaceId } from "./_parse.ts";
import { locate, type Surfaces } from "./_surfaces.ts";

/**
 * Titles a listed surface.
 *
 * @param ctx The backend's command runner and surfaces view.
 * @param paneId The surface's UUID.
 * @param title The title, cleaned here.
 * @param signal Aborts the calls.
 * @throws {MuxError} `invalid_argument` for a title starting with "-", `pane_not_found` when the
 *   surface is not listed, or what cmux answered.
 */
export async function titleSurface(
  ctx: { cmux: CmuxCommand; surfaces: Surfaces },
  paneId: PaneId,
  title: string,
  signal?: AbortSignal,
): Promise<void> {
  const id = surfaceId(paneId);
  const clean = cleanTitle(title);
  if (clean.startsWith("-")) {
    throw new MuxError("invalid_argument", `Cannot set cmux title ${JSON.stringify(clean)}`, {
      hint: "cmux may read a title starting with '-' as an option",
    });
  }
  const found = locate(await ctx.surfaces.tree(signal), id);
  if (!found) throw new MuxError("pane_not_found", `Cannot title surface ${id}: it is gone`);
  await ctx.cmux.must(
    `title surface ${id}`,
    ["rename-tab", "--workspace", found.workspace.id, "--surface", id, "--title", clean],
    false,
    signal,
  );
}
