/**
 * The cmux backend: one terminal surface per child session split right of the one muxbridge runs
 * in, addressed by UUID (`docs/backends/cmux.md`).
 *
 * @module
 */

import type { BackendModule } from "../../lib/backend/backend.ts";
import { envText } from "../../lib/sys/env.ts";
import { CMUX_CAPABILITIES, CMUX_DOCTOR, CMUX_GATE, CMUX_SECTION } from "./_traits.ts";

/** The cmux backend. */
export const cmux: BackendModule<"cmux", typeof CMUX_SECTION> = {
  name: "cmux",
  title: "cmux",
  summary: "cmux >= 0.64.14: surfaces split right of the one muxbridge runs in, by UUID",
  detect: {
    envVars: ["CMUX_SOCKET_PATH", "CMUX_WORKSPACE_ID", "CMUX_SURFACE_ID"],
    // cmux is a terminal app: a multiplexer running in it wins.
    nesting: { kind: "terminal", rank: 1 },
    read(env) {
      // Only a complete socket + workspace + surface identity counts.
      const socket = envText(env, "CMUX_SOCKET_PATH");
      const workspaceId = envText(env, "CMUX_WORKSPACE_ID");
      const surface = envText(env, "CMUX_SURFACE_ID");
      if (!socket || !workspaceId || !surface) return null;
      return { backend: "cmux", paneId: surface, socket, workspaceId };
    },
  },
  config: { schema: CMUX_SECTION, external: { bin: "program", socket_path: "socket" } },
  version: CMUX_GATE,
  capabilities: CMUX_CAPABILITIES,
  doctor: CMUX_DOCTOR,
  hints: {},
  readme: {
    versions: "≥ 0.64.14",
    detectedFrom: "complete `CMUX_SOCKET_PATH` + `CMUX_WORKSPACE_ID` + `CMUX_SURFACE_ID`",
    spawn: "`new-split --focus false`, the POSIX-quoted command typed into the new terminal",
    close:
      "`send-key ctrl+c` → grace → `close-surface` by UUID, re-listed before and after (a different surface vanishing is reported, never silent)",
    layout: "no-op (no named layouts)",
    title: "`rename-tab`",
    focusSafe: "yes",
    credentials:
      "a private 0600 file the typed `/bin/sh` sources and removes (only its path is typed; never on argv)",
    marks: "none (state records)",
    verified: "a faithful **fake** CLI (`tests/fakes/bin/cmux`)",
  },
  create: async (deps) => (await import("./backend.ts")).createCmuxBackend(deps),
};
