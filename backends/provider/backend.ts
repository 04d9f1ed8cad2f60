/**
 * The pane-provider backend: every pane operation is a JSON-RPC call to one long-lived provider
 * program (`provider.command`), so a terminal or multiplexer muxbridge has no code for can host
 * its panes by implementing `docs/provider-protocol.md`. What the backend can do is what the
 * provider's `initialize` answer says.
 *
 * muxbridge keeps its own rules on the provider's answers: every id passes the pane-id check
 * before it is sent, credentials go only to a provider that promises an environment
 * (`capabilities.env`), a spawn counts only once the provider's `list` shows the pane it named
 * (a spawn answered with a pane `list` never shows fails, and the pane it made is found by its
 * spawn token and closed), and the shared close procedure verifies every close by `list`.
 *
 * @module
 */

import type { Backend, BackendDeps } from "../../lib/backend/backend.ts";
import { interruptPane, killPane } from "./_close.ts";
import { probeProvider, providerDoctor } from "./_doctor.ts";
import { arrangePanes } from "./_layout.ts";
import { createProviderLink, type ProviderBackendOptions } from "./_link.ts";
import { findSpawnedPanes, inspectPane, providerInstance } from "./_panes.ts";
import { spawnPane } from "./_spawn.ts";
import { setPaneTitle } from "./_title.ts";
import { PROVIDER_OWNERSHIP, type ProviderConfig } from "./_traits.ts";

/** Seams and bounds of {@linkcode createProviderBackend} (defined in `_link.ts`, which uses them). */
export type { ProviderBackendOptions };

/**
 * Creates the provider backend. The provider starts with the first call (`probe`).
 *
 * @param deps Clock, log, config (`provider.command`, `command_timeout_ms`).
 * @param options Seams and restart bounds.
 * @returns The backend; `dispose()` stops the provider.
 *
 * @example
 * ```ts
 * import type { BackendDeps } from "../../lib/backend/backend.ts";
 * import { validateSessionId } from "../../lib/sys/validate.ts";
 * import type { ProviderConfig } from "./_traits.ts";
 * import { createProviderBackend } from "./backend.ts";
 *
 * async function openAndClose(deps: BackendDeps<ProviderConfig>): Promise<void> {
 *   // deps.config.provider.command is the provider program, such as ["./provider"]
 *   const backend = createProviderBackend(deps);
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
 *   await backend.dispose?.();
 * }
 * ```
 */
export function createProviderBackend(
  deps: BackendDeps<ProviderConfig>,
  options: ProviderBackendOptions = {},
): Backend {
  const link = createProviderLink(deps, options);
  const ctx = { deps, link };

  return {
    name: "provider",
    get capabilities() {
      return link.capabilities();
    },
    probe: (signal) => probeProvider(link, signal),
    spawn: (req) => spawnPane(ctx, req),
    ownership: PROVIDER_OWNERSHIP,
    inspect: (paneId, signal) => inspectPane(link, paneId, signal),
    instance: (signal) => providerInstance(link, signal),
    // A provider keeps no marks muxbridge could read: ownership lives in the state records.
    listOwned: () => Promise.resolve([]),
    findSpawned: (token, signal) => findSpawnedPanes(link, token, signal),
    interrupt: (paneId, signal) => interruptPane(link, paneId, signal),
    kill: (paneId, signal) => killPane(link, paneId, signal),
    setTitle: (paneId, title, signal) => setPaneTitle(link, paneId, title, signal),
    applyLayout: (req, signal) => arrangePanes(link, req, signal),
    doctor: (signal) => providerDoctor(link, signal),
    async dispose() {
      await link.stop();
    },
  };
}
