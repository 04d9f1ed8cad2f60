/**
 * The herdr backend: one pane per child session split off the pane muxbridge runs in, over
 * herdr's API socket or its CLI (`docs/backends/herdr.md`).
 *
 * @module
 */

import { layerOf } from "../../lib/backend/_layer.ts";
import type { BackendModule } from "../../lib/backend/backend.ts";
import { envText } from "../../lib/sys/env.ts";
import { HERDR_CAPABILITIES, HERDR_DOCTOR, HERDR_GATE, HERDR_SECTION } from "./_traits.ts";

/** The herdr backend. */
export const herdr: BackendModule<"herdr", typeof HERDR_SECTION> = {
  name: "herdr",
  title: "herdr",
  summary: "herdr >= 0.8.2: panes split off the pane muxbridge runs in, over herdr's API socket",
  detect: {
    envVars: [
      "HERDR_ENV",
      "HERDR_PANE_ID",
      "HERDR_SOCKET_PATH",
      "HERDR_SESSION",
      "HERDR_WORKSPACE_ID",
      "HERDR_TAB_ID",
      "HERDR_BIN_PATH",
    ],
    nesting: { kind: "multiplexer", rank: 3 },
    read(env) {
      // HERDR_ENV=1 without a pane is a popup: herdr, but nothing to split.
      const pane = envText(env, "HERDR_PANE_ID");
      if (!pane && env("HERDR_ENV") !== "1") return null;
      return layerOf({
        backend: "herdr",
        paneId: pane ?? null,
        socket: envText(env, "HERDR_SOCKET_PATH"),
        session: envText(env, "HERDR_SESSION"),
        workspaceId: envText(env, "HERDR_WORKSPACE_ID"),
        tabId: envText(env, "HERDR_TAB_ID"),
        binPath: envText(env, "HERDR_BIN_PATH"),
      });
    },
  },
  config: {
    schema: HERDR_SECTION,
    external: { bin: "program", socket_path: "socket", session: "session" },
  },
  version: HERDR_GATE,
  capabilities: HERDR_CAPABILITIES,
  doctor: HERDR_DOCTOR,
  hints: {},
  readme: {
    versions: "≥ 0.8.2",
    detectedFrom: "`HERDR_ENV`/`HERDR_PANE_ID`, `HERDR_SOCKET_PATH`, …",
    spawn:
      "over herdr's API socket (no process per command; `herdr.transport: auto` falls back to the CLI) or the CLI: `pane split --no-focus`; the command travels in `--env`, the only typed text is a constant `exec /bin/sh -c 'eval \"$MUXBRIDGE_LAUNCH\"'`",
    close: "`send-keys ctrl+c` → grace → `pane close` (`pane get`)",
    layout: "no-op",
    title: "`pane rename`; the child's state also as herdr's agent report (`pane.report_agent`)",
    focusSafe: "yes",
    credentials:
      "a private 0600 file the launch command sources and removes (never on herdr's argv, never typed)",
    marks: "none (state records)",
    verified:
      "a faithful **fake** CLI (`tests/fakes/bin/herdr`) and a fake API socket server on the same pane model (`tests/fakes/herdr_socket.ts`)",
  },
  create: async (deps) => (await import("./backend.ts")).createHerdrBackend(deps),
};
