/**
 * The zellij backend: one pane per child session in the tab muxbridge runs in, every action
 * addressed by pane id (`docs/backends/zellij.md`).
 *
 * @module
 */

import { layerOf } from "../../lib/backend/_layer.ts";
import type { BackendModule } from "../../lib/backend/backend.ts";
import { envText } from "../../lib/sys/env.ts";
import { ZELLIJ_CAPABILITIES, ZELLIJ_DOCTOR, ZELLIJ_GATE, ZELLIJ_SECTION } from "./_traits.ts";

/** The zellij backend. */
export const zellij: BackendModule<"zellij", typeof ZELLIJ_SECTION> = {
  name: "zellij",
  title: "zellij",
  summary: "zellij >= 0.44.1: panes in the tab muxbridge runs in, addressed by pane id",
  detect: {
    envVars: ["ZELLIJ", "ZELLIJ_SESSION_NAME", "ZELLIJ_PANE_ID", "ZELLIJ_SOCKET_DIR"],
    nesting: { kind: "multiplexer", rank: 2 },
    read(env) {
      // zellij sets ZELLIJ=0 in its panes; an empty value is treated as unset.
      if (!envText(env, "ZELLIJ") && !envText(env, "ZELLIJ_SESSION_NAME")) return null;
      // ZELLIJ_PANE_ID is the bare number of a terminal pane: the CLI's id is `terminal_N`.
      const pane = envText(env, "ZELLIJ_PANE_ID");
      return layerOf({
        backend: "zellij",
        paneId: pane === undefined ? null : /^\d+$/.test(pane) ? `terminal_${pane}` : pane,
        session: envText(env, "ZELLIJ_SESSION_NAME"),
        socket: envText(env, "ZELLIJ_SOCKET_DIR"),
      });
    },
  },
  config: { schema: ZELLIJ_SECTION, external: { bin: "program", session: "session" } },
  version: ZELLIJ_GATE,
  capabilities: ZELLIJ_CAPABILITIES,
  doctor: ZELLIJ_DOCTOR,
  hints: {},
  readme: {
    versions: "≥ 0.44.1 (pane ids)",
    detectedFrom: "`ZELLIJ`, `ZELLIJ_SESSION_NAME`, `ZELLIJ_PANE_ID`",
    spawn: "`action new-pane` by argv, `--close-on-exit`",
    close: "`write -p ID 3` → grace → `close-pane -p` (`list-panes --json`: unknown ids exit 0)",
    layout: "no-op (no layout API)",
    title: "`--name` + `rename-pane`",
    focusSafe: "only on ≥ 0.45 (`--no-focus`); `doctor` warns on 0.44",
    credentials:
      "a private 0600 file the pane's explicit `/bin/sh` sources and removes (no per-pane environment; never on argv)",
    marks: "none (state records)",
    verified: "a faithful **fake** CLI (`tests/fakes/bin/zellij`)",
  },
  create: async (deps) => (await import("./backend.ts")).createZellijBackend(deps),
};
