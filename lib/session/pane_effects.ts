/**
 * The I/O behind the machine's pane effects once a pane exists: close, the status read
 * that confirms an idle close, ending a program that outlived its pane, the layout pass, and the
 * durable record's writes. A runner that learns something returns it as the event to feed back;
 * nothing here decides what follows.
 *
 * @module
 */

import { toMuxError } from "../sys/errors.ts";
import type { PaneId } from "../sys/validate.ts";
import type { CloseReason } from "./events.ts";
import { closePane, interruptOf, terminateSurvivor } from "./close_pane.ts";
import type { MachineEvent, SessionRecord } from "./machine/mod.ts";
import { directoryOf } from "./open_pane.ts";
import type { LoopEnv, Session } from "./session.ts";

/**
 * Closes a session's pane (interrupt, grace, kill, verify; a surviving program is ended).
 *
 * @param session The session.
 * @param paneId The pane.
 * @param reason Why, for the log.
 * @param env The loop's context and deps.
 * @returns `closed` or `close_failed`.
 */
export async function closeSessionPane(
  session: Session,
  paneId: PaneId,
  reason: CloseReason,
  env: LoopEnv,
): Promise<MachineEvent> {
  const id = session.record.id;
  const handle = session.pane;
  const backend = handle?.backend ?? env.ctx.backend;
  if (!backend) {
    return {
      type: "close_failed",
      code: "no_backend",
      message: "No backend to close the pane with",
    };
  }
  // The backend's status place forgets the child first (herdr's agent report); best effort.
  try {
    await backend.releaseStatus?.(paneId, id);
  } catch (err) {
    env.deps.log.debug(
      `${id}: cannot release the status of pane ${paneId}: ${(err as Error).message}`,
    );
  }
  try {
    const result = await closePane(backend, paneId, {
      graceMs: env.config.close_grace_ms,
      survivorGraceMs: env.config.survivor_grace_ms,
      clock: env.deps.clock,
      processes: env.deps.processes,
      pid: handle?.record.pid,
      pidStart: handle?.record.pidStart,
      token: handle?.record.token,
      interrupt: interruptOf(handle?.record),
    });
    env.deps.log.debug(`${id}: closed ${paneId} (${reason}) ${JSON.stringify(result)}`);
    return { type: "closed" };
  } catch (err) {
    const e = toMuxError(err);
    env.deps.log.warn(`${id}: cannot close pane ${paneId}: ${e.message}`);
    return { type: "close_failed", code: e.code, message: e.message };
  }
}

/**
 * Confirms an idle close the moment it is due, without waiting for a poll tick: one status read
 * of the child, and beside it whether the session still exists, each bounded by half a poll
 * interval (at most 1 s). Busy (or retry) cancels the close; a 404 for the session means it was
 * deleted; idle, absent or no answer in time leaves the idle signal standing.
 *
 * @param record The child.
 * @param env The loop's context and deps.
 * @returns The `recheck` event.
 */
export async function recheckSession(record: SessionRecord, env: LoopEnv): Promise<MachineEvent> {
  const id = record.id;
  const client = env.client();
  if (!client) return { type: "recheck", status: "unknown" };
  const call = {
    directory: directoryOf(record, env),
    timeoutMs: Math.min(1000, Math.max(50, env.config.poll_interval_ms / 2)),
  };
  const [polled, session] = await Promise.allSettled([
    client.statusMap(call),
    client.session(id, call),
  ]);
  for (const r of [polled, session]) {
    if (r.status === "rejected") {
      env.deps.log.debug(`${id}: idle confirmation: ${(r.reason as Error).message}`);
    }
  }
  const said = polled.status === "fulfilled" ? polled.value.get(id)?.status ?? "absent" : "unknown";
  const seen = said === "running" ? "busy" : said;
  const status = seen === "busy"
    ? "busy"
    : session.status === "fulfilled" && session.value === null
    ? "deleted"
    : seen;
  return { type: "recheck", status };
}

/**
 * Ends the program of a pane that went away behind muxbridge's back, should it have outlived it
 * (the OpenCode TUI ignores SIGHUP), with what it started.
 *
 * @param session The session (its pane handle still attached).
 * @param paneId The pane that went away.
 * @param env The loop's context and deps.
 * @returns The termination under way, or null when no program was recorded.
 */
