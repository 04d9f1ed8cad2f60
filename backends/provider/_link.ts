/**
 * Private to the provider backend: its link to the provider program — the client, started with
 * the first call that needs it, and the last `initialize` answer, which says what the backend
 * can do.
 *
 * @module
 */

import denoConfig from "../../deno.json" with { type: "json" };
import type { BackendDeps, Capabilities } from "../../lib/backend/backend.ts";
import { MuxError } from "../../lib/sys/errors.ts";
import { createLineProcessOpener, type LineProcessOpener } from "../../lib/sys/line_process.ts";
import { validateTarget } from "../../lib/sys/validate.ts";
import { createProviderClient, type ProviderClient, type ProviderInfo } from "./_client.ts";
import type { ProviderConfig } from "./_traits.ts";
import type { ProviderResult } from "./protocol.ts";

/** Seams and bounds of the provider backend (`createProviderBackend`), for tests. */
export interface ProviderBackendOptions {
  /** The line-process seam. @default `createLineProcessOpener()` */
  open?: LineProcessOpener;
  /** The first restart delay after a failure (doubles per failure in a row). @default 200 */
  backoffMs?: number;
  /** The longest restart delay. @default 5000 */
  maxBackoffMs?: number;
}

const NONE: Capabilities = {
  layout: false,
  title: false,
  env: false,
  marks: false,
  focusSafe: false,
  spawnToken: false,
};

/** What to do when `provider.command` is missing or the provider does not answer. */
export const COMMAND_HINT =
  'Set provider.command to the provider program and its arguments, such as ["/path/to/provider"] (docs/provider-protocol.md)';

/** The backend's link to its provider. */
export interface ProviderLink {
  /** `provider.command`, if set. */
  readonly argv: readonly string[] | undefined;
  /**
   * The client, created on first use (the provider starts with its first call).
   *
   * @throws {MuxError} `invalid_config` when `provider.command` is not set.
   */
  rpc(): ProviderClient;
  /**
   * The provider's `initialize` answer (starting it if none runs), kept as the last one known.
   *
   * @throws {MuxError} The errors of {@linkcode ProviderClient.info}.
   */
  info(signal?: AbortSignal): Promise<ProviderInfo>;
  /** What the last known answer promises (nothing before the first), never marks. */
  capabilities(): Capabilities;
  /** Every pane the provider lists. */
  list(signal?: AbortSignal): Promise<ProviderResult<"list">["panes"]>;
  /** Stops the provider, if one was started. */
  stop(): Promise<void>;
}

/**
 * Creates the link of one backend; nothing starts until the first call.
 *
 * @param deps The backend's deps (clock, log, config `provider.command`, `command_timeout_ms`).
 * @param options Seams and restart bounds.
 * @returns The link.
 */
export function createProviderLink(
  deps: BackendDeps<ProviderConfig>,
  options: ProviderBackendOptions,
): ProviderLink {
  const argv = deps.config.provider.command;
  let client: ProviderClient | undefined;
  let known: ProviderInfo | undefined;

  const rpc = (): ProviderClient => {
    if (!argv) {
      throw new MuxError(
        "invalid_config",
        "Cannot use the provider backend: provider.command is not set",
        {
          hint: COMMAND_HINT,
        },
      );
    }
    client ??= createProviderClient({
      argv: argv.map((a, i) => i === 0 ? validateTarget("provider program", a) : a),
      open: options.open ?? createLineProcessOpener(),
      clock: deps.clock,
      log: deps.log,
      timeoutMs: deps.config.command_timeout_ms,
      version: denoConfig.version,
      ...(options.backoffMs !== undefined ? { backoffMs: options.backoffMs } : {}),
      ...(options.maxBackoffMs !== undefined ? { maxBackoffMs: options.maxBackoffMs } : {}),
    });
    return client;
  };

  return {
    argv,
    rpc,
    async info(signal) {
      known = await rpc().info(signal);
      return known;
    },
    capabilities: () => known ? { ...known.capabilities, marks: false } : NONE,
    list: async (signal) => (await rpc().call("list", {}, signal)).panes,
    async stop() {
      await client?.stop();
    },
  };
}
