/**
 * The pane-provider backend (`backend: "provider"`): muxbridge's panes through any program that
 * speaks the pane-provider protocol (`docs/provider-protocol.md`).
 *
 * @module
 */

import type { BackendModule } from "../../lib/backend/backend.ts";
import {
  PROVIDER_CAPABILITIES,
  PROVIDER_DOCTOR,
  PROVIDER_PROTOCOL_VERSION,
  PROVIDER_SECTION,
} from "./_traits.ts";

/** The pane-provider backend. */
export const provider: BackendModule<"provider", typeof PROVIDER_SECTION> = {
  name: "provider",
  title: "a pane provider",
  summary:
    "Any program that speaks the pane-provider protocol (JSON-RPC over its stdin and stdout)",
  // Never detected: the config names it (`backend: "provider"`, `provider.command`).
  detect: null,
  config: { schema: PROVIDER_SECTION, external: { command: "program" } },
  version: {
    scheme: "protocol",
    protocol: "pane-provider protocol",
    version: PROVIDER_PROTOCOL_VERSION,
  },
  capabilities: PROVIDER_CAPABILITIES,
  doctor: PROVIDER_DOCTOR,
  hints: { outside: "provider.command" },
  readme: {
    versions: "[pane-provider protocol](docs/provider-protocol.md) 1",
    detectedFrom: 'never: `backend: "provider"` with `provider.command` (argv)',
    spawn: "`spawn` in JSON-RPC 2.0 to one long-lived provider process (stdin/stdout)",
    close: "`interrupt` → grace → `close` (`list`)",
    layout: "as the provider's `initialize` says",
    title: "as the provider says",
    focusSafe: "as the provider says",
    credentials: "only to a provider that promises `env`, else refused (`auth_unsupported`)",
    marks: "none (state records)",
    verified:
      "the example providers against **the real tmux 3.3a** (`examples/providers/tmux`) and **the real GNU screen 4.09** (`examples/providers/screen`); failures against a scripted misbehaving provider process",
  },
  schemas: {
    provider: async () => (await import("./protocol.ts")).providerJsonSchema(),
  },
  create: async (deps) => (await import("./backend.ts")).createProviderBackend(deps),
};
