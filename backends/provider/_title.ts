/**
 * Private to the provider backend: pane titles, set by a provider with `capabilities.title`.
 *
 * @module
 */

import { MuxError } from "../../lib/sys/errors.ts";
import { cleanTitle, type PaneId } from "../../lib/sys/validate.ts";
import type { ProviderLink } from "./_link.ts";
import { providerPaneId } from "./_panes.ts";

/**
 * `setTitle`: the provider's `setTitle`, or a refusal when it has no titles.
 *
 * @param link The backend's link to its provider.
 * @param paneId The pane.
 * @param title The title (cleaned and capped here).
 * @param signal Aborts the calls.
 * @throws {MuxError} `pane_not_found` for a pane the provider does not list, `unsupported`
 *   when it has no titles, or what the provider answered.
 */
export async function setPaneTitle(
  link: ProviderLink,
  paneId: PaneId,
  title: string,
  signal?: AbortSignal,
): Promise<void> {
  const id = providerPaneId(paneId);
  const provider = await link.info(signal);
  if (!provider.capabilities.title) {
    // An unknown pane is still "not found", as on every backend.
    if (!(await link.list(signal)).some((p) => p.paneId === id)) {
      throw new MuxError(
        "pane_not_found",
        `Cannot title pane ${id}: the provider does not list it`,
      );
    }
    throw new MuxError(
      "unsupported",
      `Cannot title pane ${id}: provider ${provider.provider.name} has no titles`,
    );
  }
  await link.rpc().call("setTitle", { paneId: id, title: cleanTitle(title) }, signal);
}
