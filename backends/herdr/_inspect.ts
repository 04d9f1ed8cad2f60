/**
 * Private to the herdr backend: reading panes back — one pane (`pane get`), a pane's shell pid
 * (`pane process-info`), and the panes whose process environment holds a spawn token.
 *
 * @module
 */

import type { Capabilities, PaneInfo } from "../../lib/backend/backend.ts";
import { SPAWN_TOKEN_VAR } from "../../lib/backend/spawn_token.ts";
import type { Logger } from "../../lib/sys/log.ts";
import type { PaneId } from "../../lib/sys/validate.ts";
import type { HerdrApi } from "./_api.ts";
import { herdrPaneId } from "./_parse.ts";

/**
 * Reads one pane.
 *
 * @param api herdr's operations.
 * @param paneId The pane.
 * @param signal Aborts the call.
 * @returns The pane (never dead: herdr closes a pane whose shell exited), or null when herdr
 *   does not know it.
 * @throws {MuxError} `invalid_argument` for a pane id that is not herdr's; what herdr answered.
 */
export async function inspectPane(
  api: HerdrApi,
  paneId: PaneId,
  signal?: AbortSignal,
): Promise<PaneInfo | null> {
  const id = herdrPaneId(paneId);
  const pane = await api.get(id, signal);
  if (pane === null) return null;
  // herdr closes a pane whose shell exited (the program is exec'd into it): no dead panes.
  const info: PaneInfo = { paneId: herdrPaneId(pane.pane_id), dead: false };
  if (pane.label !== undefined) info.title = pane.label;
  return info;
}

/**
 * The pane's process id (its shell, which `exec`s into the program): best effort.
 *
 * @param api herdr's operations.
 * @param log Where a failure goes (debug).
 * @param paneId The pane.
 * @param signal Aborts the call.
 * @returns The pid, or undefined when herdr does not tell or the call failed.
 */
export async function paneShellPid(
  api: HerdrApi,
  log: Logger,
  paneId: string,
  signal?: AbortSignal,
): Promise<number | undefined> {
  try {
    return await api.shellPid(paneId, signal);
  } catch (err) {
    log.debug(`herdr: no pid for pane ${paneId}: ${(err as Error).message}`);
    return undefined;
  }
}

/** What {@linkcode findSpawnedPanes} uses of the backend. */
export interface FindContext {
  /** herdr's operations. */
  api: HerdrApi;
  /** Where a missing pid goes (debug). */
  log: Logger;
  /** Reads a process's environment (undefined when it cannot). */
  environ(pid: number): Readonly<Record<string, string>> | undefined;
  /** The backend's capabilities: nothing is searched without `spawnToken`. */
  capabilities: Capabilities;
}

/**
 * Panes whose process environment holds the token: every pane's shell pid (`pane
 * process-info`), its environment read from the system. A pane whose pid herdr does not tell,
 * or whose environment cannot be read, is not matched (never closed on a guess).
 *
 * @param ctx herdr's operations, the log, the environment reader, the capabilities.
 * @param token The spawn token.
 * @param signal Aborts the calls.
 * @returns The matching panes, with their pids.
 * @throws {MuxError} What herdr answered to the listing.
 */
export async function findSpawnedPanes(
  ctx: FindContext,
  token: string,
  signal?: AbortSignal,
): Promise<PaneInfo[]> {
  if (!ctx.capabilities.spawnToken) return [];
  const found: PaneInfo[] = [];
  for (const pane of await ctx.api.list(signal)) {
    const pid = await paneShellPid(ctx.api, ctx.log, pane.pane_id, signal);
    if (pid !== undefined && ctx.environ(pid)?.[SPAWN_TOKEN_VAR] === token) {
      found.push({ paneId: herdrPaneId(pane.pane_id), dead: false, pid });
    }
  }
  return found;
}
