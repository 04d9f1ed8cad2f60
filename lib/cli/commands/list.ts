/**
 * `muxbridge list`: the panes muxbridge owns, from its durable records, each with its child's
 * live state and how long it has been in it (the bridge records the state at most once a second
 * per pane, as its pane shows it). Plain output is a table for people (the owner as a pid and
 * its program); `--json` is the contract's array, the owner as its stamp.
 *
 * @module
 */

import { basename } from "node:path";
import { isPending } from "../../session/lost_spawns.ts";
import type { PaneRecord } from "../../session/pane_store.ts";
import { ownerAlive } from "../../sys/processes.ts";
import type { CliDeps, Command } from "./_command.ts";
import { renderTable, truncate } from "./_table.ts";
import { loadConfig, paneStore } from "./_context.ts";

/** One row of `list --json` (the contract's six fields first). */
export interface ListRow {
  /** The child session. */
  sessionId: string;
  /** The pane's id in its backend. */
  paneId: string;
  /** The backend's name. */
  backend: string;
  /** The pane's title (the session's, cleaned). */
  title: string;
  /** When the pane opened (ISO time). */
  openedAt: string;
  /** `cli`, or the `<pid>:<start>` stamp of the bridge that opened it. */
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
  /** Every attempt to close the pane failed. */
  stuck?: true;
}

/** The widest title `list` shows, in terminal columns; a longer one ends in `…`. */
const TITLE_COLUMNS = 40;

/** The `list` command. */
export const listCommand: Command = {
  name: "list",
  summary: "List the panes muxbridge owns, with each child's live state",
  usage: "muxbridge list [--json]",
  help: [
    "Reads the records under the state directory ($MUXBRIDGE_STATE_DIR, else",
    "$XDG_STATE_HOME/muxbridge): one row per owned pane, oldest first, with the child session,",
    "its title, the pane (backend and id), the child's live state (busy, retry N, idle, error,",
    "waiting (permission) or (question) for you, failed (exit N), unknown), how long it has been",
    "in it, and the owner: the bridge's pid and program while it runs, `(ended)` once it is gone,",
    "`muxbridge spawn` for a pane opened by hand. --json adds the opening time, the state's start",
    "and more (one object per pane).",
    "",
    "Example:",
    "  muxbridge list",
    ...exampleOutput().map((line) => `  ${line}`),
  ].join("\n"),
  flags: {},
  positionals: [0, 0],
  json: true,
  async run(inv, deps) {
    const config = loadConfig(inv.global, deps);
    const { records, corrupt } = paneStore(config, deps).list();
    for (const c of corrupt) deps.log.warn(`set aside unreadable record ${c.file}: ${c.reason}`);
    const now = deps.clock.now();
    // A pending record is a spawn without a pane (yet): `cleanup` resolves it.
    const rows = records.filter((r) => !isPending(r)).map((r) => row(r, now))
      .sort((a, b) =>
        a.openedAt.localeCompare(b.openedAt) || a.sessionId.localeCompare(b.sessionId)
      );
    if (inv.global.json) return { json: rows, text: "" };
    const owners = new Map<string, string>();
    for (const r of rows) {
      if (!owners.has(r.owner)) owners.set(r.owner, await ownerText(r.owner, deps));
    }
    return { json: rows, text: listText(rows, owners) };
  },
};

/** What `list` prints for one busy pane (the help's example, from the code that prints it). */
function exampleOutput(): string[] {
  const row: ListRow = {
    sessionId: "ses_abc123",
    paneId: "%5",
    backend: "example", // not shown in the table
    title: "review",
    openedAt: "2026-08-30T12:00:00.000Z",
    owner: "6995:227182",
    state: "busy",
    since: "2026-08-30T12:00:00.000Z",
    forMs: 12_000,
  };
  return listText([row], new Map([[row.owner, "6995 muxbridge"]])).trimEnd().split("\n");
}

/**
 * The plain `list` output: a header and one aligned row per pane, or `no owned panes`.
 *
 * @param rows The panes, in the order shown.
 * @param owners How to show each owner stamp (`6995 muxbridge`); the stamp itself otherwise.
 * @returns The text.
 */
export function listText(rows: readonly ListRow[], owners: ReadonlyMap<string, string>): string {
  if (rows.length === 0) return "no owned panes\n";
  const table = renderTable(
    ["SESSION", "TITLE", "PANE", "STATE", "FOR", "OWNER"],
    rows.map((r) => [
      r.sessionId,
      r.title === "" ? "-" : truncate(r.title, TITLE_COLUMNS),
      `${r.backend} ${r.paneId}`,
      `${stateText(r)}${r.stuck ? " (stuck)" : ""}`,
      r.forMs === undefined ? "-" : duration(r.forMs),
      owners.get(r.owner) ?? r.owner,
    ]),
  );
  const stuck = rows.some((r) => r.stuck)
    ? "(stuck): every attempt to close the pane failed; `muxbridge cleanup` tries again\n"
    : "";
  return table + stuck;
}

/**
 * An owner stamp for people: `muxbridge spawn` for `cli`; `<pid> <program>` while that very
 * process runs (same pid and start); `<pid> (ended)` once it is gone or its pid was reused.
 */
async function ownerText(stamp: string, deps: CliDeps): Promise<string> {
  if (stamp === "cli") return "muxbridge spawn";
  const pid = Number(stamp.slice(0, stamp.indexOf(":")));
  if (!ownerAlive(deps.processes, stamp)) return `${pid} (ended)`;
  const program = await programName(pid, deps);
  return program ? `${pid} ${program}` : String(pid);
}

/**
 * A running process's program name: Linux's `/proc/<pid>/comm`, else `ps -o comm=` (macOS),
 * undefined when neither answers.
 */
async function programName(pid: number, deps: CliDeps): Promise<string | undefined> {
  try {
    const comm = deps.readText(`/proc/${pid}/comm`)?.trim();
    if (comm) return comm;
  } catch {
    // Unreadable: ask ps.
  }
  try {
    const r = await deps.run(["ps", "-o", "comm=", "-p", String(pid)], {
      timeoutMs: 5_000,
      signal: deps.signal,
    });
    const name = r.code === 0 ? basename(r.stdout.trim()) : "";
    return name === "" ? undefined : name;
  } catch {
    return undefined;
  }
}

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

/** `busy`, `retry 2`, `waiting (permission)`, `failed (exit 1)`, `unknown`. */
function stateText(r: ListRow): string {
  if (r.state === "retry" && r.attempt) return `retry ${r.attempt}`;
  if (r.state === "failed" && r.exitCode !== undefined) return `failed (exit ${r.exitCode})`;
  if (r.state === "waiting" && r.waitingFor !== undefined) return `waiting (${r.waitingFor})`;
  return r.state;
}

/** A duration as `45s`, `3m05s` or `2h07m`. */
function duration(ms: number): string {
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${String(s % 60).padStart(2, "0")}s`;
  return `${Math.floor(m / 60)}h${String(m % 60).padStart(2, "0")}m`;
}
