/**
 * The WezTerm backend (WezTerm >= 20230326-111934-3666303c): one pane per child session, split
 * off the pane muxbridge runs in (or `wezterm.pane_id`) with `wezterm cli split-pane`, its
 * program started by argv, every call addressed by pane id, never by focus.
 *
 * WezTerm cannot run here: this backend is verified against the fake CLI in
 * `tests/fakes/bin/wezterm`, which follows wezterm's CLI source; `docs/backends/wezterm.md`
 * ("§N") says what was checked against which upstream file.
 *
 * What WezTerm cannot do, and what muxbridge does instead:
 * - `split-pane` moves focus to the new pane and has no flag against it (§1): when the user
 *   looks at the anchor's tab (a client's focused pane is in it), that pane is activated again
 *   right after the split (a brief flash); elsewhere nothing is activated, since `activate-pane`
 *   would also switch the user's window to that tab;
 * - no environment flag (§1): credentials go into a private 0600 file an explicit `/bin/sh -c`
 *   sources and removes before it `exec`s the program, on a local pane only (a pane of a remote
 *   domain has no `tty_name`, and the file would not be there): `auth_unsupported` elsewhere;
 * - no start command, user data or environment in `list` (§2): the spawn token is exported into
 *   the pane program's environment and found, with the `WEZTERM_PANE` WezTerm puts there, among
 *   this user's session leaders (`/proc`, Linux; where muxbridge knows the socket, so a pane id
 *   of another WezTerm is never taken for one of this one). Elsewhere `spawnToken` is false and a
 *   split whose answer is unreadable is cleaned up by comparing the tab before and after;
 * - no pane title setter (§3): `set-tab-title` would rename the user's tab, and muxbridge's panes
 *   never have a tab of their own, so `capabilities.title` is false;
 * - no layout command and no ownership marks in `list`: new panes split by `layout` and
 *   `main_pane_size`; ownership lives in muxbridge's records.
 *
 * @module
 */

import type { Backend, BackendDeps, Capabilities } from "../../lib/backend/backend.ts";
import { ENVIRON_READABLE, sessionLeaders } from "../../lib/sys/processes.ts";
import { interruptPane, killPane } from "./_close.ts";
import { createWeztermCommand } from "./_command.ts";
import { weztermDoctor, weztermProbe } from "./_doctor.ts";
import {
  createWeztermPanes,
  findSpawnedPanes,
  inspectPane,
  type SessionLeader,
  type WeztermState,
} from "./_panes.ts";
import { layoutResult } from "./_place.ts";
import { spawnPane } from "./_spawn.ts";
import { setPaneTitle } from "./_title.ts";
import { paneProgram, socketInstance } from "./_identity.ts";
import { WEZTERM_CAPABILITIES, WEZTERM_OWNERSHIP, type WeztermConfig } from "./_traits.ts";

/** A session leader and its environment (defined in `_panes.ts`, which reads them). */
export type { SessionLeader };

/** Seams of {@linkcode createWeztermBackend}, for tests. */
export interface WeztermBackendOptions {
  /**
   * This user's session leaders with their environment, where a pane's program (and the spawn
   * token in it) is found; null: none can be read (no spawn token).
   * @default `sessionLeaders` on Linux, else null
   */
  leaders?: (() => SessionLeader[]) | null;
}

/**
 * Creates the WezTerm backend.
 *
 * @param deps Runner, env, clock, config (`wezterm.*`, `layout`, `main_pane_size`,
 *   `command_timeout_ms`), identity (its wezterm layer: the pane and socket muxbridge runs in).
 * @param options Seams.
 * @returns The backend.
 *
 * @example
 * ```ts
 * import type { BackendDeps } from "../../lib/backend/backend.ts";
 * import { validateSessionId } from "../../lib/sys/validate.ts";
 * import type { WeztermConfig } from "./_traits.ts";
 * import { createWeztermBackend } from "./backend.ts";
 *
 * async function openAndClose(deps: BackendDeps<WeztermConfig>): Promise<void> {
 *   const backend = createWeztermBackend(deps);
 *   await backend.probe();
 *   const { paneId } = await backend.spawn({
 *     sessionId: validateSessionId("ses_1"),
 *     title: "fix",
 *     argv: ["opencode", "attach", "http://127.0.0.1:4096", "--session", "ses_1"],
 *     cwd: "/home/me/project",
 *     env: {},
 *     owner: "cli",
 *   });
 *   await backend.kill(paneId);
 * }
 * ```
 */
export function createWeztermBackend(
  deps: BackendDeps<WeztermConfig>,
  options: WeztermBackendOptions = {},
): Backend {
  const wezterm = createWeztermCommand(deps);
  const leaders = options.leaders === undefined
    ? (ENVIRON_READABLE ? sessionLeaders : null)
    : options.leaders;
  // The spawn token needs the socket: a program's WEZTERM_PANE counts only when its
  // WEZTERM_UNIX_SOCKET is the socket muxbridge talks to (`_panes.ts`).
  const socket = wezterm.socket;
  const capabilities: Capabilities = {
    ...WEZTERM_CAPABILITIES,
    spawnToken: leaders !== null && socket !== undefined,
  };
  const { spawnToken } = capabilities;
  const panes = createWeztermPanes(deps, wezterm, leaders, spawnToken);
  const state: WeztermState = { opened: new Set(), credentialFiles: new Map() };
  const ctx = { deps, wezterm, panes, state, spawnToken };
  const view = { bin: wezterm.bin, ...panes };

  return {
    name: "wezterm",
    capabilities,
    probe: (signal) => weztermProbe(view, signal),
    spawn: (req) => spawnPane(ctx, req),
    ownership: WEZTERM_OWNERSHIP,
    inspect: (paneId, signal) => inspectPane(ctx, paneId, signal),
    instance: () => Promise.resolve(socketInstance(socket)),
    paneProgram: (paneId) => Promise.resolve(paneProgram(panes, paneId)),
    // wezterm's list shows no user data (user vars are not in it, §2): no marks.
    listOwned: () => Promise.resolve([]),
    findSpawned: (token, signal) => findSpawnedPanes(ctx, token, signal),
    interrupt: (paneId, signal) => interruptPane(wezterm, paneId, signal),
    kill: (paneId, signal) => killPane(ctx, paneId, signal),
    setTitle: (paneId, title, signal) => setPaneTitle(panes, paneId, title, signal),
    applyLayout: () => Promise.resolve(layoutResult(deps.config)),
    doctor: (signal) =>
      weztermDoctor({ ...view, socket, spawnToken, environReadable: leaders !== null }, signal),
  };
}
