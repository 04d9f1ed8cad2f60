/**
 * What a pane record needs for cleanup to act on a tmux pane (lib/session/pane_proof.ts): the
 * server it is on (socket path, pid and its start stamp, start time) and its program (pid and
 * start stamp), read from tmux itself, for tests that plant records of panes they opened
 * without muxbridge.
 *
 * @module
 */

import { createProcesses } from "../../lib/sys/processes.ts";
import type { PaneRecordInput } from "../../lib/session/pane_store.ts";
import type { TmuxServer } from "./tmux_server.ts";

/**
 * The instance and program fields of a record of `paneId`, as muxbridge would have recorded
 * them had it opened the pane.
 *
 * @param server The private tmux server.
 * @param paneId The pane.
 * @returns The fields to spread into a record.
 */
export async function provenFields(
  server: TmuxServer,
  paneId: string,
): Promise<Pick<PaneRecordInput, "instance" | "pid" | "pidStart">> {
  const processes = createProcesses();
  const [socket, serverPid, started, panePid] = (await server.tmux([
    "display-message",
    "-p",
    "-t",
    paneId,
    "#{socket_path}\t#{pid}\t#{start_time}\t#{pane_pid}",
  ])).trim().split("\t");
  const pid = Number(panePid);
  return {
    instance: {
      address: socket,
      pid: Number(serverPid),
      pidStart: processes.startTime(Number(serverPid)),
      startedAt: [Number(started), Number(started)],
    },
    pid,
    pidStart: processes.startTime(pid),
  };
}
