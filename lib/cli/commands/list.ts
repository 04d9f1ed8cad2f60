/**
 * `muxbridge list`: the panes muxbridge owns, from its durable records, each with its child's
 * live state and how long it has been in it (the bridge records the state at most once a second
 * per pane, as its pane shows it).
 *
 * @module
 */

import { isPending } from "../../session/lost_spawns.ts";
import type { PaneRecord } from "../../session/pane_store.ts";
import type { Command } from "./_command.ts";
import { loadConfig, paneStore } from "./_context.ts";

/** One row of `list --json`. */
interface ListRow {
  sessionId: string;
  paneId: string;
  backend: string;
  title: string;
  openedAt: string;
  owner: string;
  /**
   * The child's state: busy, retry, idle, error, waiting (for the user), failed, or unknown (never
   * recorded).
   */
  state: string;
  /** When it entered the state (absent for unknown). */
  since?: string;
  /** How long it has been in it, in milliseconds (absent for unknown). */
  forMs?: number;
  /** For waiting: what the child asks the user for (`permission`, `question`). */
  waitingFor?: string;
  /** For retry: the attempt (0: not known). */
  attempt?: number;
  /** For failed: the exit code of the pane's program. */
  exitCode?: number;
  stuck?: true;
}

/** The `list` command. */
export const listCommand: Command = {
  name: "list",
  summary: "List the panes muxbridge owns, with each child's live state",
  usage: "muxbridge list [--json]",
  help: [
    "Reads the records under the state directory ($MUXBRIDGE_STATE_DIR, else",
    "$XDG_STATE_HOME/muxbridge): one line per owned pane with its backend, pane id, child",
    "session, live state (busy, retry N, idle, error, waiting (permission|question) for you,",
    "failed) and how long it has been in it, owner, opening time and title.",
    "",
    "Example:",
    "  muxbridge list --json",
  ].join("\n"),
  flags: {},
  positionals: [0, 0],
  json: true,
  run(inv, deps) {
    const config = loadConfig(inv.global, deps);
    const { records, corrupt } = paneStore(config, deps).list();
    for (const c of corrupt) deps.log.warn(`set aside unreadable record ${c.file}: ${c.reason}`);
    const now = deps.clock.now();
    // A pending record is a spawn without a pane (yet): `cleanup` resolves it.
    const rows = records.filter((r) => !isPending(r)).map((r) => row(r, now));
    const text = rows.length === 0 ? "no owned panes\n" : rows.map((r) =>
      [
        r.backend,
        r.paneId,
        r.sessionId,
        stateText(r),
        r.owner,
        r.openedAt,
        `${JSON.stringify(r.title)}${r.stuck ? "\tSTUCK" : ""}`,
      ].join("\t")
    ).join("\n") + "\n";
    return Promise.resolve({ json: rows, text });
  },
};

function row(r: PaneRecord, now: number): ListRow {
  const s = r.status;
  const since = s ? Date.parse(s.since) : NaN;
  return {
    sessionId: r.sessionId,
    paneId: r.paneId,
    backend: r.backend,
    title: r.title,
    openedAt: r.openedAt,
    owner: r.owner,
    state: s?.state ?? "unknown",
    ...(s ? { since: s.since, forMs: Math.max(0, now - since) } : {}),
    ...(s?.waitingFor === undefined ? {} : { waitingFor: s.waitingFor }),
    ...(s?.attempt === undefined ? {} : { attempt: s.attempt }),
    ...(s?.exitCode === undefined ? {} : { exitCode: s.exitCode }),
    ...(r.stuck ? { stuck: true as const } : {}),
  };
}

/** `busy 12s`, `retry 2 3m05s`, `waiting (permission) 40s`, `failed (exit 1) 8s`, `unknown`. */
function stateText(r: ListRow): string {
  const what = r.state === "retry" && r.attempt
    ? `retry ${r.attempt}`
    : r.state === "failed" && r.exitCode !== undefined
    ? `failed (exit ${r.exitCode})`
    : r.state === "waiting" && r.waitingFor !== undefined
    ? `waiting (${r.waitingFor})`
    : r.state;
  return r.forMs === undefined ? what : `${what} ${duration(r.forMs)}`;
}

/** A duration as `45s`, `3m05s` or `2h07m`. */
function duration(ms: number): string {
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${String(s % 60).padStart(2, "0")}s`;
  return `${Math.floor(m / 60)}h${String(m % 60).padStart(2, "0")}m`;
}
