/**
 * The zellij backend (zellij >= 0.44.1): one pane per child session in the tab of the pane
 * muxbridge runs in, the attach command launched directly (no shell), every action addressed by
 * pane id, never by focus.
 *
 * zellij cannot be installed here: this backend is verified against the fake CLI in
 * `tests/fakes/bin/zellij`, built from `docs/backends/zellij.md` ("§N", read in the zellij
 * source), never against a real zellij.
 *
 * What zellij cannot do, and what muxbridge does instead:
 * - no per-pane environment (zellij issues #1987, #3856, #4031: panes get the *server's*
 *   environment), so credentials reach a pane through a private file its explicit `/bin/sh`
 *   reads and removes before it `exec`s the program (`lib/sys/credentials_file.ts`), never on
 *   argv and never typed;
 * - no hidden per-pane data (titles are the clean session title, nothing else), so ownership
 *   survives a crash through muxbridge's durable pane records, not marks: `marks` is false;
 * - no layout command that arranges only some panes: `applyLayout` is an honest no-op and the
 *   split direction is chosen at creation;
 * - no pane pid in `list-panes`: a program that outlives its pane is not terminated by pid.
 *
 * @module
 */

import type { Backend, BackendDeps, Capabilities } from "../../lib/backend/backend.ts";
import { createPaneCredentials } from "../../lib/backend/_pane_credentials.ts";
import { interruptPane, killPane } from "./_close.ts";
import { createZellijCommand } from "./_command.ts";
import { probeZellij, zellijDoctor } from "./_doctor.ts";
import { createZellijPanes, findSpawnedPanes, inspectPane } from "./_panes.ts";
import { layoutResult } from "./_place.ts";
import { oneAtATime, openPane } from "./_spawn.ts";
import { setPaneTitle } from "./_title.ts";
import { sessionInstance } from "./_identity.ts";
import { ZELLIJ_CAPABILITIES, ZELLIJ_OWNERSHIP, type ZellijConfig } from "./_traits.ts";
import { createZellijVersion } from "./_version.ts";

/**
 * Creates the zellij backend.
 *
 * @param deps Runner, env, clock, config (`zellij`, `layout`, `command_timeout_ms`), identity.
 * @returns The backend.
 *
 * @example Open a pane in the tab muxbridge runs in
 * ```ts
 * import type { BackendDeps } from "../../lib/backend/backend.ts";
 * import { validateSessionId } from "../../lib/sys/validate.ts";
 * import type { ZellijConfig } from "./_traits.ts";
 * import { createZellijBackend } from "./backend.ts";
 *
 * async function openAndClose(deps: BackendDeps<ZellijConfig>): Promise<void> {
 *   const backend = createZellijBackend(deps);
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
export function createZellijBackend(deps: BackendDeps<ZellijConfig>): Backend {
  const zellij = createZellijCommand(deps);
  // focusSafe is set once the version is known (ZELLIJ_CAPABILITIES).
  const capabilities: Capabilities = { ...ZELLIJ_CAPABILITIES, focusSafe: false };
  const panes = createZellijPanes(deps, zellij, createZellijVersion(zellij, capabilities));
  const ctx = { deps, zellij, panes, credentials: createPaneCredentials(deps) };

  return {
    name: "zellij",
    capabilities,
    probe: (signal) => probeZellij(ctx, signal),
    // Spawns run one at a time: each lists the panes before and after its own split.
    spawn: oneAtATime((req) => openPane(ctx, req)),
    ownership: ZELLIJ_OWNERSHIP,
    inspect: (paneId, signal) => inspectPane(panes, paneId, signal),
    instance: (signal) => sessionInstance(deps, zellij.session, signal),
    listOwned: () => Promise.resolve([]),
    findSpawned: (token, signal) => findSpawnedPanes(panes, token, signal),
    interrupt: (paneId, signal) => interruptPane(ctx, paneId, signal),
    kill: (paneId, signal) => killPane(ctx, paneId, signal),
    setTitle: (paneId, title, signal) => setPaneTitle(ctx, paneId, title, signal),
    applyLayout: (req) => layoutResult(deps.log, req),
    doctor: (signal) => zellijDoctor(ctx, signal),
  };
}
