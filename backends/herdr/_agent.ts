/**
 * Private to the herdr backend: the child's live state as herdr's agent report
 * (docs/backends/herdr.md §16), so herdr's sidebar shows an OpenCode child as working, idle or
 * blocked. Each pane muxbridge reports on gets `pane.report_agent` (source `custom:muxbridge`,
 * agent `opencode`, a state and a short message), once the child's session id through
 * `pane.report_agent_session` after the first report (never before it: herdr issue 3174), and
 * `pane.release_agent` before muxbridge closes it.
 *
 * A herdr that refuses the report (the socket answers `invalid_request`; an old CLI prints its
 * help and exits 2) gets no more reports from this backend: one log line says so. Every report
 * carries a `seq` that only grows, across muxbridge processes too (the clock's milliseconds):
 * herdr ignores a report whose `seq` is not above the last one it took for the source on that
 * pane, so a late report never overwrites a newer one.
 *
 * @module
 */

import type { BackendDeps } from "../../lib/backend/backend.ts";
import type { PaneState, PaneStatus } from "../../lib/backend/pane_status.ts";
import { isMuxError } from "../../lib/sys/errors.ts";
import type { PaneId, SessionId } from "../../lib/sys/validate.ts";
import type { HerdrApi } from "./_api.ts";
import type { HerdrOp } from "./_ops.ts";
import type { HerdrConfig } from "./_traits.ts";

/** The report's source: a third party's, by herdr's convention (`custom:<name>`). */
export const AGENT_SOURCE = "custom:muxbridge";

/** The agent muxbridge's panes run. */
export const AGENT_LABEL = "opencode";

/** herdr's agent states (`PaneAgentState`: `done` is derived, never reported). */
export type AgentState = "idle" | "working" | "blocked" | "unknown";

/**
 * A child's state as herdr's: busy and retrying are working; a child waiting for the user (a
 * permission request or a question), an error or a failed pane needs the user (blocked).
 *
 * @param state The child's state.
 * @returns herdr's.
 */
export function agentState(state: PaneState): AgentState {
  switch (state) {
    case "busy":
    case "retry":
      return "working";
    case "idle":
      return "idle";
    case "waiting":
    case "error":
    case "failed":
      return "blocked";
    case "unknown":
      return "unknown";
    default: {
      const never: never = state;
      throw new TypeError(`Unknown pane state ${JSON.stringify(never)}`);
    }
  }
}

/** The report's message: what the state alone does not say. */
export function agentMessage(status: PaneStatus): string | undefined {
  switch (status.state) {
    case "retry":
      return status.attempt ? `retrying (attempt ${status.attempt})` : "retrying";
    case "waiting":
      return status.waitingFor === "question"
        ? "waiting for your answer to a question"
        : "waiting for your permission";
    case "error":
      return "OpenCode reported an error";
    case "failed":
      return status.exitCode === undefined
        ? "opencode attach failed"
        : `opencode attach exited with code ${status.exitCode}`;
    default:
      return undefined;
  }
}

/**
 * One agent call on a pane: the socket method and the CLI verb carry the same values (pane,
 * source, agent, then the call's own).
 */
function agentOp(
  paneId: PaneId,
  op: { action: string; method: string; verb: string },
  params: Record<string, unknown>,
  args: string[],
): HerdrOp<void> {
  return {
    action: `${op.action} of pane "${paneId}"`,
    method: op.method,
    params: { pane_id: paneId, source: AGENT_SOURCE, agent: AGENT_LABEL, ...params },
    args: ["pane", op.verb, paneId, "--source", AGENT_SOURCE, "--agent", AGENT_LABEL, ...args],
    readOnly: false,
    read: () => undefined,
  };
}

/** Reports children to herdr as agents. */
export interface AgentReporter {
  /** Reports a pane's child (nothing once herdr refused reports). */
  report(paneId: PaneId, status: PaneStatus, signal?: AbortSignal): Promise<void>;
  /** Withdraws the report on a pane before it closes (nothing for a pane never reported on). */
  release(paneId: PaneId, sessionId: SessionId, signal?: AbortSignal): Promise<void>;
}

/**
 * Creates the reporter of one backend.
 *
 * @param api The backend's herdr operations.
 * @param deps Its deps (clock, log).
 * @returns The reporter.
 */
export function createAgentReporter(
  api: HerdrApi,
  deps: BackendDeps<HerdrConfig>,
): AgentReporter {
  let refused = false;
  let lastSeq = 0;
  /** Panes reported on, and whether their session id went out. */
  const reported = new Map<PaneId, { session: boolean }>();
  const seq = () => (lastSeq = Math.max(lastSeq + 1, Math.floor(deps.clock.now())));

  /** Runs one report; false when herdr refused it (and no report follows from now on). */
  const send = async (op: HerdrOp<void>, signal?: AbortSignal): Promise<boolean> => {
    try {
      await api.call(op, signal);
      return true;
    } catch (err) {
      // The socket's `invalid_request` (mapped to unsupported) or an old CLI's usage exit.
      const refusal = isMuxError(err, "unsupported") ||
        (isMuxError(err, "command_failed") && err.exitCode === 2);
      if (!refusal) throw err;
      if (!refused) {
        refused = true;
        deps.log.info(
          `herdr: ${op.method} refused (${
            (err as Error).message
          }); children are not reported as agents from now on`,
        );
      }
      return false;
    }
  };

  return {
    async report(paneId, status, signal) {
      if (refused) return;
      const message = agentMessage(status);
      const state = agentState(status.state);
      const n = seq();
      const ok = await send(
        agentOp(
          paneId,
          { action: "report the agent", method: "pane.report_agent", verb: "report-agent" },
          { state, ...(message === undefined ? {} : { message }), seq: n },
          [
            "--state",
            state,
            ...(message === undefined ? [] : ["--message", message]),
            "--seq",
            String(n),
          ],
        ),
        signal,
      );
      if (!ok) return;
      const entry = reported.get(paneId) ?? { session: false };
      reported.set(paneId, entry);
      if (entry.session) return;
      entry.session = true;
      // The session id, once, after the first report; herdr's sidebar works without it.
      const m = seq();
      try {
        await send(
          agentOp(
            paneId,
            {
              action: "report the session",
              method: "pane.report_agent_session",
              verb: "report-agent-session",
            },
            { seq: m, agent_session_id: status.sessionId },
            [
              "--seq",
              String(m),
              "--agent-session-id",
              status.sessionId,
            ],
          ),
          signal,
        );
      } catch (err) {
        if (isMuxError(err, "pane_not_found")) throw err;
        deps.log.debug(`herdr: cannot report the session of ${paneId}: ${(err as Error).message}`);
      }
    },
    async release(paneId, _sessionId, signal) {
      if (!reported.delete(paneId) || refused) return;
      const n = seq();
      try {
        await send(
          agentOp(
            paneId,
            { action: "release the agent", method: "pane.release_agent", verb: "release-agent" },
            { seq: n },
            ["--seq", String(n)],
          ),
          signal,
        );
      } catch (err) {
        // Already gone: nothing to release.
        if (!isMuxError(err, "pane_not_found")) throw err;
      }
    },
  };
}
