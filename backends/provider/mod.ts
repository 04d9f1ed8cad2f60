/**
 * The pane-provider backend (`backend: "provider"`): muxbridge's panes through any program that
 * speaks the pane-provider protocol (`docs/provider-protocol.md`).
 *
 * @module
 */

export { createProviderBackend, type ProviderBackendOptions } from "./backend.ts";
export {
  PROVIDER_ERRORS,
  PROVIDER_PANE_ID,
  PROVIDER_PROTOCOL_VERSION,
  providerJsonSchema,
} from "./protocol.ts";
