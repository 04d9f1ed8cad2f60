/**
 * Private to the tmux backend: what proves a pane is the one muxbridge recorded
 * (docs/backends/tmux.md §13). A pane id is unique only in one server's life: `kill-server` and a
 * new server on the same socket start again at `%0`. So the instance is the server, named by
 * its socket path, its pid and its start time (`#{socket_path}`, `#{pid}`, `#{start_time}`; the
 * shared code adds the pid's start stamp from the process table), and the pane's program shows
 * its spawn token in the start command tmux keeps (`#{pane_start_command}`, where
 * `tokenArgv` put it), besides the pid tmux itself started (`#{pane_pid}`).
 *
 * @module
 */

import type { Instance } from "../../lib/backend/backend.ts";
import { SPAWN_TOKEN } from "../../lib/backend/spawn_token.ts";
import { unparseableOutput } from "../../lib/sys/parse_output.ts";
import type { TmuxCommand } from "./_command.ts";

/** Starts the token line after a pane's row (ASCII group separator). */
export const GS = "\x1d";

/**
 * A format that prints the spawn token in a pane's start command, or nothing: tmux matches the
 * marker (`m/r`, a POSIX regular expression) and cuts the token out (`s/…/\1/`) itself, so no
 * free text of the start command ever reaches muxbridge's parsers. (Braces cannot appear in the
 * expression: they close the format; `+` stands in for `{32}`, the length is checked after.)
 */
export const TOKEN_FORMAT = GS +
  "#{?#{m/r:muxbridge-spawn=[0-9a-f]+,#{pane_start_command}}," +
  "#{s/.*muxbridge-spawn=([0-9a-f]+).*/\\1/:pane_start_command},}";

/**
 * Reads the token line {@linkcode TOKEN_FORMAT} printed.
 *
 * @param line What followed {@linkcode GS}.
 * @returns The token, or null when the start command carries none.
 */
export function parseTokenLine(line: string): string | null {
  const text = line.trim();
  return SPAWN_TOKEN.test(text) ? text : null;
}

/** The format of the server's identity line. */
const SERVER_FORMAT = "#{socket_path}\t#{pid}\t#{start_time}";

/**
 * The server muxbridge talks to (docs/backends/tmux.md §13).
 *
 * @param tmux The backend's command runner.
 * @param signal Aborts the call.
 * @returns Its socket path, pid and start second.
 * @throws {MuxError} What tmux answered (no server: `backend_unreachable`), or
 *   `unparseable_output`.
 */
export async function serverInstance(tmux: TmuxCommand, signal?: AbortSignal): Promise<Instance> {
  const stdout = await tmux.must(
    "read the server's identity",
    [["display-message", "-p", SERVER_FORMAT]],
    signal,
  );
  const m = /^(\/[^\t\n]*)\t(\d+)\t(\d+)\n?$/.exec(stdout);
  if (!m) throw unparseableOutput("tmux", "server identity", stdout, "tmux -V");
  const started = Number(m[3]);
  return { address: m[1], pid: Number(m[2]), startedAt: [started, started] };
}
