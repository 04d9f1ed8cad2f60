/**
 * Private to the cmux backend: the workspace and surface muxbridge runs in (its cmux identity,
 * all three of socket, workspace and surface), cmux's tree of surfaces, and finding one in it.
 *
 * @module
 */

import type { BackendDeps, PaneInfo } from "../../lib/backend/backend.ts";
import { MuxError } from "../../lib/sys/errors.ts";
import { type PaneId, validateTarget } from "../../lib/sys/validate.ts";
import type { CmuxCommand } from "./_command.ts";
import {
  type CmuxSurface,
  type CmuxWorkspace,
  parseTree,
  sameId,
  surfaceId,
  UUID,
} from "./_parse.ts";
import { CMUX_MIN_VERSION, type CmuxConfig } from "./_traits.ts";

/** What to do when muxbridge's cmux identity is missing or wrong. */
export const IDENTITY_HINT =
  "Run muxbridge inside a cmux terminal: CMUX_SOCKET_PATH, CMUX_WORKSPACE_ID and CMUX_SURFACE_ID must all be set";

/** Where a surface is. */
export interface Located {
  /** The workspace holding it. */
  workspace: CmuxWorkspace;
  /** The surface. */
  surface: CmuxSurface;
}

/**
 * Finds a surface in cmux's tree.
 *
 * @param tree Every workspace, as {@linkcode Surfaces.tree} lists them.
 * @param id The surface's UUID (compared case-insensitively).
 * @returns Where it is, or undefined when it is not listed.
 */
export function locate(tree: readonly CmuxWorkspace[], id: string): Located | undefined {
  for (const workspace of tree) {
    const surface = workspace.surfaces.find((s) => sameId(s.id, id));
    if (surface) return { workspace, surface };
  }
  return undefined;
}

/** The surface muxbridge runs in, and cmux's tree as it is now. */
export interface Surfaces {
  /**
   * The workspace and the caller's surface, from the complete cmux identity only.
   *
   * @throws {MuxError} `no_backend` when the identity is incomplete, names another cmux than
   *   `cmux.socket_path`, or holds no UUIDs; `invalid_argument` for an unsafe value.
   */
  context(): { workspace: string; caller: string };
  /** Lists every workspace with its surfaces (`tree --all`). */
  tree(signal?: AbortSignal): Promise<CmuxWorkspace[]>;
  /**
   * Refuses the surface muxbridge itself runs in (close-surface defaults to it, too).
   *
   * @throws {MuxError} `not_owned` when `id` is that surface.
   */
  refuseCaller(id: string, action: string): void;
}

/**
 * Creates the surfaces view of a cmux backend.
 *
 * @param deps The backend's deps (config `cmux.socket_path`, identity).
 * @param cmux The backend's command runner.
 * @returns The view.
 */
export function createSurfaces(deps: BackendDeps<CmuxConfig>, cmux: CmuxCommand): Surfaces {
  const layer = deps.identity.layers.find((l) => l.backend === "cmux");

  const context = (): { workspace: string; caller: string } => {
    const socket = deps.config.cmux.socket_path;
    if (!layer?.workspaceId || !layer.paneId || !layer.socket) {
      throw new MuxError("no_backend", "Cannot place panes: not inside a cmux terminal", {
        hint: IDENTITY_HINT,
      });
    }
    if (socket !== undefined && socket !== layer.socket) {
      // The workspace and surface ids name objects of the cmux on CMUX_SOCKET_PATH.
      throw new MuxError(
        "no_backend",
        `Cannot place panes: cmux.socket_path "${socket}" is not the cmux muxbridge runs in`,
        { hint: "Remove cmux.socket_path or run muxbridge inside that cmux" },
      );
    }
    for (
      const [name, value] of [["CMUX_WORKSPACE_ID", layer.workspaceId], [
        "CMUX_SURFACE_ID",
        layer.paneId,
      ]]
    ) {
      validateTarget(name, value);
      if (!UUID.test(value)) {
        throw new MuxError(
          "no_backend",
          `Cannot use ${name} ${JSON.stringify(value)}: not a UUID`,
          {
            hint: `cmux >= ${CMUX_MIN_VERSION} sets UUIDs; update cmux`,
          },
        );
      }
    }
    return { workspace: layer.workspaceId, caller: layer.paneId };
  };

  const tree = async (signal?: AbortSignal) =>
    parseTree(await cmux.must("list cmux surfaces", ["tree", "--all"], true, signal));

  const refuseCaller = (id: string, action: string) => {
    if (layer?.paneId && sameId(id, layer.paneId)) {
      throw new MuxError(
        "not_owned",
        `Cannot ${action} surface ${id}: it is the one muxbridge runs in`,
        { hint: "muxbridge never closes or interrupts its own surface" },
      );
    }
  };

  return { context, tree, refuseCaller };
}

/**
 * Inspects a surface: listed or not, and its title.
 *
 * @param surfaces The backend's surfaces view.
 * @param paneId The surface's UUID.
 * @param signal Aborts the listing.
 * @returns What cmux lists of it, or null when it is gone.
 */
export async function inspectSurface(
  surfaces: Surfaces,
  paneId: PaneId,
  signal?: AbortSignal,
): Promise<PaneInfo | null> {
  const id = surfaceId(paneId);
  const found = locate(await surfaces.tree(signal), id);
  if (!found) return null;
  // A cmux terminal closes when its program (exec'd by the typed line) ends, so a listed
  // surface is never dead. cmux reports no pid.
  const info: PaneInfo = { paneId: id, dead: false };
  if (found.surface.title !== undefined) info.title = found.surface.title;
  return info;
}
