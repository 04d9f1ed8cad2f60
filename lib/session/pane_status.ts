/**
 * The I/O behind the machine's `set_status` effect: the child's live state goes to its pane (the
 * title with its marker, and the backend's own status place where it has one) and to the pane's
 * durable record, which `muxbridge list` reads. The machine sends at most one view per pane a
 * second, so both writes are rate-limited by it.
 *
 * @module
 */

import type { PaneStatus } from "../backend/pane_status.ts";
import { isMuxError } from "../sys/errors.ts";
import type { PaneId, SessionId } from "../sys/validate.ts";
import type { MachineEvent, PaneView } from "./machine/mod.ts";
import type { PaneRecord } from "./pane_store.ts";
import type { LoopEnv, Session } from "./session.ts";

/**
 * A view as a pane record keeps it.
 *
 * @param view The view.
 * @returns The record's `status`.
 */
export function recordStatus(view: PaneView): NonNullable<PaneRecord["status"]> {
  return {
    state: view.state,
    since: new Date(view.since).toISOString(),
    ...(view.waitingFor === undefined ? {} : { waitingFor: view.waitingFor }),
    ...(view.attempt === undefined ? {} : { attempt: view.attempt }),
    ...(view.exitCode === undefined ? {} : { exitCode: view.exitCode }),
  };
}

/**
 * A view as a backend shows it.
 *
 * @param view The view.
 * @param sessionId The child.
 * @returns The backend's status.
 */
export function paneStatus(view: PaneView, sessionId: SessionId): PaneStatus {
  return {
    title: view.title,
    state: view.state,
    sessionId,
    ...(view.waitingFor === undefined ? {} : { waitingFor: view.waitingFor }),
    ...(view.attempt === undefined ? {} : { attempt: view.attempt }),
    ...(view.exitCode === undefined ? {} : { exitCode: view.exitCode }),
  };
}

/**
 * Shows a view on a session's pane (the backend's `setStatus`, else its title) and records it.
 *
 * @param session The session (its pane handle attached).
 * @param paneId The pane.
 * @param view What to show.
 * @param env The loop's context and deps.
 * @returns `gone` when the pane is not there any more, else null.
 */
export async function showStatus(
  session: Session,
  paneId: PaneId,
  view: PaneView,
  env: LoopEnv,
): Promise<MachineEvent | null> {
  const pane = session.pane;
  if (pane?.record.paneId !== paneId) return null;
  const record: PaneRecord = { ...pane.record, status: recordStatus(view) };
  session.pane = { ...pane, record };
  try {
    env.deps.store.put(record);
  } catch (err) {
    env.deps.log.debug(`cannot record the status of pane ${paneId}: ${(err as Error).message}`);
  }
  const { backend } = pane;
  if (!backend.setStatus && !backend.capabilities.title) return null;
  try {
    if (backend.setStatus) await backend.setStatus(paneId, paneStatus(view, session.record.id));
    else await backend.setTitle(paneId, view.title);
  } catch (err) {
    // Closed behind muxbridge's back: the machine hears it once, as `gone`, and sends no more.
    if (isMuxError(err, "pane_not_found")) return { type: "gone", paneId };
    env.deps.log.warn(
      `${session.record.id}: cannot show status on pane ${paneId}: ${(err as Error).message}`,
    );
  }
  return null;
}
