/**
 * The backend contract: what a multiplexer backend is (`backend.ts`) and the helpers the rest of
 * muxbridge uses with one (`failed_check.ts`).
 *
 * Files prefixed `_` are the mechanisms backends share (one program run, the fallback error, a
 * pane id in the backend's form, the version gate, a one-time step kept once it succeeds, the
 * binary doctor check): only `backends/` imports them, and nothing here re-exports them.
 *
 * What lives here may import `lib/sys/`, `lib/config.ts`, `lib/identity.ts` and
 * `lib/validate.ts`, never `backends/`, `lib/session/`, `lib/bridge/` or `lib/cli/`: backends sit
 * beside the core and import this folder and `lib/sys/`; the core talks to a {@linkcode Backend}
 * and never to a backend's code.
 *
 * @module
 */

export * from "./backend.ts";
export * from "./failed_check.ts";
