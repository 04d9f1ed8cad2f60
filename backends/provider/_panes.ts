/**
 * Private to the provider backend: the provider's panes as muxbridge reads them — the pane-id
 * check every id passes, from an answer or before it is sent — and the `inspect` and
 * `findSpawned` built on its `list`.
 *
 * @module
 */

import { checkPaneId } from "../../lib/backend/_pane_id.ts";
import type { Instance, PaneInfo } from "../../lib/backend/backend.ts";
import { SPAWN_TOKEN } from "../../lib/backend/spawn_token.ts";
import type { PaneId } from "../../lib/sys/validate.ts";
import type { ProviderLink } from "./_link.ts";
import { PROVIDER_PANE_ID, type ProviderResult } from "./protocol.ts";

/**
 * Makes a provider pane id, from an answer or before one is sent: the protocol's form only.
 *
 * @param paneId The id.
 * @returns The checked id.
 * @throws {MuxError} When the id is not of the protocol's form.
 */
export function providerPaneId(paneId: string): PaneId {
  return checkPaneId(
    paneId,
    PROVIDER_PANE_ID,
    "A provider pane id is 1-256 of A-Z a-z 0-9 % _ : . - (docs/provider-protocol.md)",
  );
}

function toInfo(pane: ProviderResult<"list">["panes"][number], tokens = false): PaneInfo {
  const info: PaneInfo = { paneId: providerPaneId(pane.paneId), dead: !pane.alive };
  if (pane.pid !== undefined) info.pid = pane.pid;
  if (pane.title !== undefined) info.title = pane.title;
  // A provider that keeps tokens reports each pane's, or none for a pane muxbridge did not open.
  if (tokens) {
    info.token = pane.token !== undefined && SPAWN_TOKEN.test(pane.token) ? pane.token : null;
  }
  return info;
}

/**
 * `instance`: what the provider says of the multiplexer it drives: `list`'s `instance`, else
 * `initialize`'s (none there: the provider tells no instance).
 *
 * @param link The backend's link to its provider.
 * @param signal Aborts the call.
 * @returns The instance (the provider's name, its text), or null when it says nothing.
 */
export async function providerInstance(
  link: ProviderLink,
  signal?: AbortSignal,
): Promise<Instance | null> {
  const info = await link.info(signal);
  if (info.instance === undefined) return null;
  // A provider whose multiplexer can restart under it says so again in each list.
  const now = (await link.rpc().call("list", {}, signal)).instance ?? info.instance;
  return { address: `provider ${info.provider.name}`, stamp: now };
}

/**
 * `inspect`: the pane as the provider lists it.
 *
 * @param link The backend's link to its provider.
 * @param paneId The pane.
 * @param signal Aborts the call.
 * @returns The pane, or null when the provider does not list it.
 */
export async function inspectPane(
  link: ProviderLink,
  paneId: PaneId,
  signal?: AbortSignal,
): Promise<PaneInfo | null> {
  const id = providerPaneId(paneId);
  const tokens = (await link.info(signal)).capabilities.spawnToken;
  const pane = (await link.list(signal)).find((p) => p.paneId === id);
  return pane ? toInfo(pane, tokens) : null;
}

/**
 * `findSpawned`: the listed panes that carry the token, when the provider keeps tokens.
 *
 * @param link The backend's link to its provider.
 * @param token The spawn token.
 * @param signal Aborts the calls.
 * @returns The panes; none when `capabilities.spawnToken` is false.
 */
export async function findSpawnedPanes(
  link: ProviderLink,
  token: string,
  signal?: AbortSignal,
): Promise<PaneInfo[]> {
  if (!(await link.info(signal)).capabilities.spawnToken) return [];
  return (await link.list(signal)).filter((p) => p.token === token).map((p) => toInfo(p, true));
}
