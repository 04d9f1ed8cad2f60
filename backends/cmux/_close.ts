/**
 * Private to the cmux backend: interrupting a surface and closing it, verified. cmux has closed a
 * different live surface for a ref it could not resolve (issue #9410, docs/backends/cmux.md §5),
 * so both only ever name a surface listed right now, never the caller's, and a close is checked
 * against a listing taken afterwards.
 *
 * @module
 */

import type { PaneCredentials } from "../../lib/backend/_pane_credentials.ts";
import type { BackendDeps } from "../../lib/backend/backend.ts";
import { MuxError } from "../../lib/sys/errors.ts";
import type { PaneId } from "../../lib/sys/validate.ts";
import { type CmuxCommand, cmuxError } from "./_command.ts";
import { type CmuxSurface, parseReceipt, sameId, surfaceId } from "./_parse.ts";
import { locate, type Surfaces } from "./_surfaces.ts";
import type { CmuxConfig } from "./_traits.ts";

/**
 * Sends Ctrl+C to a listed surface.
 *
 * @param ctx The backend's command runner and surfaces view.
 * @param paneId The surface's UUID.
 * @param signal Aborts the calls.
 * @throws {MuxError} `not_owned` for muxbridge's own surface, `pane_not_found` when the surface
 *   is not listed, or what cmux answered.
 */
export async function interruptSurface(
  ctx: { cmux: CmuxCommand; surfaces: Surfaces },
  paneId: PaneId,
  signal?: AbortSignal,
): Promise<void> {
  const id = surfaceId(paneId);
  ctx.surfaces.refuseCaller(id, "interrupt");
  // Builds before PR #2150 sent keys for an unresolvable surface to the focused one
  // (docs/backends/cmux.md §5): only ever name a surface that is listed right now.
  const found = locate(await ctx.surfaces.tree(signal), id);
  if (!found) throw new MuxError("pane_not_found", `Cannot interrupt surface ${id}: it is gone`);
  await ctx.cmux.must(
    `interrupt surface ${id}`,
    ["send-key", "--workspace", found.workspace.id, "--surface", id, "ctrl+c"],
    false,
    signal,
  );
}

/**
 * Closes a listed surface, then lists its workspace again: another surface vanishing, or a
 * receipt naming another surface, fails the close loudly (logged as an error too).
 *
 * @param ctx The backend's deps (log), command runner, surfaces view and the credentials files
 *   of its surfaces (the surface's goes first).
 * @param paneId The surface's UUID.
 * @param signal Aborts the calls.
 * @throws {MuxError} `not_owned` for muxbridge's own surface, `pane_not_found` when the surface
 *   is not listed, `close_unverified`, or what cmux answered.
 */
export async function closeSurface(
  ctx: {
    deps: BackendDeps<CmuxConfig>;
    cmux: CmuxCommand;
    surfaces: Surfaces;
    credentials: PaneCredentials;
  },
  paneId: PaneId,
  signal?: AbortSignal,
): Promise<void> {
  const { deps, cmux, surfaces } = ctx;
  const id = surfaceId(paneId);
  surfaces.refuseCaller(id, "close");
  // A surface whose shell never ran the typed line leaves its credentials file: it goes first.
  ctx.credentials.forget(id.toLowerCase());
  const before = locate(await surfaces.tree(signal), id);
  if (!before) throw new MuxError("pane_not_found", `Cannot close surface ${id}: it is gone`);
  const ws = before.workspace;
  const run = await cmux.run(
    ["close-surface", "--workspace", ws.id, "--surface", id],
    false,
    signal,
  );
  if (run.code !== 0) throw cmuxError(`close surface ${id}`, run);
  const receipt = parseReceipt(run.stdout);
  const after = (await surfaces.tree(signal)).find((w) => sameId(w.id, ws.id))?.surfaces ?? [];
  const remains = (s: CmuxSurface) => after.some((a) => sameId(a.id, s.id));
  const vanished = ws.surfaces.filter((s) => !sameId(s.id, id) && !remains(s));
  const named = receipt.uuids[0];
  const wrongReceipt = named !== undefined && !sameId(named, id);
  if (vanished.length > 0 || wrongReceipt) {
    const others = vanished.map((s) => `${s.id}${s.title ? ` ("${s.title}")` : ""}`);
    const message = `Cannot verify the close of surface ${id}: ${
      wrongReceipt ? `cmux reported closing ${named}` : "cmux reported closing it"
    }${
      others.length > 0 ? ` and surface(s) ${others.join(", ")} vanished from the workspace` : ""
    }`;
    deps.log.error(`cmux: ${message}`);
    throw new MuxError("close_unverified", message, {
      argv: run.argv,
      hint:
        "cmux closed a surface muxbridge did not ask for (cmux issue #9410); check your panes and update cmux",
    });
  }
  const appeared = after.filter((a) => !ws.surfaces.some((s) => sameId(s.id, a.id)));
  if (appeared.length > 0) {
    // 0.64.22 was reported to create an empty replacement panel on close (issue #12524).
    deps.log.warn(
      `cmux: closing surface ${id} made new surface(s) ${appeared.map((s) => s.id).join(", ")}`,
    );
  }
}
