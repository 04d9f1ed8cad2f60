/**
 * Whether a live pane is provably the one a record names: the rule cleanup, adoption and
 * `muxbridge close` apply before they act on a recorded pane. An id that exists proves nothing: a
 * restarted tmux server hands out `%1` again, a new kitty counts its windows from 1 again. So a
 * recorded pane is the live one only when
 *
 * 1. the multiplexer is the instance the pane was opened on (`lib/backend/instance.ts`: same
 *    socket, and the same server process by pid and start stamp, or whatever else the backend
 *    can tell), and
 * 2. the pane's program is the recorded program: it carries the spawn token the pane was opened
 *    with (its start command, its environment, as the backend reads it), or its pid is the
 *    recorded pid with the recorded start stamp where the multiplexer itself names that pid, or
 *    the backend's ids are never reused (cmux's UUIDs), which makes the id itself the proof.
 *
 * Each backend declares which of these it can show (`Backend.ownership`, in its own folder).
 * Anything else is unprovable: the caller leaves the pane alone and retires the record.
 *
 * @module
 */

import type { Backend, PaneInfo } from "../backend/backend.ts";
import { currentInstance, instanceDiffers, type RecordedInstance } from "../backend/instance.ts";
import { SPAWN_TOKEN_VAR } from "../backend/spawn_token.ts";
import type { Processes } from "../sys/processes.ts";
import type { PaneRecord } from "./pane_store.ts";

/** What {@linkcode provePane} found. */
export type PaneProof =
  /** The live pane is the recorded one; `by` says what showed it. */
  | { readonly proven: true; readonly by: string }
  /**
   * It is not, or cannot be shown to be; `reason` says why. `legacy`: the record predates
   * instances (written by an older muxbridge).
   */
  | { readonly proven: false; readonly reason: string; readonly legacy?: boolean };

/** What {@linkcode provePane} works with. */
export interface ProofDeps {
  /** The process seam (start stamps, environments). */
  processes: Processes;
  /**
   * The backend's instance now (one read per pass for many records).
   * @default `currentInstance(backend, processes)`
   */
  instance?: () => Promise<RecordedInstance | null>;
  /** Aborts the calls. */
  signal?: AbortSignal;
}

/** Why a record without an instance is never acted on (logged once per pass). */
export const LEGACY_REASON =
  "its record names no multiplexer instance (written by an older muxbridge), so the pane cannot be shown to be the one it opened";

/**
 * Decides whether a live pane is provably the recorded one.
 *
 * @param backend The record's backend.
 * @param record The record (an open pane, not a pending spawn).
 * @param live What `inspect` reported of the pane now.
 * @param deps Processes, the instance now, a signal.
 * @returns Proven (and by what), or why not.
 * @throws {MuxError} When the backend cannot be asked (its instance, the pane's program): then
 *   nothing is decided and the record stays.
 */
export async function provePane(
  backend: Backend,
  record: PaneRecord,
  live: PaneInfo,
  deps: ProofDeps,
): Promise<PaneProof> {
  if (record.instance === undefined) return { proven: false, reason: LEGACY_REASON, legacy: true };
  const now = await (deps.instance?.() ??
    currentInstance(backend, deps.processes, deps.signal));
  if (now === null) {
    return {
      proven: false,
      reason: `${backend.name} cannot tell which instance it talks to now`,
    };
  }
  const differs = instanceDiffers(record.instance, now);
  if (differs !== null) {
    return {
      proven: false,
      reason: `the ${backend.name} it talks to is not the one the pane opened on: ${differs}`,
    };
  }
  const shown = backend.paneProgram
    ? { ...live, ...(await backend.paneProgram(record.paneId, deps.signal)) }
    : live;
  const token = record.token;
  if (token !== undefined && shown.token === token) {
    return { proven: true, by: "it carries the pane's spawn token" };
  }
  if (token !== undefined && shown.token !== undefined) {
    return {
      proven: false,
      reason: shown.token === null
        ? "it carries no spawn token: another program runs in it"
        : "it carries another spawn token: another program runs in it",
    };
  }
  const pid = shown.pid;
  if (
    pid !== undefined && backend.ownership.pid === "multiplexer" && pid === record.pid &&
    record.pidStart !== undefined && deps.processes.startTime(pid) === record.pidStart
  ) {
    return { proven: true, by: `its program is the recorded process (pid ${pid})` };
  }
  if (token !== undefined && pid !== undefined && carriesToken(deps.processes, pid, token)) {
    return { proven: true, by: `its program (pid ${pid}) carries the pane's spawn token` };
  }
  if (backend.ownership.uniqueIds) {
    return { proven: true, by: `${backend.name} never hands out its id to another pane` };
  }
  return {
    proven: false,
    reason: pid !== undefined && record.pid !== undefined && pid !== record.pid
      ? `its program is another process (pid ${pid}; the recorded one was ${record.pid})`
      : "its program cannot be shown to be the recorded one",
  };
}

/**
 * Whether a process's environment carries a spawn token (`MUXBRIDGE_SPAWN_TOKEN`): it is the
 * program a pane opened with that token started, or was started by it.
 *
 * @param processes The process seam.
 * @param pid The process.
 * @param token The spawn token.
 * @returns Whether its environment could be read and carries the token.
 */
export function carriesToken(processes: Processes, pid: number, token: string): boolean {
  return processes.environ(pid)?.[SPAWN_TOKEN_VAR] === token;
}

/**
 * The recorded program of a pane, when it still runs and is provably that program: same pid and
 * start stamp, and, where the backend's pids are another program's word
 * (`ownership.pid: "claimed"`), its environment carries the pane's spawn token.
 *
 * @param backend The record's backend.
 * @param record The record.
 * @param processes The process seam.
 * @returns Its pid and start stamp, or undefined.
 */
export function recordedProgram(
  backend: Backend,
  record: Pick<PaneRecord, "pid" | "pidStart" | "token">,
  processes: Processes,
): { pid: number; start: string } | undefined {
  const { pid, pidStart, token } = record;
  if (pid === undefined || pidStart === undefined) return undefined;
  if (!processes.alive(pid) || processes.startTime(pid) !== pidStart) return undefined;
  if (backend.ownership.pid !== "multiplexer") {
    if (token === undefined || !carriesToken(processes, pid, token)) return undefined;
  }
  return { pid, start: pidStart };
}
