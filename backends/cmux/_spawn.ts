/**
 * Private to the cmux backend: opening a surface right of the caller's, its program typed into
 * the new terminal's shell, and closing what a split made when cmux's answer cannot be used.
 *
 * @module
 */

import type { BackendDeps, SpawnedPane, SpawnRequest } from "../../lib/backend/backend.ts";
import { MuxError, toMuxError } from "../../lib/sys/errors.ts";
import { cleanTitle, validateDirectory, validateTarget } from "../../lib/sys/validate.ts";
import { closeSurface } from "./_close.ts";
import type { CmuxCommand } from "./_command.ts";
import { type CmuxWorkspace, parseSplit, sameId, surfaceId } from "./_parse.ts";
import type { CmuxProgram } from "./_program.ts";
import { IDENTITY_HINT, locate, type Surfaces } from "./_surfaces.ts";
import { titleSurface } from "./_title.ts";
import type { CmuxConfig } from "./_traits.ts";
import { typedCommand } from "./_typed.ts";

/** What opening a surface works with. */
export interface SpawnContext {
  /** The backend's deps (log). */
  deps: BackendDeps<CmuxConfig>;
  /** The backend's command runner. */
  cmux: CmuxCommand;
  /** The backend's surfaces view. */
  surfaces: Surfaces;
  /** The version gate, with `new-split`'s optional flags. */
  program(signal?: AbortSignal): Promise<CmuxProgram>;
}

/**
 * Opens a surface right of the one muxbridge runs in, without focus, and starts the program in
 * it (`new-split --command`, else `respawn-pane --command` after the split).
 *
 * @param ctx What it works with.
 * @param req The pane to open.
 * @returns The new surface's UUID.
 * @throws {MuxError} `auth_unsupported` for any credentials, `pane_not_found` when the caller's
 *   surface is not listed, `unsupported` for a split cmux names no surface for, the gate's and
 *   identity's errors, or what cmux answered.
 */
export async function spawnSurface(ctx: SpawnContext, req: SpawnRequest): Promise<SpawnedPane> {
  const { deps, cmux } = ctx;
  validateTarget("owner", req.owner);
  const cwd = validateDirectory(req.cwd);
  const title = cleanTitle(req.title);
  const text = typedCommand(cwd, req.argv);
  if (Object.keys(req.env).length > 0) {
    // Refused, not dropped: a pane without its credentials would fail to attach (contract).
    throw new MuxError(
      "auth_unsupported",
      "Cannot pass credentials to a cmux surface: cmux has no per-surface environment",
      {
        hint:
          "Use a backend with an environment flag (tmux, kitty, herdr) for a password-protected server",
      },
    );
  }
  const { features } = await ctx.program(req.signal);
  const { workspace, caller } = ctx.surfaces.context();
  const before = await ctx.surfaces.tree(req.signal);
  if (!locate(before, caller)) {
    throw new MuxError(
      "pane_not_found",
      `Cannot find the surface muxbridge runs in (${caller})`,
      {
        hint: IDENTITY_HINT,
      },
    );
  }
  // cmux's own option parser might read a value starting with "-" as an option.
  const titleOk = title !== "" && !title.startsWith("-");
  if (title !== "" && !titleOk) deps.log.warn(`cmux: title ${JSON.stringify(title)} not set`);
  const args = [
    "new-split",
    "right",
    "--workspace",
    workspace,
    "--surface",
    caller,
    "--focus",
    "false",
  ];
  if (features.cwd) args.push("--cwd", cwd);
  if (features.title && titleOk) args.push("--title", title);
  if (features.command) args.push("--command", text);
  const stdout = await cmux.must(`open a surface next to ${caller}`, args, true, req.signal);
  let split;
  try {
    split = parseSplit(stdout);
  } catch (err) {
    // cmux exited 0: the split was made, its answer is unreadable. Leave nothing behind.
    await closeLeftover(ctx, workspace, before, "was unreadable");
    throw err;
  }
  if (split.surfaceId === null) {
    await closeLeftover(ctx, workspace, before, "named no surface");
    throw new MuxError(
      "unsupported",
      "Cannot use the split cmux made: its answer names no surface (surface_id null, as in a remote tmux workspace)",
      { hint: "Run OpenCode in a local cmux workspace" },
    );
  }
  const surface = split.surfaceId;
  if (!features.command) {
    // Builds without new-split --command: start it in the new, empty terminal.
    try {
      await cmux.must(
        `start the program in surface ${surface}`,
        ["respawn-pane", "--workspace", workspace, "--surface", surface, "--command", text],
        false,
        req.signal,
      );
    } catch (err) {
      await closeSurface(ctx, surface).catch((e) =>
        deps.log.error(`cmux: cannot close empty surface ${surface}: ${toMuxError(e).message}`)
      );
      throw err;
    }
  }
  if (!(features.title) && titleOk) {
    await titleSurface(ctx, surface, title, req.signal).catch((err) =>
      deps.log.warn(`cmux: cannot title surface ${surface}: ${toMuxError(err).message}`)
    );
  }
  return { paneId: surface };
}

/**
 * Closes what a split made when its answer cannot be used: the one surface of the workspace,
 * in a pane of its own, that was not there before. More than one such surface (the user split
 * at the same moment) is never guessed at: logged for the user to close by hand.
 */
async function closeLeftover(
  ctx: SpawnContext,
  workspace: string,
  before: CmuxWorkspace[],
  why: string,
): Promise<void> {
  const { deps } = ctx;
  try {
    const was = before.find((w) => sameId(w.id, workspace))?.surfaces ?? [];
    const now = (await ctx.surfaces.tree()).find((w) => sameId(w.id, workspace))?.surfaces ?? [];
    const fresh = now.filter((s) =>
      !was.some((b) => sameId(b.id, s.id) || sameId(b.paneId, s.paneId))
    );
    if (fresh.length === 1) {
      deps.log.warn(`cmux: closing surface ${fresh[0].id}, made by a split whose answer ${why}`);
      await closeSurface(ctx, surfaceId(fresh[0].id));
    } else if (fresh.length > 1) {
      deps.log.error(
        `cmux: a split whose answer ${why} left one of ${
          fresh.map((s) => s.id).join(", ")
        }; not closing any (cannot tell which), close it by hand`,
      );
    }
  } catch (err) {
    deps.log.error(`cmux: cannot close what a split left: ${toMuxError(err).message}`);
  }
}
