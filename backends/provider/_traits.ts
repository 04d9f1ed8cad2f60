/**
 * Private to the provider backend: its traits, what its module declares and its code obeys — the
 * config section, the protocol version, the capabilities and the doctor checks.
 *
 * @module
 */

import { z } from "zod";
import type { Capabilities, SectionConfig } from "../../lib/backend/backend.ts";

/**
 * The `provider` config section.
 *
 * @internal
 */
export const PROVIDER_SECTION = z.strictObject({
  command: z.array(z.string().min(1)).min(1).optional().describe(
    "The pane-provider program and its arguments (argv, no shell), for backend provider: started once and spoken to in JSON-RPC over its stdin and stdout (docs/provider-protocol.md)",
  ),
}).prefault({}).describe("pane-provider backend");

/** The config the provider backend reads: muxbridge's keys and its `provider` section. */
export type ProviderConfig = SectionConfig<"provider", typeof PROVIDER_SECTION>;

/** The protocol version muxbridge speaks (a string, as the CustomPaneBackend proposal's). */
export const PROVIDER_PROTOCOL_VERSION = "1";

/**
 * What the provider backend can do at most: a provider's `initialize` declares its own, and
 * muxbridge keeps no marks in a provider.
 */
export const PROVIDER_CAPABILITIES: Capabilities = {
  layout: true,
  title: true,
  env: true,
  marks: false,
  focusSafe: true,
  spawnToken: true,
};

/** The checks of its `doctor`, in order. */
export const PROVIDER_DOCTOR = [
  "provider command",
  "provider handshake",
  "provider list",
  "provider credentials",
] as const;
