/**
 * Private to the zellij backend: what it reads of zellij's panes — every terminal pane of the
 * session (after the version gate), a pane that must exist, the tab of the pane muxbridge runs
 * in — and the `inspect` and `findSpawned` built on them.
 *
 * @module
 */

import type { BackendDeps, PaneInfo } from "../../lib/backend/backend.ts";
import { carriesToken, tokenIn } from "../../lib/backend/spawn_token.ts";
import { MuxError } from "../../lib/sys/errors.ts";
import type { PaneId } from "../../lib/sys/validate.ts";
import type { ZellijCommand } from "./_command.ts";
import { parsePaneList, type ZellijPane, zellijPaneId } from "./_parse.ts";
import type { ZellijConfig } from "./_traits.ts";

/** What to do when the pane muxbridge runs in is not in the session's list. */
export const ANCHOR_HINT =
  "Run muxbridge inside the zellij pane it should open panes next to, or set zellij.session";

/** The backend's reads of zellij. */
export interface ZellijPanes {
  /** `zellij --version`, gated; the first success is kept. */
  version(signal?: AbortSignal): Promise<string>;
  /** Every terminal pane of the session (after the version gate). */
  list(signal?: AbortSignal): Promise<ZellijPane[]>;
  /**
   * The pane, or a `pane_not_found` error. zellij's `write`, `close-pane` and `rename-pane` exit
   * 0 and do nothing for an unknown id (§5), so existence is checked by listing.
   *
   * @throws {MuxError} `pane_not_found`, or what zellij answered.
   */
  require(id: string, action: string, signal?: AbortSignal): Promise<ZellijPane>;
  /**
   * The tab to open panes in: the caller's pane's tab, never a guess (OMOS PR #774); undefined
   * when muxbridge does not run in a pane of the session.
   *
   * @throws {MuxError} `pane_not_found` when the caller's pane is not in `panes`.
   */
  anchorTab(panes: ZellijPane[]): number | undefined;
}

/**
 * Creates the reads of one backend.
 *
 * @param deps The backend's deps (config `zellij.session`, identity).
 * @param zellij The backend's command runner.
 * @param version The backend's gated version step.
 * @returns The reads.
 */
export function createZellijPanes(
  deps: BackendDeps<ZellijConfig>,
  zellij: ZellijCommand,
  version: (signal?: AbortSignal) => Promise<string>,
): ZellijPanes {
  const layer = deps.identity.layers.find((l) => l.backend === "zellij");

  const list = async (signal?: AbortSignal): Promise<ZellijPane[]> => {
    await version(signal);
    return parsePaneList(
      await zellij.must("list the session's panes", ["list-panes", "--json", "--all"], signal),
    );
  };

  /** The caller's pane (`ZELLIJ_PANE_ID`), when muxbridge runs inside the session it uses. */
  const anchorId = (): string | undefined => {
    if (!layer?.paneId) return undefined;
    if (deps.config.zellij.session && deps.config.zellij.session !== layer.session) {
      return undefined;
    }
    return zellijPaneId(layer.paneId);
  };

  return {
    version,
    list,
    async require(id, action, signal) {
      const pane = (await list(signal)).find((p) => p.paneId === id);
      if (!pane) {
        throw new MuxError(
          "pane_not_found",
          `Cannot ${action}: zellij does not know pane "${id}"`,
          { hint: "The pane is gone; `muxbridge list` shows what muxbridge still tracks" },
        );
      }
      return pane;
    },
    anchorTab(panes) {
      const anchor = anchorId();
      if (anchor === undefined) return undefined;
      const pane = panes.find((p) => p.paneId === anchor);
      if (!pane) {
        throw new MuxError(
          "pane_not_found",
          `Cannot find the pane muxbridge runs in ("${anchor}") in zellij session "${
            zellij.session ?? "(default)"
          }"`,
          { hint: ANCHOR_HINT },
        );
      }
      return pane.tabId;
    },
  };
}

/**
 * `inspect`: the pane as zellij lists it.
 *
 * @param panes The backend's reads.
 * @param paneId The pane.
 * @param signal Aborts the listing.
 * @returns The pane, or null when zellij does not list it.
 */
export async function inspectPane(
  panes: ZellijPanes,
  paneId: PaneId,
  signal?: AbortSignal,
): Promise<PaneInfo | null> {
  const id = zellijPaneId(paneId);
  const pane = (await panes.list(signal)).find((p) => p.paneId === id);
  // A command pane shows its start command, which carries the spawn token (§9); a pane
  // zellij shows no command for tells nothing (`token` absent).
  return pane
    ? {
      paneId: pane.paneId,
      dead: pane.dead,
      title: pane.title,
      ...(pane.command === undefined ? {} : { token: tokenIn(pane.command) }),
    }
    : null;
}

/**
 * `findSpawned`: the terminal panes whose start command carries the token.
 *
 * @param panes The backend's reads.
 * @param token The spawn token.
 * @param signal Aborts the listing.
 * @returns The panes.
 */
export async function findSpawnedPanes(
  panes: ZellijPanes,
  token: string,
  signal?: AbortSignal,
): Promise<PaneInfo[]> {
  return (await panes.list(signal)).filter((p) => carriesToken(p.command, token))
    .map((p) => ({ paneId: p.paneId, dead: p.dead, title: p.title }));
}
