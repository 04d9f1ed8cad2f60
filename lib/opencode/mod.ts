/**
 * The OpenCode side, for both release lines: the line seam (`line.ts`: everything that differs
 * between OpenCode 1.x and 2.x, one object per line in `v1/` and `v2/`), the events decoded into
 * muxbridge's words (`events.ts`, `decode.ts`), the HTTP client of the server (`client.ts`),
 * readiness before a pane opens (`readiness.ts`), status polling (`status_poller.ts`),
 * credentials (`credentials.ts`) and which server origin they may go to (`origin.ts`), and the
 * 2.x service's own record of its URL and password (`v2/service.ts`). What these rely on in
 * OpenCode is in `docs/opencode.md`.
 *
 * May import: `lib/config/` (to describe schema issues) and `lib/sys/`. It knows nothing of
 * sessions' panes, backends, the bridge or the CLI. `tests/import_direction_test.ts` keeps it so.
 *
 * @module
 */

export { createOpencodeClient, type OpencodeClient } from "./client.ts";
export { type Credentials, envCredentials } from "./credentials.ts";
export { decodeEvent, readsEvent } from "./decode.ts";
export type { DecodedEvent, OpencodeEvent, SessionInfo } from "./events.ts";
export {
  lineById,
  type LineId,
  lineOf,
  LINES,
  type OpencodeLine,
  supportedRanges,
} from "./line.ts";
export { type CredentialGrant, credentialsFor, grantFor, originOf } from "./origin.ts";
export { type Readiness, waitUntilReady } from "./readiness.ts";
export { StatusPoller } from "./status_poller.ts";
