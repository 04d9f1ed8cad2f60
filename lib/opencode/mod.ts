/**
 * The OpenCode side: the HTTP client of the server (`client.ts`), readiness before a pane
 * attaches (`readiness.ts`), status polling (`status_poller.ts`), the attach command a pane runs
 * (`attach.ts`), which server origin credentials may go to (`origin.ts`) and the versions whose
 * `attach` muxbridge can use (`version.ts`). What these rely on in OpenCode is in
 * `docs/opencode.md`.
 *
 * May import: `lib/sys/` only. It knows nothing of sessions' panes,
 * backends, the bridge or the CLI. `tests/import_direction_test.ts` keeps it so.
 *
 * @module
 */

export { attachArgv, attachEnv, type Credentials, envCredentials } from "./attach.ts";
export { createOpencodeClient, type OpencodeClient } from "./client.ts";
export { type CredentialGrant, credentialsFor, grantFor, originOf } from "./origin.ts";
export { type Readiness, waitUntilReady } from "./readiness.ts";
export { StatusPoller } from "./status_poller.ts";
export { attachSupport, SUPPORTED_OPENCODE } from "./version.ts";
