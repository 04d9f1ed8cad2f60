/**
 * The WezTerm backend: one pane per child session through `wezterm cli`
 * (`docs/backends/wezterm.md`).
 *
 * @module
 */

export { createWeztermBackend, type SessionLeader, type WeztermBackendOptions } from "./backend.ts";
export { WEZTERM_MIN_VERSION } from "./_parse.ts";
