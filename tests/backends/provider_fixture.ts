/**
 * Pane providers for tests: the example providers under `examples/providers/` started by the
 * Deno that runs the tests, and backend deps for the provider backend.
 *
 * @module
 */

import { fileURLToPath } from "node:url";
import type { BackendDeps } from "../../lib/backend/backend.ts";
import { createRealClock } from "../../lib/sys/clock.ts";
import type { ConfigLayer } from "../../lib/config.ts";
import { type FullConfig, resolveConfig } from "../helpers/config.ts";
import { createLineProcessOpener, type LineProcessOpener } from "../../lib/sys/line_process.ts";
import { type Logger, silentLogger } from "../../lib/sys/log.ts";

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
