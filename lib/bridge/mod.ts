/**
 * Bridge mode: the NDJSON protocol the OpenCode plugin speaks (`protocol.ts`: zod schemas for
 * every line in and out, decoding with ids checked once) and the bridge that reads lines, feeds
 * the session loop and writes its reports (`bridge.ts`), with the credentials it holds for the
 * server (`_credentials.ts`).
 *
 * May import: `lib/session/` (the loop and its event types), `lib/opencode/`, the backend
 * contract and `lib/backend/select.ts`, `lib/config/` and `lib/sys/`.
 * Never `lib/cli/` or `backends/`. `tests/import_direction_test.ts` keeps it so.
 *
 * @module
 */

export { type BridgeDeps, type BridgeIO, type BridgeStart, runBridge } from "./bridge.ts";
export {
  type Inbound,
  MAX_LINE_BYTES,
  type OutMessage,
  parseLine,
  PROTOCOL_VERSION,
  protocolJsonSchema,
} from "./protocol.ts";
