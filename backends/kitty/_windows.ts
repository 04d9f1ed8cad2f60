/**
 * Private to the kitty backend: listing kitty's windows (`ls`) and reading them as panes — one
 * by id, those carrying ownership marks, those started with a spawn token.
 *
 * @module
 */

import type { Instance, PaneInfo } from "../../lib/backend/backend.ts";
import type { Layer } from "../../lib/backend/identity.ts";
import { fileStamp } from "../../lib/sys/file_stamp.ts";
import { type PaneId, SESSION_ID } from "../../lib/sys/validate.ts";
import type { KittyCommand } from "./_command.ts";
import { MARK_OWNER, MARK_SESSION } from "./_launch.ts";
import {
  findWindow,
  type KittyTab,
  type KittyWindow,
  kittyWindowId,
  parseLs,
  USER_VARS_VERSION,
} from "./_parse.ts";
import type { ProgramState } from "./_program.ts";

/**
 * Lists every tab with its windows.
 *
 * @param kitty The backend's command runner.
 * @param signal Aborts the call.
 * @returns The tabs.
 */
export async function listWindows(kitty: KittyCommand, signal?: AbortSignal): Promise<KittyTab[]> {
  return parseLs(await kitty.must("list kitty windows", ["ls"], signal));
}

/**
 * The ownership mark of a window (kitty >= 0.30 user variables), when valid.
 *
 * @param window A listed window.
 * @returns Its session id and owner, each when marked.
 */
export function marksOf(window: KittyWindow): { sessionId?: string; owner?: string } {
  const sessionId = window.userVars[MARK_SESSION];
  if (sessionId === undefined || !SESSION_ID.test(sessionId)) return {};
  const owner = window.userVars[MARK_OWNER];
  return owner ? { sessionId, owner } : { sessionId };
}

function toInfo(window: KittyWindow): PaneInfo {
  // Without --hold a kitty window closes when its program exits (§2), so a listed
  // window is never dead.
  const info: PaneInfo = { paneId: window.id, dead: false, title: window.title };
  if (window.pid !== undefined) info.pid = window.pid;
  if (window.spawnToken !== undefined) info.token = window.spawnToken;
  return { ...info, ...marksOf(window) };
}

/**
 * Inspects a window.
 *
 * @param kitty The backend's command runner.
 * @param paneId The window id.
 * @param signal Aborts the call.
 * @returns The window as a pane, or null when it is not listed.
 */
export async function inspectWindow(
  kitty: KittyCommand,
  paneId: PaneId,
  signal?: AbortSignal,
): Promise<PaneInfo | null> {
  const id = kittyWindowId(paneId);
  const found = findWindow(await listWindows(kitty, signal), id);
  return found ? toInfo(found.window) : null;
}

/**
 * The windows carrying muxbridge's ownership marks (none before kitty 0.30).
 *
 * @param ctx The backend's command runner and program state.
 * @param signal Aborts the calls.
 * @returns The marked windows.
 */
export async function ownedWindows(
  ctx: { kitty: KittyCommand; program: ProgramState },
  signal?: AbortSignal,
): Promise<PaneInfo[]> {
  await ctx.program.read(signal);
  // kitty < 0.30 has no user variables, so there are no marks to find.
  if (!ctx.program.atLeast(USER_VARS_VERSION)) return [];
  return (await listWindows(ctx.kitty, signal)).flatMap((tab) => tab.windows)
    .filter((w) => marksOf(w).sessionId !== undefined)
    .map(toInfo);
}

/**
 * Windows whose environment holds the token (kitty reads it from the window's process).
 *
 * @param kitty The backend's command runner.
 * @param token The spawn token.
 * @param signal Aborts the call.
 * @returns The windows started with it.
 */
export async function spawnedWindows(
  kitty: KittyCommand,
  token: string,
  signal?: AbortSignal,
): Promise<PaneInfo[]> {
  return (await listWindows(kitty, signal)).flatMap((tab) => tab.windows)
    .filter((w) => w.spawnToken === token)
    .map(toInfo);
}

/**
 * The kitty muxbridge talks to (docs/backends/kitty.md §9): its remote-control address with the
 * socket file kitty binds anew each time it starts (`--listen-on unix:/path`). An abstract socket
 * (`unix:@name`) or a TCP address has no file: then kitty's pid names it, known only to a process
 * running inside that very kitty (`KITTY_PID`, with `KITTY_LISTEN_ON` the same address). `ls`
 * cannot tell: kitty 0.26 lists a window's whole environment only until the first window opened
 * by remote control, then only the variables each window was launched with (seen live).
 *
 * @param kitty The backend's command runner.
 * @param layer The kitty layer muxbridge runs in, if any.
 * @returns The instance, or null when it cannot be told.
 */
export function kittyInstance(kitty: KittyCommand, layer: Layer | undefined): Instance | null {
  const address = kitty.address();
  const path = /^unix:(\/.*)$/.exec(address)?.[1];
  if (path !== undefined) {
    const stamp = fileStamp(path);
    return stamp === undefined ? null : { address, stamp };
  }
  return layer?.pid !== undefined && layer.socket === address ? { address, pid: layer.pid } : null;
}
