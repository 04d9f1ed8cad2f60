/**
 * An in-memory pane store and a process seam for loop tests.
 *
 * @module
 */

import { type PaneRecord, PaneRecordSchema, type PaneStore } from "../../lib/session/pane_store.ts";
import type { Processes } from "../../lib/sys/processes.ts";

/** A store over a map. */
export function createMemoryStore(): PaneStore & {
  records: Map<string, PaneRecord>;
  /** Failed exits reported by pane programs, by spawn token (a test sets them). */
  exitCodes: Map<string, number>;
} {
  const records = new Map<string, PaneRecord>();
  const exitCodes = new Map<string, number>();
  const key = (backend: string, paneId: string) => `${backend}\0${paneId}`;
  return {
    dir: "/memory",
    records,
    // Checked as the real store checks it.
    put: (r) => void records.set(key(r.backend, r.paneId), PaneRecordSchema.parse(r)),
    remove: (backend, paneId) => void records.delete(key(backend, paneId)),
    list: () => ({ records: [...records.values()], corrupt: [] }),
    exitCodes,
    exitFile: (token) => `/memory/exits/${token}`,
    exits: () => new Map(exitCodes),
    removeExit: (token) => void exitCodes.delete(token),
  };
}

/** The fake process seam and its controls. */
export interface FakeProcesses extends Processes {
  /** Signals sent, as `SIGTERM -777` (group) or `SIGKILL 778` (one process). */
  signals: string[];
  /** Live pids. */
  living: Set<number>;
  /** The group (and session) leader of a pid that is not its own leader. */
  leaders: Map<number, number>;
  /** Start stamps by pid (default "100"). */
  starts: Map<number, string>;
  /** Signals each pid survives (SIGKILL too, as a process stuck in the kernel does). */
  ignores: Map<number, Set<string>>;
  /** Environments by pid (none: unreadable). */
  environs: Map<number, Record<string, string>>;
}

/** A process seam where the given pids are alive and signals are recorded. */
export function fakeProcesses(alive: Iterable<number> = []): FakeProcesses {
  const living = new Set(alive);
  const leaders = new Map<number, number>();
  const starts = new Map<number, string>();
  const ignores = new Map<number, Set<string>>();
  const environs = new Map<number, Record<string, string>>();
  const signals: string[] = [];
  const members = (leader: number) =>
    [...living].filter((p) => p === leader || leaders.get(p) === leader);
  const deliver = (pid: number, sig: string) => {
    if (!ignores.get(pid)?.has(sig)) living.delete(pid);
  };
  return {
    selfPid: 4242,
    living,
    leaders,
    starts,
    ignores,
    environs,
    signals,
    alive: (pid) => living.has(pid),
    startTime: (pid) => (living.has(pid) ? starts.get(pid) ?? "100" : undefined),
    signal(pid, sig, group) {
      signals.push(`${sig} ${group ? -pid : pid}`);
      for (const p of group ? members(pid) : [pid]) deliver(p, sig);
    },
    members,
    environ: (pid) => (living.has(pid) ? environs.get(pid) : undefined),
  };
}
