/**
 * The muxbridge OpenCode plugin for OpenCode 1.x: starts `muxbridge bridge` next to OpenCode
 * and feeds it the session events it needs, one JSON line each. muxbridge opens a multiplexer
 * pane per child session; this plugin only carries events to it (see `src/v1_link.ts`).
 *
 * Installed by `muxbridge install` as one bundled file, `muxbridge.js`, in OpenCode's global
 * plugin folder (`$XDG_CONFIG_HOME/opencode/plugin/`, or `$OPENCODE_CONFIG_DIR/plugin/`), with
 * the muxbridge command recorded beside it in `muxbridge.json`.
 *
 * The module exports one thing, its default, because OpenCode 1.x takes every export of a
 * plugin module for a plugin: `{ id, server, setup }`. OpenCode 1.x runs `server(input,
 * options)`.
 *
 * @module
 */

import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import type { Plugin } from "@opencode-ai/plugin";
import { muxbridgePlugin } from "./src/v1_link.ts";

const server: Plugin = muxbridgePlugin(dirname(fileURLToPath(import.meta.url)));

/** The plugin module. */
export default {
  id: "muxbridge-v1",
  server,
  /**
   * Does nothing, on purpose. OpenCode 2.x loads every file of this folder too and requires a
   * default export with an `id` and a `setup` (else it lists the plugin as failed). muxbridge on
   * 2.x is the `plugins/muxbridge/` folder, whose TUI part runs in the user's terminal; this
   * file has nothing to do in 2.x's server. Its id differs from that folder's so that both can
   * be installed side by side.
   */
  setup(): void {},
};
