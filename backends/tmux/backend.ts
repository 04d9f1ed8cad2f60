/**
 * The tmux backend (tmux >= 3.0): one pane per child session next to an anchor pane, ownership
 * marks as pane user options, overflow into a tagged muxbridge window when the anchor's window is
 * full, layouts that never reshape the user's panes.
 *
 * Evidence for every quirk is in `docs/backends/tmux.md` ("§N") or a live observation on tmux
 * 3.3a noted where it is used.
 *
 * @module
 */

import type { Backend, BackendDeps } from "../../lib/backend/backend.ts";
import { createAnchor } from "./_anchor.ts";
import { arrangePanes } from "./_arrange.ts";
import { interruptPane, killPane } from "./_close.ts";
import { createTmuxCommand } from "./_command.ts";
import { serverInstance } from "./_identity.ts";
import { inspectPane, ownedPanes, spawnedPanes } from "./_panes.ts";
import { probeTmux, tmuxDoctor } from "./_probe.ts";
import { spawnPane } from "./_spawn.ts";
import { focusPane, showStatus, titlePane } from "./_title.ts";
import { TMUX_CAPABILITIES, TMUX_OWNERSHIP, type TmuxConfig } from "./_traits.ts";

/**
 * Creates the tmux backend.
 *
 * @param deps Runner, env, clock, config (`tmux`, `placement`, `command_timeout_ms`), identity.
 * @returns The backend.
 *
 * @example Open a pane next to the pane muxbridge runs in
 * ```ts
 * import type { BackendDeps } from "../../lib/backend/backend.ts";
 * import { validateSessionId } from "../../lib/sys/validate.ts";
 * import type { TmuxConfig } from "./_traits.ts";
 * import { createTmuxBackend } from "./backend.ts";
 *
 * async function openAndClose(deps: BackendDeps<TmuxConfig>): Promise<void> {
 *   const backend = createTmuxBackend(deps);
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
export function createTmuxBackend(deps: BackendDeps<TmuxConfig>): Backend {
  const tmux = createTmuxCommand(deps);
  const anchor = createAnchor(deps, tmux);
  const ctx = { deps, tmux, anchor };

  return {
    name: "tmux",
    capabilities: TMUX_CAPABILITIES,
    probe: (signal) => probeTmux(tmux, signal),
    spawn: (req) => spawnPane(ctx, req),
    ownership: TMUX_OWNERSHIP,
    inspect: (paneId, signal) => inspectPane(tmux, paneId, signal),
    instance: (signal) => serverInstance(tmux, signal),
    listOwned: (signal) => ownedPanes(tmux, signal),
    findSpawned: (token, signal) => spawnedPanes(tmux, token, signal),
    interrupt: (paneId, signal) => interruptPane(tmux, paneId, signal),
    kill: (paneId, signal) => killPane(ctx, paneId, signal),
    setTitle: (paneId, title, signal) => titlePane(tmux, paneId, title, signal),
    setStatus: (paneId, status, signal) => showStatus(tmux, paneId, status, signal),
    focus: (paneId, signal) => focusPane(tmux, paneId, signal),
    applyLayout: (req, signal) => arrangePanes(ctx, req, signal),
    doctor: (signal) => tmuxDoctor(ctx, signal),
  };
}
