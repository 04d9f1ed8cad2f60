/**
 * Private to the provider backend: its traits, what its module declares and its code obeys — the
 * config section, the protocol version, the capabilities and the doctor checks.
 *
 * @module
 */

import { z } from "zod";
import type { Capabilities, Ownership, SectionConfig } from "../../lib/backend/backend.ts";

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

/**
 * How the provider backend proves a pane is the recorded one (`_panes.ts`,
 * docs/backends/provider.md §6): the instance is what the provider says in `initialize`
 * (`instance`), the pane's program the spawn token its `list` reports. Both are the provider's
 * word, which is enough to ask the provider to close its own pane; a pid it reports is its word
 * too, and is signalled only while that process's environment carries the pane's spawn token.
 */
export const PROVIDER_OWNERSHIP: Ownership = {
  instance: "the provider's own word: initialize's instance",
  pid: "claimed",
};

/** The checks of its `doctor`, in order. */
export const PROVIDER_DOCTOR = [
  "provider command",
  "provider handshake",
  "provider list",
  "provider credentials",
] as const;
