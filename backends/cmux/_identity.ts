/**
 * Private to the cmux backend: which cmux app muxbridge talks to (docs/backends/cmux.md §10).
 * cmux's CLI names no app process, but the app binds its socket file anew each time it starts;
 * the instance is the socket path (`CMUX_SOCKET_PATH`, which every call pins with `--socket`)
 * with that file's stamp. A surface is named by its UUID, which cmux makes at random for each
 * surface: the id itself shows it is the recorded surface, where nothing shows its program.
 *
 * @module
 */

import type { BackendDeps, Instance } from "../../lib/backend/backend.ts";
import { fileStamp } from "../../lib/sys/file_stamp.ts";
import type { CmuxConfig } from "./_traits.ts";

/**
 * The app behind the socket muxbridge pins.
 *
 * @param deps The backend's deps (config `cmux.socket_path`, identity).
 * @returns The instance, or null when the socket is unknown or not there.
 */
export function appInstance(deps: BackendDeps<CmuxConfig>): Instance | null {
  const layer = deps.identity.layers.find((l) => l.backend === "cmux");
  const socket = deps.config.cmux.socket_path ?? layer?.socket;
  if (socket === undefined) return null;
  const stamp = fileStamp(socket);
  return stamp === undefined ? null : { address: socket, stamp };
}
