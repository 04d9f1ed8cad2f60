/**
 * The session core: one record per OpenCode child session, advanced by a pure state machine, and
 * the loop that runs the machine's effects against a multiplexer backend, the OpenCode server,
 * the durable pane store and the clock.
 *
 * - `events.ts`: what comes in (`LoopInput`) and goes out (`PaneMessage`), free of any wire
 *   format; `machine/`: the pure machine, one file per state (no I/O, no clock).
 * - `loop.ts`: the one `Map<SessionId, Session>` and the feed; `session.ts`: a session's record
 *   and attachments; `effect_runner.ts` with `open_pane.ts`, `pane_effects.ts` and
 *   `pane_status.ts`: what each effect does; `pane_watch.ts`, `layout_debouncer.ts`,
 *   `serial_queue.ts`: what serves all sessions; `loop_config.ts`: how config reaches the machine
 *   and when a new one applies; `pane_program.ts`: the start command a pane runs (it holds a
 *   failed pane and reports the failure).
 * - `close_pane.ts`, `lost_spawns.ts`, `pane_store.ts`, `cleanup.ts`: closing, spawning and
 *   recording panes, shared with `muxbridge close`, `spawn`, `list` and `cleanup`;
 *   `pane_proof.ts`: whether a live pane is provably the one a record names (before cleanup,
 *   adoption or `close` act on it).
 *
 * May import: `lib/opencode/`, the backend contract (`lib/backend/`, with its spawn token),
 * `lib/config/` and `lib/sys/`.
 * Never `lib/bridge/` or `lib/cli/` (the bridge speaks the wire, the core does not), never
 * `lib/backend/select.ts` (the core is handed a backend; the bridge and the CLI choose it), never
 * `backends/` (the registry is wiring).
 * `machine/` imports only `events.ts` and the id types. `tests/import_direction_test.ts` keeps
 * it so.
 *
 * @module
 */

export { CLOSE_REASONS, SKIP_REASONS } from "./events.ts";
export type { CloseReason, LoopInput, PaneMessage, SessionInfo, SkipReason } from "./events.ts";
export { type PolledStatus, SessionLoop } from "./loop.ts";
export type { LoopContext, SessionLoopDeps } from "./session.ts";
export { closePane, terminateSurvivor } from "./close_pane.ts";
export { isPending, spawnRecorded } from "./lost_spawns.ts";
export { createPaneStore, type PaneStore } from "./pane_store.ts";
export { type CleanupReport, runCleanup } from "./cleanup.ts";
export { type PaneProof, provePane } from "./pane_proof.ts";
