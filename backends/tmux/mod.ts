/**
 * The tmux backend: one pane per child session split next to the pane muxbridge runs in, marks
 * and title kept in tmux itself, layouts that never reshape the user's panes
 * (`docs/backends/tmux.md`).
 *
 * @module
 */

import { layerOf } from "../../lib/backend/_layer.ts";
import type { BackendModule } from "../../lib/backend/backend.ts";
import { envInt, envText } from "../../lib/sys/env.ts";
import { TMUX_CAPABILITIES, TMUX_DOCTOR, TMUX_GATE, TMUX_SECTION } from "./_traits.ts";

/** The tmux backend. */
export const tmux: BackendModule<"tmux", typeof TMUX_SECTION> = {
  name: "tmux",
  title: "tmux",
  summary: "tmux >= 3.0: panes split next to the OpenCode pane without taking focus",
  detect: {
    envVars: ["TMUX", "TMUX_PANE"],
    nesting: { kind: "multiplexer", rank: 1 },
    // `TMUX=<socket>,<server pid>,<session>` (the socket path may hold commas) and `TMUX_PANE=%N`.
    read(env) {
      const value = envText(env, "TMUX");
      if (!value) return null;
      const parts = value.split(",");
      return layerOf({
        backend: "tmux",
        paneId: envText(env, "TMUX_PANE") ?? null,
        socket: parts.length >= 3 ? parts.slice(0, -2).join(",") : value,
        pid: parts.length >= 3 ? envInt(parts[parts.length - 2]) : undefined,
      });
    },
  },
  config: {
    schema: TMUX_SECTION,
    external: { bin: "program", socket_path: "socket", socket_name: "socket", target: "session" },
    removed: {
      control_mode:
        "tmux control mode was removed: one tmux process per pane operation was faster and never crashed tmux 3.3a",
    },
  },
  version: TMUX_GATE,
  capabilities: TMUX_CAPABILITIES,
  doctor: TMUX_DOCTOR,
  hints: { outside: "tmux.target" },
  readme: {
    versions: "≥ 3.0",
    detectedFrom: "`TMUX`, `TMUX_PANE` (or `tmux.target` + `tmux.socket_name`/`socket_path`)",
    spawn:
      "one tmux call: `split-window -d`, marks, title and layout under an `if-shell -F` guard; overflow window when full",
    close:
      "Ctrl+C → grace → `kill-pane` (its exit status; else `list-panes -t`, never `display-message`)",
    layout: "main-*/tiled/even-* on muxbridge's own panes only",
    title: "`select-pane -T`; the child's state also in the pane option `@muxbridge-status`",
    focusSafe: "yes (`-d`)",
    credentials: "`-e`, sent through `tmux source-file -` on stdin (never on a tmux client's argv)",
    marks: "pane options `@muxbridge-session`/`@muxbridge-owner`",
    verified: "**the real tmux 3.3a**",
  },
  create: async (deps) => (await import("./backend.ts")).createTmuxBackend(deps),
};
