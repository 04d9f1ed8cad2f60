/**
 * Private to the tmux backend: reading panes — one pane by id, muxbridge's marked panes, and the
 * panes of a lost spawn found by their spawn token.
 *
 * @module
 */

import type { PaneInfo } from "../../lib/backend/backend.ts";
import { tokenMarker } from "../../lib/backend/spawn_token.ts";
import type { PaneId } from "../../lib/sys/validate.ts";
import { type TmuxCommand, tmuxError } from "./_command.ts";
import { PANE_FORMAT, PANE_ID, type PaneRow, parsePaneRows, tmuxPaneId } from "./_parse.ts";
import { isMarked } from "./_place.ts";
import { GS, parseTokenLine, TOKEN_FORMAT } from "./_identity.ts";

function toInfo(row: PaneRow): PaneInfo {
  const info: PaneInfo = { paneId: row.paneId, dead: row.dead, title: row.title };
  if (row.pid !== undefined) info.pid = row.pid;
  if (row.session !== "") info.sessionId = row.session;
  if (row.owner !== "") info.owner = row.owner;
  return info;
}

/**
 * Reads one pane.
 *
 * @param tmux The backend's command runner.
 * @param paneId The pane (`%N`).
 * @param signal Aborts the call.
 * @returns The pane, or null when tmux does not know it.
 * @throws {MuxError} What tmux answered, other than an unknown pane.
 */
export async function inspectPane(
  tmux: TmuxCommand,
  paneId: PaneId,
  signal?: AbortSignal,
): Promise<PaneInfo | null> {
  const id = tmuxPaneId(paneId);
  // list-panes, never display-message alone: the latter exits 0 for an unknown pane (§3); after
  // a failed list-panes tmux runs nothing more of the line. list-panes -t %N lists %N's whole
  // window, so pick %N's row. The token line follows (§13).
  const result = await tmux.run([
    ["list-panes", "-t", id, "-F", PANE_FORMAT],
    ["display-message", "-p", "-t", id, TOKEN_FORMAT],
  ], signal);
  if (result.code !== 0) {
    const err = tmuxError(`inspect pane "${id}"`, result);
    if (err.code === "pane_not_found") return null;
    throw err;
  }
  const at = result.stdout.lastIndexOf(`\n${GS}`);
  const rows = at < 0 ? result.stdout : result.stdout.slice(0, at + 1);
  const row = parsePaneRows(rows).find((r) => r.paneId === id);
  if (!row) return null;
  const info = toInfo(row);
  if (at >= 0) info.token = parseTokenLine(result.stdout.slice(at + 2));
  return info;
}

/**
 * Lists the panes of every session of the server that carry muxbridge's ownership marks.
 *
 * @param tmux The backend's command runner.
 * @param signal Aborts the call.
 * @returns The marked panes.
 * @throws {MuxError} What tmux answered.
 */
export async function ownedPanes(tmux: TmuxCommand, signal?: AbortSignal): Promise<PaneInfo[]> {
  const stdout = await tmux.must(
    "list muxbridge's panes",
    [["list-panes", "-a", "-F", PANE_FORMAT]],
    signal,
  );
  return parsePaneRows(stdout).filter(isMarked).map(toInfo);
}

/**
 * Panes whose start command carries the token (`#{m:…}` matches it inside tmux).
 *
 * @param tmux The backend's command runner.
 * @param token The spawn token.
 * @param signal Aborts the call.
 * @returns The matching panes (id, whether dead, pid).
 * @throws {MuxError} What tmux answered.
 */
export async function spawnedPanes(
  tmux: TmuxCommand,
  token: string,
  signal?: AbortSignal,
): Promise<PaneInfo[]> {
  const match = `#{m:*${tokenMarker(token)}*,#{pane_start_command}}`;
  const stdout = await tmux.must(
    "find the pane of a lost spawn",
    [["list-panes", "-a", "-F", `#{pane_id}\t#{pane_dead}\t#{pane_pid}\t${match}`]],
    signal,
  );
  return stdout.split("\n").flatMap((line) => {
    const [paneId, dead, pid, matched] = line.split("\t");
    if (matched !== "1" || !PANE_ID.test(paneId ?? "")) return [];
    const info: PaneInfo = { paneId: tmuxPaneId(paneId), dead: dead === "1" };
    if (/^\d+$/.test(pid ?? "")) info.pid = Number(pid);
    return [info];
  });
}
