/**
 * What several commands need: the resolved config, the detected identity, the chosen backend
 * and the pane store.
 *
 * @module
 */

import type { Credentials } from "../../opencode/credentials.ts";
import type { Backend, BackendDeps } from "../../backend/backend.ts";
import {
  type Config,
  configPath,
  parseConfigText,
  resolveConfig,
  stateDir,
} from "../../config/config.ts";
import { MuxError } from "../../sys/errors.ts";
import { detectIdentity } from "../../backend/identity.ts";
import { createOpencodeClient, type OpencodeClient } from "../../opencode/client.ts";
import type { LineId } from "../../opencode/line.ts";
import { createPaneStore, type PaneStore } from "../../session/pane_store.ts";
import { selectBackend } from "../../backend/select.ts";
import type { CliDeps, GlobalFlags } from "./_command.ts";

/**
 * Resolves the config from the file, the environment, the global flags and a hello layer.
 *
 * @param global The global flags.
 * @param deps The CLI deps.
 * @param hello A `bridge.hello` config layer.
 * @returns The config.
 * @throws {MuxError} `invalid_config` (exit 3), naming the file and key.
 */
export function loadConfig(global: GlobalFlags, deps: CliDeps, hello?: unknown): Config {
  const where = configPath(global.config, deps.env);
  let file: { path: string; data: unknown } | undefined;
  if (where) {
    const text = deps.readText(where.path);
    if (text === null && where.explicit) {
      throw new MuxError(
        "invalid_config",
        `Cannot read config file "${where.path}": it does not exist`,
        {
          hint: "Create it, or drop --config / MUXBRIDGE_CONFIG to use the defaults",
        },
      );
    }
    if (text !== null) file = { path: where.path, data: parseConfigText(where.path, text) };
  }
  const flags: Record<string, unknown> = {};
  if (global.backend !== undefined) flags.backend = global.backend;
  if (global.logLevel !== undefined) flags.log_level = global.logLevel;
  if (global.logFile !== undefined) flags.log_file = global.logFile;
  return resolveConfig({
    backends: deps.backends,
    ...(file ? { file } : {}),
    env: deps.env,
    flags,
    ...(hello !== undefined ? { hello } : {}),
    warn: (message) => deps.log.warn(message),
  });
}

/**
 * The deps a backend is built from.
 *
 * @param config The config.
 * @param deps The CLI deps.
 * @returns Backend deps.
 */
export function backendDeps(config: Config, deps: CliDeps): BackendDeps {
  return {
    run: deps.run,
    env: deps.env,
    clock: deps.clock,
    config,
    identity: detectIdentity(deps.env, deps.backends),
    log: deps.log,
  };
}

/**
 * Chooses and probes the backend, or fails with the reason.
 *
 * @param config The config.
 * @param deps The CLI deps.
 * @returns The backend.
 * @throws {MuxError} `no_backend`, `binary_not_found`, `unsupported_version` (exit 3) or
 *   `backend_unreachable` (exit 1).
 */
export async function openBackend(config: Config, deps: CliDeps): Promise<Backend> {
  const selection = await selectBackend(backendDeps(config, deps), deps.backends, deps.signal);
  if (selection.ok) return selection.backend;
  const code =
    selection.code === "backend_unreachable" || selection.code === "unsupported_version" ||
      selection.code === "binary_not_found"
      ? selection.code
      : "no_backend";
  throw new MuxError(code, selection.message, { hint: selection.hint });
}

/**
 * A client for an OpenCode server over the CLI's fetch and clock.
 *
 * @param deps The CLI deps.
 * @param url The normalised server URL.
 * @param auth Credentials, if any.
 * @returns The client.
 */
export function serverClient(
  deps: CliDeps,
  url: string,
  auth?: Credentials,
  line?: LineId,
): OpencodeClient {
  return createOpencodeClient({
    url,
    fetch: deps.fetch,
    clock: deps.clock,
    ...(auth ? { auth } : {}),
    ...(line === undefined ? {} : { line }),
  });
}

/**
 * The pane store for a config.
 *
 * @param config The config.
 * @param deps The CLI deps.
 * @returns The store.
 */
export function paneStore(config: Config, deps: CliDeps): PaneStore {
  return createPaneStore(stateDir(config, deps.env));
}

/**
 * The panes this process runs in, one per multiplexer layer found in the environment (tmux's
 * `TMUX_PANE`, kitty's `KITTY_WINDOW_ID`, …): never closed by `cleanup` or `close`.
 *
 * @param deps The CLI deps (the environment and the backends).
 * @returns The caller's panes by backend.
 */
export function callerPanes(deps: CliDeps): Array<{ backend: string; paneId: string }> {
  return detectIdentity(deps.env, deps.backends).layers.flatMap((l) =>
    l.paneId === null ? [] : [{ backend: l.backend, paneId: l.paneId }]
  );
}
