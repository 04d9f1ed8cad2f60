/**
 * Spawns that may leave a pane behind. A spawn can fail after the multiplexer made the pane: the
 * call timed out and the multiplexer carried it out later, its output was unreadable, muxbridge
 * was killed between the split and its record. So every spawn is recorded *before* it runs: a
 * pending record (`state: "pending"`, a fresh spawn token, the session, the owner, the server)
 * that makes whatever pane carries the token muxbridge's. The backend puts the token on the pane
 * in the command that creates it (`SpawnRequest.token`, `Backend.findSpawned`).
 *
 * When the spawn succeeds, the caller replaces the pending record by the pane's record. When it
 * fails, {@linkcode resolveLostSpawn} looks for the token's pane at once, closes what it finds
 * and removes the record; a failure the multiplexer may still act on keeps the record, and its
 * owner looks again later (the bridge on each pane-watch tick and at `bye`), as do `cleanup`
 * and a starting bridge once that owner is gone.
 *
 * A found pane is closed, not adopted: it may be half made (tmux: no title or marks yet; herdr:
 * a shell whose launch line was never typed), and the failure was already reported. The child's
 * next busy signal opens a fresh pane.
 *
 * @module
 */

import type { Backend, SpawnedPane, SpawnRequest } from "../backend/backend.ts";
import type { Clock } from "../sys/clock.ts";
import { type ErrorCode, isMuxError, toMuxError } from "../sys/errors.ts";
import type { Logger } from "../sys/log.ts";
import type { Processes } from "../sys/processes.ts";
import { newSpawnToken } from "../backend/spawn_token.ts";
import { validatePaneId } from "../sys/validate.ts";
import { closePane } from "./close_pane.ts";
import { currentInstance, type RecordedInstance } from "../backend/instance.ts";
import type { PaneRecord, PaneStore } from "./pane_store.ts";

/** A pending record: a spawn in flight, or one whose answer was lost. */
export type PendingRecord = PaneRecord & { state: "pending"; token: string };

/** A failed spawn whose pane may still show up. */
export interface LostSpawn {
  /** The backend it ran on. */
  readonly backend: Backend;
  /** Its pending record. */
  readonly record: PendingRecord;
}

/**
 * Whether a record is a pending spawn rather than an open pane.
 *
 * @param record A record from the store.
 * @returns Whether it is pending.
 */
export function isPending(record: PaneRecord): record is PendingRecord {
  return record.state === "pending" && record.token !== undefined;
}

/** What a lost spawn's resolution needs. */
export interface LostSpawnDeps {
  /** The record store. */
  store: PaneStore;
  /** The clock (closes wait on it). */
  clock: Clock;
  /** The process seam (a closed pane's program is checked). */
  processes: Processes;
  /** `close_grace_ms`. */
  graceMs: number;
  /** `survivor_grace_ms`. @default graceMs */
  survivorGraceMs?: number;
  /** Logs. */
  log: Logger;
}

/** The fields of the pending record that describe the spawn (the rest is filled in). */
export type SpawnRecordFields = Pick<
  PaneRecord,
  "sessionId" | "title" | "owner" | "openedAt" | "server" | "directory"
>;

/** What {@linkcode resolveLostSpawn} did. */
export type LostSpawnOutcome =
  /** The token's panes were closed and the record removed. */
  | { readonly kind: "closed"; readonly panes: readonly string[] }
  /** No pane carries the token; `kept` tells whether the record stays for a later look. */
  | { readonly kind: "none"; readonly kept: boolean }
  /** The panes could not be listed or closed; the record stays. */
  | { readonly kind: "unresolved"; readonly reason: string };

/**
 * Failures after which the multiplexer certainly made no pane: it refused before creating one,
 * or nothing ran. Any other failure (a timeout, unreadable output, an unknown error) may have
 * left one, now or later.
 */
const NOTHING_MADE: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  "usage",
  "invalid_config",
  "no_backend",
  "binary_not_found",
  "unsupported_version",
  "no_space",
  "invalid_argument",
  "not_owned",
  "auth_unsupported",
  "pane_not_found",
  // No server (or it died): a pane it made went with it.
  "backend_unreachable",
]);

/**
 * Whether a failed spawn may still leave a pane (so its record stays until a later look).
 *
 * @param err What the spawn threw.
 * @returns False when the multiplexer certainly made nothing.
 */
export function mayStillAppear(err: unknown): boolean {
  return !NOTHING_MADE.has(toMuxError(err).code);
}

/** What {@linkcode spawnRecorded} returns. */
export type RecordedSpawn =
  /**
   * The pane opened; the caller records it with `instance` (the multiplexer instance it opened
   * on, null when the backend could not tell), then removes `pending`.
   */
  | {
    readonly ok: true;
    readonly pane: SpawnedPane;
    readonly pending: PendingRecord;
    readonly instance: RecordedInstance | null;
  }
  /**
   * The spawn failed with `error`; `outcome` says what the immediate look found. A record that
   * is still there (`none` kept, `unresolved`) is the caller's to look at again later.
   */
  | {
    readonly ok: false;
    readonly error: unknown;
    readonly outcome: LostSpawnOutcome;
    readonly pending: PendingRecord;
  };

/**
 * Runs one spawn with its pending record written first, and resolves the record at once when
 * the spawn fails. On success the caller writes the pane's own record, then removes the
 * pending one (`store.remove(backend.name, pending.paneId)`).
 *
 * @param backend The backend.
 * @param req The request (its `token` is set here).
 * @param fields The spawn's session, title, owner, server and directory.
 * @param deps Store, clock, processes, grace, log.
 * @param token The spawn token, when the caller needed it first (the pane's exit file is
 *   named by it). @default a new one
 * @returns The pane, or the failure and what was done about a pane it may have left.
 */
