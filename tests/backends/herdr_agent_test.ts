/**
 * The herdr backend's agent reports against the fake herdr (its socket server and its CLI on one
 * pane model whose `pane.report_agent`, `report_agent_session` and `release_agent` follow herdr
 * 0.8.2's source: `tests/fakes/herdr_model.ts`): the child's state reaches herdr as
 * working/idle/blocked, its session id once, the report is released when the pane closes, a
 * late report never overwrites a newer one, and an older herdr that refuses reports turns them
 * off with one log line.
 */

import assert from "node:assert/strict";
import { AGENT_LABEL, AGENT_SOURCE } from "../../backends/herdr/_agent.ts";
import type { Backend } from "../../lib/backend/backend.ts";
import type { PaneStatus } from "../../lib/backend/pane_status.ts";
import { createLogger } from "../../lib/sys/log.ts";
import { type PaneId, validateSessionId } from "../../lib/sys/validate.ts";
import { assertMuxError } from "../helpers/assert_mux_error.ts";
import { request } from "./_spawn_request.ts";
import { type FakeHerdr, startFakeHerdr } from "./herdr_fixture.ts";

const SID = validateSessionId("ses_abc");
const status = (state: PaneStatus["state"], extra: Partial<PaneStatus> = {}): PaneStatus => ({
  title: `[${state}] fix the bug`,
  state,
  sessionId: SID,
  ...extra,
});

function recordingLog() {
  const lines: string[] = [];
  return { lines, log: createLogger("info", (line) => lines.push(line)) };
}

/** The CLI argv of an agent call on a pane, up to its first own flag and value. */
const agentArgv = (verb: string, paneId: string, flag: string, value: string) => [
  "pane",
  verb,
  paneId,
  "--source",
  AGENT_SOURCE,
  "--agent",
  AGENT_LABEL,
  flag,
  value,
];

async function paneOf(server: FakeHerdr, paneId: string) {
  return (await server.state()).panes.find((p) => p.pane_id === paneId);
}

/** Opens a pane that runs `sleep` in the scratch directory, showing `busy`. */
async function open(backend: Backend, server: FakeHerdr): Promise<PaneId> {
  const { paneId } = await backend.spawn(request({
    argv: ["sleep", "100000"],
    cwd: server.dir,
    status: status("busy"),
  }));
  return paneId;
}

for (const transport of ["socket", "cli"] as const) {
  Deno.test(
    `herdr (${transport}) reports the child as an agent: working, blocked while it waits for the user, idle, blocked, its session once, released on close`,
    async () => {
      const server = await startFakeHerdr({ socket: transport === "socket" });
      try {
        const backend = server.backend({ herdr: { transport } });
        const paneId = await open(backend, server);
        let pane = await paneOf(server, paneId);
        assert.equal(pane?.label, "fix the bug", "the title the spawn asked for");
        assert.deepEqual(pane?.agent, {
          source: AGENT_SOURCE,
          agent: AGENT_LABEL,
          state: "working",
          sessionId: "ses_abc",
        });
        await backend.setStatus!(paneId, status("retry", { attempt: 2 }));
        pane = await paneOf(server, paneId);
        assert.equal(pane?.agent?.state, "working");
        assert.equal(pane?.agent?.message, "retrying (attempt 2)");
        await backend.setStatus!(paneId, status("waiting", { waitingFor: "permission" }));
        pane = await paneOf(server, paneId);
        assert.equal(pane?.agent?.state, "blocked", "a child waiting for the user is blocked");
        assert.equal(pane?.agent?.message, "waiting for your permission");
        await backend.setStatus!(paneId, status("idle"));
        assert.equal((await paneOf(server, paneId))?.agent?.state, "idle");
        await backend.setStatus!(paneId, status("failed", { exitCode: 1 }));
        pane = await paneOf(server, paneId);
        assert.equal(pane?.agent?.state, "blocked");
        assert.equal(pane?.agent?.message, "opencode attach exited with code 1");
        assert.equal(pane?.label, "[failed] fix the bug");
        const seq = pane?.reportSeq?.[AGENT_SOURCE] ?? 0;
        assert.ok(seq > 0, "every report carries a growing seq");
        await backend.releaseStatus!(paneId, SID);
        assert.equal((await paneOf(server, paneId))?.agent, undefined, "released");
        await backend.kill(paneId);
        // Nothing to release for a pane it never reported on, or one already released.
        await backend.releaseStatus!(paneId, SID);
        if (transport === "cli") {
          const reports = (await server.calls()).filter((a) => a[1]?.includes("agent"));
          assert.deepEqual(reports.map((a) => a.slice(0, 9)), [
            agentArgv("report-agent", paneId, "--state", "working"),
            agentArgv("report-agent-session", paneId, "--seq", reports[1][8]),
            agentArgv("report-agent", paneId, "--state", "working"),
            agentArgv("report-agent", paneId, "--state", "blocked"),
            agentArgv("report-agent", paneId, "--state", "idle"),
            agentArgv("report-agent", paneId, "--state", "blocked"),
            agentArgv("release-agent", paneId, "--seq", reports[6][8]),
          ]);
        }
      } finally {
        await server.close();
      }
    },
  );
}

