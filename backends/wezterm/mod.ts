/**
 * The WezTerm backend: one pane per child session split off the pane muxbridge runs in, through
 * `wezterm cli`, every call addressed by pane id (`docs/backends/wezterm.md`).
 *
 * @module
 */

import { layerOf } from "../../lib/backend/_layer.ts";
import type { BackendModule } from "../../lib/backend/backend.ts";
import { envText } from "../../lib/sys/env.ts";
import { WEZTERM_CAPABILITIES, WEZTERM_DOCTOR, WEZTERM_GATE, WEZTERM_SECTION } from "./_traits.ts";

/** The WezTerm backend. */
export const wezterm: BackendModule<"wezterm", typeof WEZTERM_SECTION> = {
  name: "wezterm",
  title: "WezTerm",
  summary: "WezTerm >= 20230326: panes split off the pane muxbridge runs in, by `wezterm cli`",
  detect: {
    envVars: ["WEZTERM_PANE", "WEZTERM_UNIX_SOCKET"],
    // A terminal, like kitty: any multiplexer running inside WezTerm wins.
    nesting: { kind: "terminal", rank: 3 },
    read(env) {
      // WEZTERM_PANE is the pane's numeric id, set in every pane; WEZTERM_UNIX_SOCKET the GUI's
      // or mux server's socket, set for its panes; either one counts (docs/backends/wezterm.md §4).
      const pane = envText(env, "WEZTERM_PANE");
      const socket = envText(env, "WEZTERM_UNIX_SOCKET");
      if (!pane && !socket) return null;
      return layerOf({
        backend: "wezterm",
        paneId: pane !== undefined && /^\d+$/.test(pane) ? pane : null,
        socket,
      });
    },
  },
  config: { schema: WEZTERM_SECTION, external: { bin: "program", socket_path: "socket" } },
  version: WEZTERM_GATE,
  capabilities: WEZTERM_CAPABILITIES,
  doctor: WEZTERM_DOCTOR,
  hints: {},
  readme: {
    versions: "≥ `20230326-111934-3666303c` (versions are dates, compared as dates)",
    detectedFrom:
      "`WEZTERM_PANE`, `WEZTERM_UNIX_SOCKET` (or `wezterm.pane_id`, `wezterm.socket_path`)",
    spawn: "`cli --no-auto-start split-pane --pane-id … --right\\|--bottom --percent N` by argv",
    close: "`send-text --no-paste` of byte 3 → grace → `kill-pane` (`list --format json`)",
    layout:
      "no-op (no layout command); side and size of new splits follow `layout` and `main_pane_size`",
    title: "none (`set-tab-title` would rename the user's tab)",
    focusSafe:
      "yes: `split-pane` takes focus (no flag against it), so the pane the user types in gets it back with `activate-pane` when it is in that tab (a brief flash)",
    credentials:
      "a private 0600 file an explicit `/bin/sh -c` sources and removes (never on argv); refused (`auth_unsupported`) next to a remote-domain pane",
    marks: "none (state records)",
    verified:
      "a faithful **fake** CLI (`tests/fakes/bin/wezterm`) following wezterm's CLI source (`docs/backends/wezterm.md`)",
  },
  create: async (deps) => (await import("./backend.ts")).createWeztermBackend(deps),
};
