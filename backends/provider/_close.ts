/**
 * Private to the provider backend: interrupting and closing a pane, each one call to the
 * provider (the shared close procedure verifies every close by `list`).
 *
 * @module
 */

import type { PaneId } from "../../lib/sys/validate.ts";
import type { ProviderLink } from "./_link.ts";
import { providerPaneId } from "./_panes.ts";

/**
 * `interrupt`: the provider's `interrupt`.
 *
 * @param link The backend's link to its provider.
 * @param paneId The pane.
 * @param signal Aborts the call.
 * @throws {MuxError} What the provider answered (`pane_not_found` for an unknown pane).
 */
export async function interruptPane(
  link: ProviderLink,
  paneId: PaneId,
  signal?: AbortSignal,
): Promise<void> {
  await link.rpc().call("interrupt", { paneId: providerPaneId(paneId) }, signal);
}

/**
 * `kill`: the provider's `close`.
 *
 * @param link The backend's link to its provider.
 * @param paneId The pane.
 * @param signal Aborts the call.
 * @throws {MuxError} What the provider answered (`pane_not_found` for an unknown pane).
 */
export async function killPane(
  link: ProviderLink,
  paneId: PaneId,
  signal?: AbortSignal,
): Promise<void> {
  await link.rpc().call("close", { paneId: providerPaneId(paneId) }, signal);
}