export function endSurvivor(session: Session, paneId: PaneId, env: LoopEnv): Promise<void> | null {
  const pane = session.pane?.record;
  if (pane?.paneId !== paneId || pane.pid === undefined) return null;
  const { pid, pidStart, token } = pane;
  // A pid that is not the multiplexer's word (a pane provider's) is only ended with the token.
  const claimed = session.pane!.backend.ownership.pid !== "multiplexer";
  if (claimed && token === undefined) return null;
  const id = session.record.id;
  const { deps } = env;
  const grace = env.config.survivor_grace_ms;
  return terminateSurvivor(
    deps.processes,
    pid,
    deps.clock,
    grace,
    pidStart,
    claimed ? token : undefined,
  )
    .then((ended) => {
      if (ended) deps.log.info(`${id}: ended pid ${pid}, which outlived pane ${paneId}`);
    }, (err) => deps.log.warn(`${id}: ${(err as Error).message}`));
}

/**
 * Lays out the panes of the current backend, oldest first.
 *
 * @param sessions Every session.
 * @param env The loop's context and deps.
 */
export async function layoutPass(sessions: Iterable<Session>, env: LoopEnv): Promise<void> {
  const backend = env.ctx.backend;
  if (!backend?.capabilities.layout) return;
  const panes = [...sessions]
    .flatMap((s) =>
      s.record.state.kind === "open" && s.pane?.backend === backend ? [s.record.state] : []
    )
    .sort((a, b) => a.openedAt - b.openedAt)
    .map((s) => s.paneId);
  if (panes.length === 0) return;
  const { layout, main_pane_size: mainPaneSize } = env.config;
  try {
    const result = await backend.applyLayout({ layout, mainPaneSize, panes });
    env.deps.log.debug(
      `layout ${layout}: ${result.applied ? "applied" : "skipped"} (${result.detail})`,
    );
  } catch (err) {
    env.deps.log.warn(`cannot apply layout: ${(err as Error).message}`);
  }
}

/**
 * Writes the durable record of a session's pane, then removes the pending record it replaces.
 *
 * @param session The session (its pane handle attached).
 * @param replaces The pending record's pane id.
 * @param env The loop's context and deps.
 */
export function storePut(session: Session, replaces: PaneId | undefined, env: LoopEnv): void {
  const pane = session.pane;
  if (!pane) return;
  const { store, log } = env.deps;
  try {
    store.put(pane.record);
    if (replaces !== undefined) store.remove(pane.backend.name, replaces);
  } catch (err) {
    log.warn(`cannot record pane ${pane.record.paneId} in ${store.dir}: ${(err as Error).message}`);
  }
}

/**
 * Removes a durable record: the session's pane's (its handle goes too), or a pending spawn's.
 *
 * @param session The session.
 * @param paneId The record's pane id.
 * @param env The loop's context and deps.
 */
export function storeRemove(session: Session, paneId: PaneId, env: LoopEnv): void {
  const ours = session.pane?.record.paneId === paneId ? session.pane : null;
  if (ours) session.pane = null;
  try {
    env.deps.store.remove(ours?.backend.name ?? env.ctx.backend?.name ?? "", paneId);
    if (ours?.record.token !== undefined) env.deps.store.removeExit(ours.record.token);
  } catch (err) {
    env.deps.log.warn(`cannot remove the record of pane ${paneId}: ${(err as Error).message}`);
  }
}

/**
 * Marks the durable record of a pane that could not be closed, for `list` and `cleanup`.
 *
 * @param session The session.
 * @param paneId The pane.
 * @param env The loop's context and deps.
 */
export function storeMarkStuck(session: Session, paneId: PaneId, env: LoopEnv): void {
  const pane = session.pane;
  if (pane?.record.paneId === paneId) {
    try {
      env.deps.store.put({ ...pane.record, stuck: true });
    } catch { /* the record stays as it was */ }
  }
  env.deps.log.error(
    `${session.record.id}: giving up on closing pane ${paneId}; \`muxbridge cleanup\` will retry`,
  );
}
