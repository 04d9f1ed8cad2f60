/**
 * Pane providers for tests: the example providers under `examples/providers/` started by the
 * Deno that runs the tests, backend deps for the provider backend, and the contract fixture of
 * an example provider on its host.
 *
 * @module
 */

import { fileURLToPath } from "node:url";
import { createProviderBackend } from "../../backends/provider/backend.ts";
import type { BackendDeps } from "../../lib/backend/backend.ts";
import { createRealClock } from "../../lib/sys/clock.ts";
import type { ConfigLayer } from "../../lib/config/config.ts";
import { type FullConfig, resolveConfig } from "../helpers/config.ts";
import { createLineProcessOpener, type LineProcessOpener } from "../../lib/sys/line_process.ts";
import { type Logger, silentLogger } from "../../lib/sys/log.ts";
import type { ContractFixture } from "./_contract.ts";
import { answerFault, losingOpener } from "./_lost_answer.ts";

/** The example tmux provider. */
export const TMUX_PROVIDER = fileURLToPath(
  new URL("../../examples/providers/tmux/provider.ts", import.meta.url),
);

/** The example screen provider. */
export const SCREEN_PROVIDER = fileURLToPath(
  new URL("../../examples/providers/screen/provider.ts", import.meta.url),
);

/** The fake, scriptable provider (`tests/fakes/bin/pane-provider`). */
export const FAKE_PROVIDER = fileURLToPath(
  new URL("../fakes/bin/pane-provider", import.meta.url),
);

/**
 * The argv that runs a provider script on the Deno running the tests, with what the examples
 * ask for in their `#!` line (no config file of this repository; run, file and uid access).
 *
 * @param script The provider file.
 * @param args Its arguments.
 * @returns The `provider.command`.
 */
export function denoProvider(script: string, args: readonly string[] = []): string[] {
  return [
    Deno.execPath(),
    "run",
    "--quiet",
    "--no-config",
    "--no-lock",
    "--allow-run",
    "--allow-env",
    "--allow-read",
    "--allow-write",
    "--allow-sys",
    script,
    ...args,
  ];
}

/**
 * The real line-process opener with `env` added to every provider started.
 *
 * @param env Variables for the provider (a private tmux's HOME and TMUX_TMPDIR…).
 * @returns The opener.
 */
export function openerWith(env: Readonly<Record<string, string>>): LineProcessOpener {
  const open = createLineProcessOpener();
  return (argv, options) => open(argv, { ...options, env: { ...env, ...options.env } });
}

/**
 * Backend deps for the provider backend running `command`.
 *
 * @param command The provider's argv.
 * @param flags More config.
 * @param log The logger. @default silent
 * @returns The deps.
 */
export function providerDeps(
  command: readonly string[],
  flags: ConfigLayer = {},
  log: Logger = silentLogger,
): BackendDeps<FullConfig> {
  return {
    run: () => Promise.reject(new Error("the provider backend runs no one-shot program")),
    env: () => undefined,
    clock: createRealClock(),
    config: resolveConfig({
      env: () => undefined,
      flags: { backend: "provider", provider: { command: [...command] }, ...flags },
    }),
    identity: { backend: null, layers: [], harness: { name: null } },
    log,
  };
}

/** What an example provider drives: a private tmux server or GNU screen session. */
export interface ProviderHost {
  /** Variables the provider needs to reach it (HOME, TMUX_TMPDIR, SCREENDIR, …). */
  env: Readonly<Record<string, string>>;
  /** A scratch directory (removed by `close`). */
  dir: string;
  /** Every pane (window) of the host, read without the provider. */
  paneIds(): Promise<string[]>;
  /** Restarts the host on the same socket or session name (`ContractFixture.restart`). */
  restart(): Promise<void>;
  /** Opens a pane (window) of the user's, not through the provider (`ContractFixture.userPane`). */
  userPane(): Promise<{ paneId: string; pid: number }>;
  /** Whether the provider's pane ids can come back after a restart. @default true */
  idsRepeat?: boolean;
  /** Stops the host and removes its files. */
  close(): Promise<void>;
}

/**
 * The contract fixture of an example provider: the provider backend running `script` on `host`,
 * whose spawn answers the contract can lose, probed as `selectBackend` does before any use (the
 * capabilities come from the provider's handshake). A failed probe stops the provider and the
 * host before it is thrown.
 *
 * @param script The example provider.
 * @param args Its arguments (which host to drive).
 * @param host The host.
 * @returns The fixture.
 */
export async function exampleProviderFixture(
  script: string,
  args: readonly string[],
  host: ProviderHost,
): Promise<ContractFixture> {
  const answers = answerFault();
  const backend = createProviderBackend(providerDeps(denoProvider(script, args)), {
    open: losingOpener(openerWith(host.env), answers, (line) => line.includes('"spawn"')),
  });
  const close = async () => {
    await backend.dispose?.();
    await host.close();
  };
  try {
    await backend.probe();
  } catch (err) {
    await close();
    throw err;
  }
  return {
    backend,
    dir: host.dir,
    answers,
    paneIds: () => host.paneIds(),
    restart: () => host.restart(),
    userPane: () => host.userPane(),
    ...(host.idsRepeat === undefined ? {} : { idsRepeat: host.idsRepeat }),
    close,
  };
}
