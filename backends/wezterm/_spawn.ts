/**
 * Private to the wezterm backend: opening a pane — checks, the split (`split-pane` with the
 * program by argv, credentials in a private file, the spawn token exported), the user's focus
 * given back when the split took it (§1), and what is cleaned up when the answer is unreadable.
 *
 * @module
 */

import { checkProgramArgv } from "../../lib/backend/_program_argv.ts";
import type { BackendDeps, SpawnedPane, SpawnRequest } from "../../lib/backend/backend.ts";
import { writePaneCredentials } from "../../lib/backend/_pane_credentials.ts";
import { removeCredentialsFile } from "../../lib/sys/credentials_file.ts";
import { MuxError, toMuxError } from "../../lib/sys/errors.ts";
import {
  cleanTitle,
  type PaneId,
  validateDirectory,
  validateTarget,
} from "../../lib/sys/validate.ts";
import { ANCHOR_HINT, programArgv, splitArgs, type WeztermCommand } from "./_command.ts";
import type { WeztermPanes, WeztermState } from "./_panes.ts";
import { parseFocused, parseSplit, type WeztermPane } from "./_parse.ts";
import { splitPlan } from "./_place.ts";
import type { WeztermConfig } from "./_traits.ts";

/** What opening a pane uses of the backend. */
export interface SpawnContext {
  /** The backend's deps (log, config `layout`, `main_pane_size`). */
  deps: BackendDeps<WeztermConfig>;
  /** The command runner. */
  wezterm: WeztermCommand;
  /** The backend's reads. */
  panes: WeztermPanes;
  /** The panes it opened; the new one is added. */
  state: WeztermState;
  /** Whether the spawn token is in use. */
  spawnToken: boolean;
}

/**
 * `spawn`: splits a pane off the anchor (or off the largest pane muxbridge opened in its tab)
 * and starts the program in it.
 *
 * @param ctx The backend.
 * @param req What to open.
 * @returns The new pane, with its program's pid when the spawn token finds it.
 * @throws {MuxError} `invalid_argument`, `no_backend` (no anchor), `pane_not_found` (the anchor
 *   is gone), `auth_unsupported` (credentials next to a remote pane), `unparseable_output`, or
 *   the split's error.
 */
export async function spawnPane(ctx: SpawnContext, req: SpawnRequest): Promise<SpawnedPane> {
  const { deps, wezterm, panes, state } = ctx;
  validateTarget("owner", req.owner);
  const cwd = validateDirectory(req.cwd);
  cleanTitle(req.title); // no title to set (see backend.ts's module comment), but a title is checked
  checkProgramArgv(req.argv);
  const anchor = panes.anchorId();
  const before = await panes.list(req.signal);
  const anchorPane = before.find((p) => p.paneId === anchor);
  if (!anchorPane) {
    throw new MuxError("pane_not_found", `Cannot find WezTerm pane ${anchor} to split`, {
      hint: ANCHOR_HINT,
    });
  }
  const withCredentials = Object.keys(req.env).length > 0;
  if (withCredentials && anchorPane.ttyName === null) {
    throw new MuxError(
      "auth_unsupported",
      `Cannot pass credentials to a pane next to WezTerm pane ${anchor}: it belongs to a remote domain (no tty here), where muxbridge's private credentials file does not exist`,
      {
        hint:
          "Run OpenCode in a local WezTerm pane (a pane of a remote domain cannot read a file on this machine)",
      },
    );
  }
  const tabPanes = before.filter((p) => p.tabId === anchorPane.tabId);
  const restoreTo = await userFocus(ctx, tabPanes, req.signal);
  const where = splitPlan(
    before,
    anchorPane,
    state.opened,
    deps.config.layout,
    deps.config.main_pane_size,
  );
  const credentials = writePaneCredentials(deps, req.env);
  const token = ctx.spawnToken ? req.token : undefined;
  let stdout: string;
  try {
    stdout = await wezterm.must(
      `open a pane next to pane ${where.target}`,
      splitArgs({ ...where, cwd, program: programArgv(req.argv, { credentials, token }) }),
      req.signal,
    );
  } catch (err) {
    if (credentials) removeCredentialsFile(credentials);
    throw err;
  }
  let paneId: PaneId;
  try {
    paneId = parseSplit(stdout);
  } catch (err) {
    if (credentials) removeCredentialsFile(credentials);
    // wezterm exited 0: the split was made. With a token, the lost-spawn sweep finds it.
    if (!token) await closeLeftover(ctx, before, anchorPane.tabId);
    throw err;
  }
  state.opened.add(paneId);
  if (credentials) state.credentialFiles.set(paneId, credentials);
  if (restoreTo !== null) {
    // split-pane made the new pane the tab's active one (§1); the user was typing in restoreTo.
    await wezterm.must(`give focus back to pane ${restoreTo}`, [
      "activate-pane",
      "--pane-id",
      restoreTo,
    ], req.signal)
      .catch((err) => deps.log.warn(`wezterm: ${toMuxError(err).message}`));
  }
  const pid = panes.programs().find((p) => p.paneId === paneId)?.pid;
  return pid === undefined ? { paneId } : { paneId, pid };
}

/**
 * Closes what a split made when its answer is unreadable and no token can find it: the one
 * pane of the anchor's tab that was not there before. Several (the user split meanwhile) are
 * never guessed at. Never throws: a failure is logged.
 */
async function closeLeftover(
  ctx: SpawnContext,
  before: WeztermPane[],
  tabId: number,
): Promise<void> {
  const { deps, wezterm } = ctx;
  try {
    const was = new Set(before.map((p) => p.paneId));
    const fresh = (await ctx.panes.list()).filter((p) => p.tabId === tabId && !was.has(p.paneId));
    if (fresh.length === 1) {
      deps.log.warn(
        `wezterm: closing pane ${fresh[0].paneId}, made by a split whose answer was unreadable`,
      );
      await wezterm.must(`close pane ${fresh[0].paneId}`, [
        "kill-pane",
        "--pane-id",
        fresh[0].paneId,
      ]);
    } else if (fresh.length > 1) {
      deps.log.error(
        `wezterm: a split whose answer was unreadable left one of panes ${
          fresh.map((p) => p.paneId).join(", ")
        }; not closing any (cannot tell which), close it by hand`,
      );
    }
  } catch (err) {
    deps.log.error(`wezterm: cannot close what a split left: ${toMuxError(err).message}`);
  }
}

/** The pane the user types into, when it is in the anchor's tab (null: leave focus alone). */
async function userFocus(
  ctx: SpawnContext,
  tabPanes: WeztermPane[],
  signal?: AbortSignal,
): Promise<string | null> {
  try {
    const focused = parseFocused(
      await ctx.wezterm.must(
        "list wezterm clients",
        ["list-clients", "--format", "json"],
        signal,
      ),
    );
    return focused.find((id) => tabPanes.some((p) => p.paneId === id)) ?? null;
  } catch (err) {
    ctx.deps.log.debug(
      `wezterm: cannot tell where the user's focus is: ${toMuxError(err).message}`,
    );
    return null;
  }
}
