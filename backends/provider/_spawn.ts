/**
 * Private to the provider backend: opening a pane — the request checked, credentials refused to
 * a provider without `capabilities.env`, and the answer checked against the provider's `list`.
 *
 * @module
 */

import { checkProgramArgv } from "../../lib/backend/_program_argv.ts";
import type { BackendDeps, SpawnedPane, SpawnRequest } from "../../lib/backend/backend.ts";
import { SPAWN_TOKEN_VAR } from "../../lib/backend/spawn_token.ts";
import { MuxError } from "../../lib/sys/errors.ts";
import { cleanTitle, validateDirectory, validateTarget } from "../../lib/sys/validate.ts";
import type { ProviderLink } from "./_link.ts";
import { providerPaneId } from "./_panes.ts";
import type { ProviderConfig } from "./_traits.ts";

/**
 * `spawn`: asks the provider for a pane next to the one muxbridge runs in (if it knows one).
 *
 * @param ctx The backend's deps (log) and link to its provider.
 * @param req The spawn request.
 * @returns The pane, and its pid when the provider gave one.
 * @throws {MuxError} `auth_unsupported` for credentials the provider cannot pass,
 *   `unparseable_output` when the answer names a pane its list does not show while another
 *   carries the spawn's token, or what the provider answered.
 */
export async function spawnPane(
  ctx: { deps: BackendDeps<ProviderConfig>; link: ProviderLink },
  req: SpawnRequest,
): Promise<SpawnedPane> {
  const { deps, link } = ctx;
  const sessionId = req.sessionId;
  validateTarget("owner", req.owner);
  const cwd = validateDirectory(req.cwd);
  const title = cleanTitle(req.title);
  checkProgramArgv(req.argv);
  const provider = await link.info(req.signal);
  if (Object.keys(req.env).length > 0 && !provider.capabilities.env) {
    // Refused, not dropped: a pane without its credentials would fail to attach (contract).
    throw new MuxError(
      "auth_unsupported",
      `Cannot pass credentials to a pane of provider ${provider.provider.name}: it has no way to set a pane's environment (capabilities.env is false)`,
      {
        hint:
          "Use a provider that promises capabilities.env, or a built-in backend (each passes the password privately)",
      },
    );
  }
  // A provider's pid is its word: muxbridge signals it only while the process's environment
  // carries the spawn token (lib/session/close_pane.ts), so a provider with `env` passes it on.
  const token: Record<string, string> = req.token !== undefined && provider.capabilities.env
    ? { [SPAWN_TOKEN_VAR]: req.token }
    : {};
  const { paneId, pid } = await link.rpc().call("spawn", {
    argv: [...req.argv],
    cwd,
    env: { ...req.env, ...token },
    title,
    anchor: provider.selfPaneId ?? null,
    sessionId,
    ...(req.token !== undefined ? { token: req.token } : {}),
  }, req.signal);
  // The protocol: spawn answers once the pane is listed. A pane whose program ended at once
  // may already be gone again (the watch reports it), but a listed pane that carries this
  // spawn's token under another id means the answer named the wrong pane: failing here lets
  // the token find the pane that was really made and close it.
  const panes = await link.list(req.signal);
  if (!panes.some((p) => p.paneId === paneId)) {
    const made = req.token === undefined ? undefined : panes.find((p) => p.token === req.token);
    if (made) {
      const message = `Cannot use pane ${
        JSON.stringify(paneId)
      }: the provider answered spawn with it, but its list shows no such pane and pane ${
        JSON.stringify(made.paneId)
      } carries the spawn's token`;
      deps.log.error(`provider ${provider.provider.name}: ${message}`);
      throw new MuxError("unparseable_output", message, {
        hint: "Fix the provider: spawn answers with the id list shows for the new pane",
      });
    }
    deps.log.debug(
      `provider: pane ${paneId} is not listed right after its spawn (ended at once?)`,
    );
  }
  const id = providerPaneId(paneId);
  return pid === undefined ? { paneId: id } : { paneId: id, pid };
}
