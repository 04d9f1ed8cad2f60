/**
 * The kitty backend (kitty >= 0.26 with remote control on): one kitty window per child session in
 * the tab of the anchor window, opened without taking focus, driven over kitty's remote-control
 * socket where the address is a Unix socket path, else through `kitten @` (0.27+) or `kitty @`
 * (0.26) addressed with `--to`.
 *
 * Evidence for every quirk is `docs/backends/kitty.md` ("§N"), the kitty 0.26.5 source or a live
 * run of kitty 0.26.5 under Xvfb, noted where used. Newer versions (kitten, user variables,
 * `--next-to`) are gated on the probed version and tested against a fake runner only.
 *
 * @module
 */

import type { Backend, BackendDeps, Capabilities } from "../../lib/backend/backend.ts";
import type { CredentialsFile } from "../../lib/sys/credentials_file.ts";
import type { UnixRequester } from "../../lib/sys/unix_request.ts";
import { closeWindow, interruptWindow } from "./_close.ts";
import { createKittyCommand } from "./_command.ts";
import { arrangeTab } from "./_layout.ts";
import { USER_VARS_VERSION } from "./_parse.ts";
import { kittyDoctor, probeKitty } from "./_probe.ts";
import { createProgramState } from "./_program.ts";
import { openWindow } from "./_spawn.ts";
import { focusWindow, titleWindow } from "./_title.ts";
import { KITTY_CAPABILITIES, KITTY_OWNERSHIP, type KittyConfig } from "./_traits.ts";
import { inspectWindow, kittyInstance, ownedWindows, spawnedWindows } from "./_windows.ts";

/** Seams of {@linkcode createKittyBackend}, for tests. */
export interface KittyBackendOptions {
  /** The Unix socket request, for calls over kitty's socket. @default `unixRequest` */
  unixRequest?: UnixRequester;
}

/**
 * Creates the kitty backend.
 *
 * @param deps Runner, env, clock, config (`kitty.*`, `command_timeout_ms`), identity.
 * @param options The socket seam.
 * @returns The backend. Its `capabilities.marks` turns true once a kitty >= 0.30 was probed.
 *
 * @example Open a window next to the one muxbridge runs in
 * ```ts
 * import type { BackendDeps } from "../../lib/backend/backend.ts";
 * import { validateSessionId } from "../../lib/sys/validate.ts";
 * import type { KittyConfig } from "./_traits.ts";
 * import { createKittyBackend } from "./backend.ts";
 *
 * async function openAndClose(deps: BackendDeps<KittyConfig>): Promise<void> {
 *   const backend = createKittyBackend(deps);
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
export function createKittyBackend(
  deps: BackendDeps<KittyConfig>,
  options: KittyBackendOptions = {},
): Backend {
  const kitty = createKittyCommand(deps, options.unixRequest);
  const program = createProgramState(kitty);
  /** Credentials files of windows opened by this backend, until the window is killed. */
  const credentials = new Map<string, CredentialsFile>();
  const ctx = { deps, kitty, program, credentials };

  return {
    name: "kitty",
    get capabilities(): Capabilities {
      return { ...KITTY_CAPABILITIES, marks: program.atLeast(USER_VARS_VERSION) };
    },
    probe: (signal) => probeKitty(ctx, signal),
    spawn: (req) => openWindow(ctx, req),
    ownership: KITTY_OWNERSHIP,
    inspect: (paneId, signal) => inspectWindow(kitty, paneId, signal),
    instance: () =>
      Promise.resolve(
        kittyInstance(kitty, deps.identity.layers.find((l) => l.backend === "kitty")),
      ),
    listOwned: (signal) => ownedWindows(ctx, signal),
    findSpawned: (token, signal) => spawnedWindows(kitty, token, signal),
    interrupt: (paneId, signal) => interruptWindow(kitty, paneId, signal),
    kill: (paneId, signal) => closeWindow(ctx, paneId, signal),
    setTitle: (paneId, title, signal) => titleWindow(kitty, paneId, title, signal),
    focus: (paneId, signal) => focusWindow(kitty, paneId, signal),
    applyLayout: (req, signal) => arrangeTab(ctx, req, signal),
    doctor: (signal) => kittyDoctor(ctx, signal),
  };
}
