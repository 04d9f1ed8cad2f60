/**
 * Private to the wezterm backend: what it reads of WezTerm's panes — the gated version every
 * listing waits for, `list`, the anchor (the pane new panes split off), the pane programs found
 * among this user's session leaders (with the spawn token in their environment, §2) — and the
 * `inspect` and `findSpawned` built on them.
 *
 * @module
 */

import { gateVersion } from "../../lib/backend/_version_gate.ts";
import { keepSuccess } from "../../lib/backend/_keep_success.ts";
import type { BackendDeps, PaneInfo } from "../../lib/backend/backend.ts";
import { SPAWN_TOKEN_VAR } from "../../lib/backend/spawn_token.ts";
import type { CredentialsFile } from "../../lib/sys/credentials_file.ts";
import { MuxError } from "../../lib/sys/errors.ts";
import type { PaneId } from "../../lib/sys/validate.ts";
import { ANCHOR_HINT, type WeztermCommand, weztermError } from "./_command.ts";
import {
  PANE_ID,
  parseList,
  type WeztermPane,
  weztermPaneId,
  type WeztermVersion,
  weztermVersion,
} from "./_parse.ts";
import { WEZTERM_GATE, type WeztermConfig } from "./_traits.ts";

/** A session leader and its environment (`lib/sys/processes.ts` `sessionLeaders`). */
export type SessionLeader = { pid: number; env: Readonly<Record<string, string>> };

/** A program WezTerm started in a pane of the socket muxbridge talks to. */
export interface PaneProgram {
  /** Its pane (`WEZTERM_PANE`). */
  paneId: string;
  /** Its pid. */
  pid: number;
  /** The spawn token in its environment, if any. */
  token?: string;
}

/** What the backend keeps of the panes it opened, until they are gone. */
export interface WeztermState {
  /** Panes this backend opened (split targets for the next ones), until they are gone. */
  opened: Set<string>;
  /** Credentials files of panes opened, until the pane is killed. */
  credentialFiles: Map<string, CredentialsFile>;
}

/** The backend's reads of WezTerm. */
export interface WeztermPanes {
  /**
   * `wezterm --version`, gated; the first success is kept.
   *
   * @throws {MuxError} `unparseable_output`, `unsupported_version`, or the call's error.
   */
  version(signal?: AbortSignal): Promise<WeztermVersion>;
  /** Every pane `list` shows (after the version gate). */
  list(signal?: AbortSignal): Promise<WeztermPane[]>;
  /**
   * The pane to split: `wezterm.pane_id`, else the `WEZTERM_PANE` muxbridge runs in.
   *
   * @throws {MuxError} `no_backend` when there is none.
   */
  anchorId(): string;
  /** The pane programs WezTerm started for this socket, by pane id (from their environment). */
  programs(): PaneProgram[];
}

/**
 * Creates the reads of one backend.
 *
 * @param deps The backend's deps (config `wezterm.pane_id`, identity).
 * @param wezterm The backend's command runner.
 * @param leaders This user's session leaders, or null where none can be read.
 * @param spawnToken Whether the spawn token is in use (else no program is ever found).
 * @returns The reads.
 */
export function createWeztermPanes(
  deps: BackendDeps<WeztermConfig>,
  wezterm: WeztermCommand,
  leaders: (() => SessionLeader[]) | null,
  spawnToken: boolean,
): WeztermPanes {
  const layer = deps.identity.layers.find((l) => l.backend === "wezterm");
  // A pane id names a pane of one WezTerm: a program's WEZTERM_PANE counts only when its
  // WEZTERM_UNIX_SOCKET is the socket muxbridge talks to.
  const socket = wezterm.socket;

  const version = keepSuccess(async (signal?: AbortSignal): Promise<WeztermVersion> => {
    const run = await wezterm.version(signal);
    if (run.code !== 0) throw weztermError("read the wezterm version", run);
    const text = run.stdout.trim().split("\n")[0] ?? "";
    return weztermVersion(gateVersion(WEZTERM_GATE, text, { argv: run.argv }));
  });

  const list = async (signal?: AbortSignal): Promise<WeztermPane[]> => {
    await version(signal);
    return parseList(
      await wezterm.must("list wezterm panes", ["list", "--format", "json"], signal),
    );
  };

  const anchorId = (): string => {
    const configured = deps.config.wezterm.pane_id;
    const id = configured !== undefined ? String(configured) : layer?.paneId ?? undefined;
    if (id === undefined || !PANE_ID.test(id)) {
      throw new MuxError(
        "no_backend",
        "Cannot place panes: no WezTerm pane to split (WEZTERM_PANE is unset)",
        {
          hint: ANCHOR_HINT,
        },
      );
    }
    return id;
  };

  const programs = (): PaneProgram[] => {
    if (!spawnToken || leaders === null) return [];
    return leaders().flatMap(({ pid, env }) => {
      const paneId = env.WEZTERM_PANE;
      if (paneId === undefined || !PANE_ID.test(paneId) || env.WEZTERM_UNIX_SOCKET !== socket) {
        return [];
      }
      const token = env[SPAWN_TOKEN_VAR];
      return [{ paneId, pid, ...(token !== undefined ? { token } : {}) }];
    });
  };

  return { version, list, anchorId, programs };
}

/**
 * A pane as the backend reports it.
 *
 * @param pane The pane `list` shows.
 * @param pid Its program's pid, when known.
 * @returns The info.
 */
export function toInfo(pane: WeztermPane, pid?: number): PaneInfo {
  // With the default exit_behavior ("Close") a pane goes when its program exits; is_dead is read
  // where a build reports it (none in the source read, §2).
  const info: PaneInfo = { paneId: pane.paneId, dead: pane.isDead ?? false, title: pane.title };
  if (pid !== undefined) info.pid = pid;
  return info;
}

/**
 * `inspect`: the pane as `list` shows it, or null (and no longer a split target) when it is
 * gone.
 *
 * @param ctx The backend's reads and state.
 * @param paneId The pane.
 * @param signal Aborts the call.
 * @returns The pane's info, or null.
 * @throws {MuxError} `invalid_argument` for an id that is not WezTerm's, or the listing's error.
 */
export async function inspectPane(
  ctx: { panes: WeztermPanes; state: WeztermState },
  paneId: PaneId,
  signal?: AbortSignal,
): Promise<PaneInfo | null> {
  const id = weztermPaneId(paneId);
  const pane = (await ctx.panes.list(signal)).find((p) => p.paneId === id);
  if (!pane) ctx.state.opened.delete(id);
  return pane ? toInfo(pane) : null;
}

/**
 * `findSpawned`: the panes whose program carries the spawn token (none without it).
 *
 * @param ctx The backend's reads, and whether the spawn token is in use.
 * @param token The spawn token.
 * @param signal Aborts the call.
 * @returns The panes, each with its program's pid.
 * @throws {MuxError} the listing's error.
 */
export async function findSpawnedPanes(
  ctx: { panes: WeztermPanes; spawnToken: boolean },
  token: string,
  signal?: AbortSignal,
): Promise<PaneInfo[]> {
  if (!ctx.spawnToken) return [];
  const programs = ctx.panes.programs().filter((p) => p.token === token);
  if (programs.length === 0) return [];
  const panes = await ctx.panes.list(signal);
  return programs.flatMap((prog) => {
    const pane = panes.find((p) => p.paneId === prog.paneId);
    return pane ? [toInfo(pane, prog.pid)] : [];
  });
}
