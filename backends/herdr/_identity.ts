/**
 * Private to the herdr backend: which herdr server muxbridge talks to, and what a pane's program
 * shows (docs/backends/herdr.md §17). Pane ids are never reused within one server's life
 * (0.7.0), but a new server counts from `w1:p1` again. herdr's CLI and socket name no server
 * process (`ping` tells its version and protocol only), but a server binds its socket file anew
 * when it starts: the instance is the socket path with that file's stamp. The pane's program is
 * the shell herdr started for it (`pane process-info`), which `exec`s into muxbridge's program
 * and keeps the spawn token in its environment.
 *
 * @module
 */

import type { BackendDeps, Instance, PaneProgram } from "../../lib/backend/backend.ts";
import type { Layer } from "../../lib/backend/identity.ts";
import { SPAWN_TOKEN_VAR } from "../../lib/backend/spawn_token.ts";
import { fileStamp } from "../../lib/sys/file_stamp.ts";
import type { PaneId } from "../../lib/sys/validate.ts";
import type { HerdrApi } from "./_api.ts";
import { paneShellPid } from "./_inspect.ts";
import { herdrPaneId } from "./_parse.ts";
import { resolveHerdrSocket } from "./_socket.ts";
import type { HerdrConfig } from "./_traits.ts";

/**
 * The server behind herdr's socket.
 *
 * @param deps The backend's deps (config, environment).
 * @param layer The herdr layer muxbridge runs in, if any.
 * @returns The instance, or null when the socket is unknown or not there (no server).
 */
export function serverInstance(
  deps: BackendDeps<HerdrConfig>,
  layer: Layer | undefined,
): Instance | null {
  const { path } = resolveHerdrSocket(deps, layer);
  if (path === undefined) return null;
  const stamp = fileStamp(path);
  return stamp === undefined ? null : { address: path, stamp };
}

/**
 * A pane's program: the shell pid herdr tells, and the spawn token in its environment.
 *
 * @param ctx herdr's operations, the log, the environment reader.
 * @param paneId The pane.
 * @param signal Aborts the call.
 * @returns Its pid and token (null: its environment holds none); empty when herdr tells no pid.
 */
export async function paneProgram(
  ctx: Pick<BackendDeps<HerdrConfig>, "log"> & {
    api: HerdrApi;
    environ(pid: number): Readonly<Record<string, string>> | undefined;
  },
  paneId: PaneId,
  signal?: AbortSignal,
): Promise<PaneProgram> {
  const pid = await paneShellPid(ctx.api, ctx.log, herdrPaneId(paneId), signal);
  if (pid === undefined) return {};
  const env = ctx.environ(pid);
  return env === undefined ? { pid } : { pid, token: env[SPAWN_TOKEN_VAR] ?? null };
}
