/**
 * The backend registry: one row per multiplexer. Adding a backend is one file and one row here;
 * the session loop and the CLI never branch on a backend's name.
 *
 * @module
 */

import type { BackendFactory } from "../lib/backend.ts";
import type { BackendName } from "../lib/identity.ts";
import { CMUX_MIN_VERSION, createCmuxBackend } from "./cmux.ts";
import { createHerdrBackend, HERDR_MIN_VERSION } from "./herdr.ts";
import { createKittyBackend, KITTY_MIN_VERSION } from "./kitty.ts";
import { createProviderBackend, PROVIDER_PROTOCOL_VERSION } from "./provider/mod.ts";
import { createTmuxBackend } from "./tmux.ts";
import { createWeztermBackend, WEZTERM_MIN_VERSION } from "./wezterm/mod.ts";
import { createZellijBackend, ZELLIJ_MIN_VERSION } from "./zellij.ts";

/** One registry row. */
export interface BackendRow {
  /** The backend's name. */
  name: BackendName;
  /** Builds it. */
  create: BackendFactory;
  /** The environment variables detection reads (documentation and `detect`). */
  envVars: readonly string[];
  /**
   * The oldest supported version: semver, except WezTerm's (a date, `20230326-111934-3666303c`)
   * and the provider's (the protocol version).
   */
  minVersion: string;
}

/** Every backend muxbridge has, by name. */
export const BACKENDS: Partial<Record<BackendName, BackendRow>> = {
  tmux: {
    name: "tmux",
    create: createTmuxBackend,
    envVars: ["TMUX", "TMUX_PANE"],
    minVersion: "3.0.0",
  },
  zellij: {
    name: "zellij",
    create: createZellijBackend,
    envVars: ["ZELLIJ", "ZELLIJ_SESSION_NAME", "ZELLIJ_PANE_ID"],
    minVersion: ZELLIJ_MIN_VERSION,
  },
  herdr: {
    name: "herdr",
    create: createHerdrBackend,
    envVars: [
      "HERDR_ENV",
      "HERDR_PANE_ID",
      "HERDR_SOCKET_PATH",
      "HERDR_SESSION",
      "HERDR_WORKSPACE_ID",
      "HERDR_TAB_ID",
      "HERDR_BIN_PATH",
    ],
    minVersion: HERDR_MIN_VERSION,
  },
  kitty: {
    name: "kitty",
    create: createKittyBackend,
    envVars: ["KITTY_WINDOW_ID", "KITTY_PID", "KITTY_LISTEN_ON"],
    minVersion: KITTY_MIN_VERSION,
  },
  cmux: {
    name: "cmux",
    create: createCmuxBackend,
    envVars: ["CMUX_SOCKET_PATH", "CMUX_WORKSPACE_ID", "CMUX_SURFACE_ID"],
    minVersion: CMUX_MIN_VERSION,
  },
  wezterm: {
    name: "wezterm",
    create: (deps) => createWeztermBackend(deps),
    envVars: ["WEZTERM_PANE", "WEZTERM_UNIX_SOCKET"],
    minVersion: WEZTERM_MIN_VERSION,
  },
  provider: {
    name: "provider",
    create: (deps) => createProviderBackend(deps),
    // Never detected: the config names it (`backend: "provider"`, `provider.command`).
    envVars: [],
    minVersion: PROVIDER_PROTOCOL_VERSION,
  },
};
