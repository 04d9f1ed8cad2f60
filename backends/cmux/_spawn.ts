/**
 * Private to the cmux backend: opening a surface right of the caller's, its program typed into
 * the new terminal's shell (credentials through a private file, never typed), and closing what a
 * split made when cmux's answer cannot be used.
 *
 * @module
 */

import type { BackendDeps, SpawnedPane, SpawnRequest } from "../../lib/backend/backend.ts";
import type { PaneCredentials } from "../../lib/backend/_pane_credentials.ts";
import {
  credentialsArgv,
  type CredentialsFile,
  removeCredentialsFile,
} from "../../lib/sys/credentials_file.ts";
import { MuxError, toMuxError } from "../../lib/sys/errors.ts";
import {
  cleanTitle,
  type PaneId,
  validateDirectory,
  validateTarget,
} from "../../lib/sys/validate.ts";
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
  /** The credentials files of the surfaces it opened, by lower-case UUID. */
  credentials: PaneCredentials;
}

/**
 * Opens a surface right of the one muxbridge runs in, without focus, and starts the program in
 * it (`new-split --command`, else `respawn-pane --command` after the split).
 *
 * cmux has no per-surface environment and starts programs by typing a line into the new
 * terminal's shell, where a secret would land on screen and in the shell's memory. So the
 * variables of `req.env` (the server's credentials) go into a private file, and the typed line
 * runs `/bin/sh` to read and remove it before it `exec`s the program
 * (`lib/sys/credentials_file.ts`): only the file's path is ever typed.
 *
 * @param ctx What it works with.
 * @param req The pane to open.
 * @returns The new surface's UUID.
 * @throws {MuxError} `pane_not_found` when the caller's surface is not listed, `unsupported` for
 *   a split cmux names no surface for, `invalid_config` when the state directory (where the
 *   credentials file goes) is not private, the gate's and identity's errors, or what cmux
 *   answered.
 */
export async function spawnSurface(ctx: SpawnContext, req: SpawnRequest): Promise<SpawnedPane> {
  validateTarget("owner", req.owner);
  const cwd = validateDirectory(req.cwd);
  const title = cleanTitle(req.title);
  typedCommand(cwd, req.argv); // refuses what no typed line can carry, before anything runs
  const { features } = await ctx.program(req.signal);
  const credentials = ctx.credentials.write(req.env);
  try {
    const plan = { argv: req.argv, cwd, title, features, credentials };
    const surface = await split(ctx, plan, req.signal);
    ctx.credentials.keep(surface.toLowerCase(), credentials);
    return { paneId: surface };
  } catch (err) {
    // No surface to hand the file to: a surface that opened anyway was closed (or reported)
    // by the split's own clean-up, and its shell fails to read a file that is gone.
    if (credentials) removeCredentialsFile(credentials);
    throw err;
  }
}

/** What {@linkcode split} opens. */
interface SplitPlan {
  argv: readonly string[];
  cwd: string;
  title: string;
  features: CmuxProgram["features"];
  credentials: CredentialsFile | undefined;
}

/** The split, the program started in it and its title, for {@linkcode spawnSurface}. */
async function split(ctx: SpawnContext, plan: SplitPlan, signal?: AbortSignal): Promise<PaneId> {
  const { deps, cmux } = ctx;
  const { cwd, title, features } = plan;
  const text = typedCommand(cwd, credentialsArgv(plan.argv, plan.credentials));
  const { workspace, caller } = ctx.surfaces.context();
  const before = await ctx.surfaces.tree(signal);
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
  const stdout = await cmux.must(`open a surface next to ${caller}`, args, true, signal);
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
        signal,
      );
    } catch (err) {
      await closeSurface(ctx, surface).catch((e) =>
        deps.log.error(`cmux: cannot close empty surface ${surface}: ${toMuxError(e).message}`)
      );
      throw err;
    }
  }
  if (!(features.title) && titleOk) {
    await titleSurface(ctx, surface, title, signal).catch((err) =>
      deps.log.warn(`cmux: cannot title surface ${surface}: ${toMuxError(err).message}`)
    );
  }
  return surface;
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
