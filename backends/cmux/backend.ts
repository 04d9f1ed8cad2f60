/**
 * The cmux backend (cmux >= 0.64.14, macOS): one surface per child session, split to the right of
 * the surface muxbridge runs in, its program typed into the new terminal's shell, the server's
 * credentials in a private file the typed `/bin/sh` reads and removes (never typed themselves).
 *
 * cmux has closed a *different* live surface and exited 0 when `close-surface` got a ref it could
 * not resolve (issue #9410, still in 0.64.20; docs/backends/cmux.md §5). So this backend only ever
 * names surfaces by UUID, always passes `--workspace` and pins `--socket`, refuses to touch the
 * surface it runs in, re-lists the workspace right before closing (an unlisted surface is never
 * passed to close-surface), and lists it again afterwards: if any other surface vanished or the
 * receipt names another surface, the close fails loudly (`close_unverified`, logged as an error).
 *
 * Verified against a fake CLI only (`tests/fakes/bin/cmux`); cmux cannot run here. The facts it
 * relies on, with the upstream source they come from, are in `docs/backends/cmux.md` (cited "§N").
 *
 * @module
 */

import type { Backend, BackendDeps } from "../../lib/backend/backend.ts";
import { createPaneCredentials } from "../../lib/backend/_pane_credentials.ts";
import { closeSurface, interruptSurface } from "./_close.ts";
import { createCmuxCommand } from "./_command.ts";
import { cmuxDoctor, probeCmux } from "./_probe.ts";
import { createProgram } from "./_program.ts";
import { spawnSurface } from "./_spawn.ts";
import { createSurfaces, inspectSurface } from "./_surfaces.ts";
import { titleSurface } from "./_title.ts";
import { appInstance } from "./_identity.ts";
import { CMUX_CAPABILITIES, CMUX_OWNERSHIP, type CmuxConfig } from "./_traits.ts";

/**
 * Creates the cmux backend.
 *
 * @param deps Runner, env, clock, config (`cmux.*`, `command_timeout_ms`), identity (its cmux
 *   layer: socket, workspace and the caller's surface, all three required).
 * @returns The backend.
 *
 * @example
 * ```ts
 * import type { BackendDeps } from "../../lib/backend/backend.ts";
 * import { validateSessionId } from "../../lib/sys/validate.ts";
 * import type { CmuxConfig } from "./_traits.ts";
 * import { createCmuxBackend } from "./backend.ts";
 *
 * async function openAndClose(deps: BackendDeps<CmuxConfig>): Promise<void> {
 *   const backend = createCmuxBackend(deps);
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
export function createCmuxBackend(deps: BackendDeps<CmuxConfig>): Backend {
  const cmux = createCmuxCommand(deps);
  const surfaces = createSurfaces(deps, cmux);
  /** Version gate and the optional new-split flags, once per backend (a failure is retried). */
  const program = createProgram(cmux);
  const ctx = { deps, cmux, surfaces, program, credentials: createPaneCredentials(deps) };

  return {
    name: "cmux",
    capabilities: CMUX_CAPABILITIES,
    probe: (signal) => probeCmux(ctx, signal),
    spawn: (req) => spawnSurface(ctx, req),
    ownership: CMUX_OWNERSHIP,
    inspect: (paneId, signal) => inspectSurface(surfaces, paneId, signal),
    instance: () => Promise.resolve(appInstance(deps)),
    listOwned: () => Promise.resolve([]),
    // No token reaches a cmux surface (see CMUX_CAPABILITIES).
    findSpawned: () => Promise.resolve([]),
    interrupt: (paneId, signal) => interruptSurface(ctx, paneId, signal),
    kill: (paneId, signal) => closeSurface(ctx, paneId, signal),
    setTitle: (paneId, title, signal) => titleSurface(ctx, paneId, title, signal),
    applyLayout: () =>
      Promise.resolve({
        applied: false,
        detail:
          "cmux has no named layouts: surfaces stay to the right of the caller where new-split put them",
      }),
    doctor: (signal) => cmuxDoctor(ctx, signal),
  };
}
