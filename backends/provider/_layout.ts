/**
 * Private to the provider backend: arranging panes, done by a provider with
 * `capabilities.layout`.
 *
 * @module
 */

import type { LayoutRequest, LayoutResult } from "../../lib/backend/backend.ts";
import type { ProviderLink } from "./_link.ts";
import { providerPaneId } from "./_panes.ts";

/**
 * `applyLayout`: the provider's `layout`, or not applied (with the reason) when it arranges no
 * panes.
 *
 * @param link The backend's link to its provider.
 * @param req The layout and the panes it arranges.
 * @param signal Aborts the calls.
 * @returns What the provider did.
 * @throws {MuxError} What the provider answered.
 */
export async function arrangePanes(
  link: ProviderLink,
  req: LayoutRequest,
  signal?: AbortSignal,
): Promise<LayoutResult> {
  const provider = await link.info(signal);
  if (!provider.capabilities.layout) {
    return {
      applied: false,
      detail: `provider ${provider.provider.name} arranges no panes (capabilities.layout is false)`,
    };
  }
  return await link.rpc().call("layout", {
    layout: req.layout,
    mainPaneSize: req.mainPaneSize,
    panes: req.panes.map(providerPaneId),
  }, signal);
}
