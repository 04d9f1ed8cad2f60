/**
 * An in-memory pane store and a process seam for loop tests.
 *
 * @module
 */

import type { PaneRecord, PaneStore } from "../../lib/pane_store.ts";
import type { Processes } from "../../lib/processes.ts";

/** A store over a map. */
export function createMemoryStore(): PaneStore & { records: Map<string, PaneRecord> } {
  const records = new Map<string, PaneRecord>();
  const key = (backend: string, paneId: string) => `${backend}\0${paneId}`;
  return {
    dir: "/memory",
    records,
    put: (r) => void records.set(key(r.backend, r.paneId), structuredClone(r)),
    remove: (backend, paneId) => void records.delete(key(backend, paneId)),
    list: () => ({ records: [...records.values()], corrupt: [] }),
  };
}

/** A process seam where the given pids are alive and signals are recorded. */
export function fakeProcesses(
  alive: Iterable<number> = [],
): Processes & { signals: string[]; living: Set<number> } {
  const living = new Set(alive);
  const signals: string[] = [];
  return {
    selfPid: 4242,
    living,
    signals,
    alive: (pid) => living.has(pid),
    startTime: () => "100",
    signal(pid, sig, group) {
      signals.push(`${sig} ${group ? -pid : pid}`);
      if (sig === "SIGKILL") living.delete(pid);
    },
  };
}