Deno.test(
  "herdr reports to a pane closed behind muxbridge's back fail pane_not_found",
  async () => {
    const server = await startFakeHerdr({ socket: true });
    try {
      const backend = server.backend();
      const paneId = await open(backend, server);
      await server.update((s) => void (s.panes = s.panes.filter((p) => p.pane_id !== paneId)));
      await assertMuxError(backend.setStatus!(paneId, status("idle")), "pane_not_found");
    } finally {
      await server.close();
    }
  },
);

Deno.test(
  "herdr ignores a report whose seq is not above the last one it took (herdr's rule)",
  async () => {
    const server = await startFakeHerdr({ socket: true });
    try {
      const backend = server.backend();
      const paneId = await open(backend, server);
      // Another process of muxbridge reported later (a larger seq): this one's next report is older.
      await server.update((s) => {
        const p = s.panes.find((x) => x.pane_id === paneId)!;
        p.reportSeq = { [AGENT_SOURCE]: Number.MAX_SAFE_INTEGER };
        p.agent = { source: AGENT_SOURCE, agent: AGENT_LABEL, state: "blocked" };
      });
      await backend.setStatus!(paneId, status("idle"));
      assert.equal((await paneOf(server, paneId))?.agent?.state, "blocked", "ignored, still ok");
    } finally {
      await server.close();
    }
  },
);

for (const transport of ["socket", "cli"] as const) {
  Deno.test(
    `herdr (${transport}) that refuses agent reports: titles go on, reports stop, one log line`,
    async () => {
      const server = await startFakeHerdr({ socket: transport === "socket" });
      try {
        await server.update((s) => (s.noAgentReports = true));
        const { lines, log } = recordingLog();
        const backend = server.backend({ herdr: { transport } }, server.identity(), log);
        const paneId = await open(backend, server);
        for (const state of ["idle", "busy", "error", "idle"] as const) {
          await backend.setStatus!(paneId, status(state));
        }
        const pane = await paneOf(server, paneId);
        assert.equal(pane?.label, "[idle] fix the bug", "the title still follows the state");
        assert.equal(pane?.agent, undefined);
        const refusals = lines.filter((l) => l.includes("not reported as agents"));
        assert.equal(refusals.length, 1, lines.join("\n"));
        assert.match(refusals[0], /pane\.report_agent refused/);
        if (transport === "cli") {
          const tries = (await server.calls()).filter((a) => a[1] === "report-agent");
          assert.equal(tries.length, 1, "asked once, never again");
        }
        await backend.releaseStatus!(paneId, SID);
        await backend.kill(paneId);
      } finally {
        await server.close();
      }
    },
  );
}
