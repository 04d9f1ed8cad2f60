/**
 * Private to the wezterm backend: which WezTerm muxbridge talks to, and what a pane's program
 * shows (docs/backends/wezterm.md §6). Pane ids count up from 0 in each GUI or mux server, so an
 * id means something only with the server it came from. `wezterm cli` names no server process,
 * but the GUI listens on `<runtime dir>/gui-sock-<its pid>` (`run_terminal_gui` in
 * `wezterm-gui/src/main.rs`), and any server binds its socket file anew when it starts: the
 * instance is the socket path, the GUI's pid from that name (where it has one) and the socket
 * file's stamp.
 *
 * @module
 */

import type { Instance, PaneProgram } from "../../lib/backend/backend.ts";
import { fileStamp } from "../../lib/sys/file_stamp.ts";
import type { PaneId } from "../../lib/sys/validate.ts";
import type { WeztermPanes } from "./_panes.ts";
import { weztermPaneId } from "./_parse.ts";

/**
 * The WezTerm behind a socket path.
 *
 * @param socket The socket muxbridge talks to; undefined: not known.
 * @returns The instance, or null when the socket is unknown or not there.
 */
export function socketInstance(socket: string | undefined): Instance | null {
  if (socket === undefined) return null;
  const stamp = fileStamp(socket);
  if (stamp === undefined) return null;
  const gui = /(?:^|\/)gui-sock-([1-9]\d{0,9})$/.exec(socket);
  return { address: socket, ...(gui ? { pid: Number(gui[1]) } : {}), stamp };
}

/**
 * The program of a pane: the session leader whose `WEZTERM_PANE` is the pane and whose
 * `WEZTERM_UNIX_SOCKET` is muxbridge's socket, with the spawn token in its environment.
 *
 * @param panes The backend's reads.
 * @param paneId The pane.
 * @returns Its pid and token (null: its environment holds none); empty when no such program
 *   is found.
 */
export function paneProgram(panes: WeztermPanes, paneId: PaneId): PaneProgram {
  const id = weztermPaneId(paneId);
  const found = panes.programs().filter((p) => p.paneId === id);
  // Two programs claiming one pane: neither is told apart from the other.
  if (found.length !== 1) return {};
  const [program] = found;
  return { pid: program.pid, token: program.token ?? null };
}