export async function spawnRecorded(
  backend: Backend,
  req: Omit<SpawnRequest, "token">,
  fields: SpawnRecordFields,
  deps: LostSpawnDeps,
  token: string = newSpawnToken(),
): Promise<RecordedSpawn> {
  const pending: PendingRecord = {
    ...fields,
    backend: backend.name,
    paneId: validatePaneId(`pending:${token}`),
    state: "pending",
    token,
  };
  try {
    deps.store.put(pending);
  } catch (err) {
    // Without the record a pane found later could not be claimed by another process; this
    // process still holds the token and resolves a failure below.
    deps.log.warn(`cannot record spawn of ${fields.sessionId}: ${(err as Error).message}`);
  }
  // The spawn goes first (a provider may answer one request at a time); the instance the pane
  // opens on is read beside it (a tmux server is asked once, then only looked up in the process
  // table: `currentInstance`).
  const spawning = backend.spawn({ ...req, token });
  const instance = currentInstance(backend, deps.processes, req.signal).catch((err) => {
    deps.log.warn(
      `${fields.sessionId}: cannot tell which ${backend.name} instance the pane opens on (${
        (err as Error).message
      }); a later cleanup will leave it alone`,
    );
    return null;
  });
  try {
    // The pane id is a PaneId already: the backend made it from its multiplexer's answer, in
    // its own form (`checkPaneId`).
    const pane = await spawning;
    return { ok: true, pane, pending, instance: await instance };
  } catch (error) {
    await instance;
    if (!mayStillAppear(error)) {
      forgetRecord(pending, deps);
      return { ok: false, error, outcome: { kind: "none", kept: false }, pending };
    }
    const outcome = await resolveLostSpawn(backend, pending, deps, false);
    if (outcome.kind === "closed") {
      deps.log.warn(
        `${fields.sessionId}: closed pane ${
          outcome.panes.join(", ")
        } that the failed spawn left behind`,
      );
    }
    return { ok: false, error, outcome, pending };
  }
}

/**
 * Looks for the pane a failed spawn made, by its token, and closes it. Without
 * `capabilities.spawnToken` there is nothing to look for: the backend's own spawn already
 * closed what it could tell apart, and the record is removed.
 *
 * @param backend The backend of the record.
 * @param record The pending record.
 * @param deps Store, clock, processes, grace, log.
 * @param final Remove the record even when no pane carries the token (the last look: `bye`,
 *   `cleanup`, a definite failure); else it stays for a later look.
 * @returns What was done.
 */
export async function resolveLostSpawn(
  backend: Backend,
  record: PendingRecord,
  deps: LostSpawnDeps,
  final: boolean,
): Promise<LostSpawnOutcome> {
  const forget = () => forgetRecord(record, deps);
  if (!backend.capabilities.spawnToken) {
    forget();
    return { kind: "none", kept: false };
  }
  let found;
  try {
    found = await backend.findSpawned(record.token);
  } catch (err) {
    const reason = `cannot look for the pane: ${toMuxError(err).message}`;
    deps.log.debug(`${record.sessionId}: ${reason}`);
    return { kind: "unresolved", reason };
  }
  if (found.length === 0) {
    if (final) forget();
    return { kind: "none", kept: !final };
  }
  const closed: string[] = [];
  for (const pane of found) {
    try {
      await closePane(backend, pane.paneId, {
        graceMs: deps.graceMs,
        ...(deps.survivorGraceMs === undefined ? {} : { survivorGraceMs: deps.survivorGraceMs }),
        clock: deps.clock,
        processes: deps.processes,
        token: record.token,
      });
      closed.push(pane.paneId);
    } catch (err) {
      if (isMuxError(err, "pane_not_found")) continue;
      const reason = `cannot close pane ${pane.paneId}: ${toMuxError(err).message}`;
      deps.log.warn(`${record.sessionId}: ${reason}`);
      return { kind: "unresolved", reason };
    }
  }
  forget();
  return { kind: "closed", panes: closed };
}

/** Removes a pending record; a failure is logged (the next look removes it). */
function forgetRecord(record: PendingRecord, deps: LostSpawnDeps): void {
  try {
    deps.store.remove(record.backend, record.paneId);
    // The spawn's pane, if it ran its program, may have reported a failure under the token.
    deps.store.removeExit(record.token);
  } catch (err) {
    deps.log.warn(`cannot remove the pending record of ${record.sessionId}: ${String(err)}`);
  }
}

/**
 * Looks again for the panes of failed spawns, closing what it finds.
 *
 * @param lost The failed spawns still looked for.
 * @param deps Store, clock, processes, grace, log.
 * @param final The last look (`bye`): records of spawns that left nothing go too.
 * @returns The spawns whose pane may still show up.
 */
export async function sweepLostSpawns(
  lost: readonly LostSpawn[],
  deps: LostSpawnDeps,
  final: boolean,
): Promise<LostSpawn[]> {
  const left: LostSpawn[] = [];
  for (const spawn of lost) {
    const outcome = await resolveLostSpawn(spawn.backend, spawn.record, deps, final);
    if (outcome.kind === "closed") {
      deps.log.warn(
        `${spawn.record.sessionId}: closed pane ${
          outcome.panes.join(", ")
        }, made late by a spawn whose answer was lost`,
      );
    }
    if (outcome.kind === "unresolved" || (outcome.kind === "none" && outcome.kept)) {
      left.push(spawn);
    }
  }
  return left;
}
