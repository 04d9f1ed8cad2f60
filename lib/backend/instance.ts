/**
 * The multiplexer instance a pane was opened on, as a record keeps it, and whether the instance
 * a backend reports now is that one. A backend tells what it can of its instance
 * ({@linkcode Backend.instance}: a socket, a server pid, a start time); this adds the server's
 * start stamp from the process table (`lib/sys/processes.ts`), so a later server that got the
 * same pid is told apart too.
 *
 * Two readings name the same instance only when every fact either reading has, the other has
 * too and agrees with: a fact one side lacks proves nothing, so it is not the same (never closed
 * on a guess).
 *
 * @module
 */

import type { Processes } from "../sys/processes.ts";
import type { Backend, Instance } from "./backend.ts";

/** An instance as a record keeps it: the backend's facts and its server's start stamp. */
export interface RecordedInstance {
  /** Where it is reached ({@linkcode Instance.address}). */
  address: string;
  /** Its server's pid. */
  pid?: number;
  /** That pid's start stamp (`Processes.startTime`) when it was read. */
  pidStart?: string;
  /** When its server started, `[earliest, latest]` seconds since the epoch. */
  startedAt?: [number, number];
  /** The backend's opaque stamp. */
  stamp?: string;
}

/**
 * Turns what a backend reports into what a record keeps.
 *
 * @param facts The backend's instance.
 * @param processes The process seam (the server's start stamp).
 * @returns The instance to record.
 *
 * @example
 * ```ts
 * import { createProcesses } from "../sys/processes.ts";
 * import { recordInstance } from "./instance.ts";
 * const p = createProcesses();
 * recordInstance({ address: "/tmp/tmux-1000/default", pid: p.selfPid }, p).pidStart !== undefined;
 * // true on Linux
 * ```
 */
export function recordInstance(facts: Instance, processes: Processes): RecordedInstance {
  const out: RecordedInstance = { address: facts.address };
  if (facts.pid !== undefined) {
    out.pid = facts.pid;
    const start = processes.startTime(facts.pid);
    if (start !== undefined) out.pidStart = start;
  }
  if (facts.startedAt !== undefined) out.startedAt = [facts.startedAt[0], facts.startedAt[1]];
  if (facts.stamp !== undefined) out.stamp = facts.stamp;
  return out;
}

/** Instances read before, by backend, while their server (by pid and start stamp) runs. */
const known = new WeakMap<Backend, RecordedInstance>();

/**
 * The instance a backend talks to now, as a record keeps it. A server named by pid and start
 * stamp is read once and then re-checked in the process table only (no call): while that very
 * process runs, the instance is the same. Anything else is asked each time.
 *
 * @param backend The backend.
 * @param processes The process seam.
 * @param signal Aborts the call.
 * @returns The instance, or null when the backend cannot tell.
 * @throws {MuxError} What the backend throws when it cannot ask its multiplexer.
 */
export async function currentInstance(
  backend: Backend,
  processes: Processes,
  signal?: AbortSignal,
): Promise<RecordedInstance | null> {
  const cached = known.get(backend);
  if (
    cached?.pid !== undefined && cached.pidStart !== undefined &&
    processes.alive(cached.pid) && processes.startTime(cached.pid) === cached.pidStart
  ) {
    return cached;
  }
  known.delete(backend);
  const facts = await backend.instance(signal);
  if (facts === null) return null;
  const read = recordInstance(facts, processes);
  if (read.pid !== undefined && read.pidStart !== undefined) known.set(backend, read);
  return read;
}

/**
 * Why an instance is not provably the recorded one, or null when it is.
 *
 * @param recorded The instance in the record.
 * @param now The instance the backend reports now.
 * @returns The reason, in words a log line can carry, or null: the same instance.
 *
 * @example
 * ```ts
 * import { instanceDiffers } from "./instance.ts";
 * instanceDiffers(
 *   { address: "/tmp/tmux-1000/default", pid: 10, pidStart: "500" },
 *   { address: "/tmp/tmux-1000/default", pid: 11, pidStart: "900" },
 * );
 * // "its server is another process (pid 10 when the pane opened, now 11)"
 * ```
 */
export function instanceDiffers(recorded: RecordedInstance, now: RecordedInstance): string | null {
  if (recorded.address !== now.address) {
    return `it answers at ${JSON.stringify(now.address)}, the pane opened on ${
      JSON.stringify(recorded.address)
    }`;
  }
  const missing = (what: string) =>
    `its ${what} is known on one side only: it cannot be shown to be the same server`;
  if ((recorded.pid === undefined) !== (now.pid === undefined)) return missing("server pid");
  if (recorded.pid !== undefined && recorded.pid !== now.pid) {
    return `its server is another process (pid ${recorded.pid} when the pane opened, now ${now.pid})`;
  }
  if (recorded.pid !== undefined) {
    if ((recorded.pidStart === undefined) !== (now.pidStart === undefined)) {
      return missing("server's start stamp");
    }
    if (recorded.pidStart !== now.pidStart) {
      return `its server is a later process with the same pid ${recorded.pid} (started ${recorded.pidStart}, now ${now.pidStart})`;
    }
  }
  if ((recorded.startedAt === undefined) !== (now.startedAt === undefined)) {
    return missing("start time");
  }
  if (recorded.startedAt && now.startedAt) {
    const [a0, a1] = recorded.startedAt;
    const [b0, b1] = now.startedAt;
    if (a1 < b0 || b1 < a0) {
      return `it was started again (at ${isoSeconds(b0)}; the pane opened on the one started at ${
        isoSeconds(a0)
      })`;
    }
  }
  if ((recorded.stamp === undefined) !== (now.stamp === undefined)) return missing("stamp");
  if (recorded.stamp !== now.stamp) {
    return `it is another instance (${JSON.stringify(now.stamp)}; the pane opened on ${
      JSON.stringify(recorded.stamp)
    })`;
  }
  return null;
}

function isoSeconds(s: number): string {
  return new Date(s * 1000).toISOString().replace(".000Z", "Z");
}
