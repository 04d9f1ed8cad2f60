/**
 * The backend contract: what a backend is and what it declares about itself (`backend.ts`: the
 * `Backend` interface and the `BackendModule` each `backends/<name>/mod.ts` exports), building one
 * from its module (`create_backend.ts`), hint texts that name the backends (`hints.ts`), a
 * failed doctor check (`failed_check.ts`), what a pane shows of its child (`pane_status.ts`),
 * which multiplexers the environment shows and which wins (`identity.ts`), the token a pane's
 * program carries so that a spawn whose answer was lost can still be found (`spawn_token.ts`), and
 * the multiplexer instance a pane opened on, as a record keeps it and compares it
 * (`instance.ts`).
 * Choosing and building the backend a run uses is `select.ts`: it stands a floor up (it builds
 * backends from this folder) and nothing here imports it or re-exports it.
 *
 * Files prefixed `_` are the mechanisms backends share (one program run, the fallback error, a
 * pane id made in the backend's form, the version gate, a one-time step kept once it succeeds,
 * the binary doctor check, a detected layer, where a pane's credentials file goes): only
 * `backends/` imports them, and nothing here
 * re-exports them.
 *
 * What lives here may import `lib/sys/` and `lib/config/`, never `backends/`, `lib/session/`,
 * `lib/bridge/`, `lib/cli/` or `select.ts`:
 * backends sit beside the core and import this folder and `lib/sys/`; the core talks to a
 * {@linkcode Backend} and is handed the registry's list, never a backend's code.
 * `tests/import_direction_test.ts` keeps it so.
 *
 * @module
 */

export * from "./backend.ts";
export * from "./create_backend.ts";
export * from "./failed_check.ts";
export * from "./hints.ts";
export * from "./instance.ts";
export * from "./pane_status.ts";
