/**
 * The backend registry: one row per multiplexer. Adding a backend is one file and one row here;
 * the session loop and the CLI never branch on a backend's name.
 *
 * A backend's code is loaded when it is first built, not with this file: a bridge runs one
 * backend and need not hold the other four in memory (`bench/idle.ts` measures it).
 *
 * @module
 */

import type { BackendFactory } from "../lib/backend/backend.ts";
import type { BackendName } from "../lib/identity.ts";

/** One registry row. */
export interface BackendRow {
  /** The backend's name. */
  name: BackendName;
  /** Builds it, loading its code on first use. */
  create: BackendFactory;
  /** The environment variables detection reads (documentation and `detect`). */
  envVars: readonly string[];
  /**
   * The oldest supported version: semver, except WezTerm's (a date, `20230326-111934-3666303c`)
   * and the provider's (the protocol version); the backend's own constant, repeated here so the
   * registry loads no backend (`tests/backend_test.ts` checks they agree).
   */
  minVersion: string;
}

/** Every backend muxbridge has, by name. */
export const BACKENDS: Partial<Record<BackendName, BackendRow>> = {
  tmux: {
    name: "tmux",
    create: async (deps) => (await import("./tmux/backend.ts")).createTmuxBackend(deps),
    envVars: ["TMUX", "TMUX_PANE"],
    minVersion: "3.0.0",
  },
  zellij: {
    name: "zellij",
    create: async (deps) => (await import("./zellij/backend.ts")).createZellijBackend(deps),
    envVars: ["ZELLIJ", "ZELLIJ_SESSION_NAME", "ZELLIJ_PANE_ID"],
    minVersion: "0.44.1",
  },
  herdr: {
    name: "herdr",
    create: async (deps) => (await import("./herdr/backend.ts")).createHerdrBackend(deps),
    envVars: [
      "HERDR_ENV",
      "HERDR_PANE_ID",
      "HERDR_SOCKET_PATH",
      "HERDR_SESSION",
      "HERDR_WORKSPACE_ID",
      "HERDR_TAB_ID",
      "HERDR_BIN_PATH",
    ],
    minVersion: "0.8.2",
  },
  kitty: {
    name: "kitty",
    create: async (deps) => (await import("./kitty/backend.ts")).createKittyBackend(deps),
    envVars: ["KITTY_WINDOW_ID", "KITTY_PID", "KITTY_LISTEN_ON"],
    minVersion: "0.26.0",
  },
  cmux: {
    name: "cmux",
    create: async (deps) => (await import("./cmux/backend.ts")).createCmuxBackend(deps),
    envVars: ["CMUX_SOCKET_PATH", "CMUX_WORKSPACE_ID", "CMUX_SURFACE_ID"],
    minVersion: "0.64.14",
  },
  wezterm: {
    name: "wezterm",
    create: async (deps) => (await import("./wezterm/mod.ts")).createWeztermBackend(deps),
    envVars: ["WEZTERM_PANE", "WEZTERM_UNIX_SOCKET"],
    minVersion: "20230326-111934-3666303c",
  },
  provider: {
    name: "provider",
    create: async (deps) => (await import("./provider/mod.ts")).createProviderBackend(deps),
    // Never detected: the config names it (`backend: "provider"`, `provider.command`).
    envVars: [],
    minVersion: "1",
  },
};
