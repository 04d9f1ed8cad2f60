/**
 * The muxbridge OpenCode 2.x plugin's server entry (`server.js` of the installed
 * `plugins/muxbridge/` folder). It does nothing, on purpose.
 *
 * OpenCode 2.x requires a server entry in a plugin folder (without one it reports "Plugin
 * entrypoint not found" and never loads the TUI entry), but muxbridge needs nothing in the
 * server: 2.x's server runs in the per-user background service, far from the user's terminal
 * and its multiplexer, so the bridge is started by the TUI entry (`tui.ts`) instead.
 *
 * @module
 */

/** The plugin module. */
export default {
  id: "muxbridge",
  /** Nothing: see the module. */
  setup(): void {},
};
