/**
 * Loads `plugin/muxbridge.ts` in the test's own process with its state directory (where the
 * plugin keeps its per-process lock) in a folder the test owns, never the developer's
 * `~/.local/state/muxbridge`. The plugin reads `MUXBRIDGE_STATE_DIR` only while it loads, so the
 * variable is set for that call alone.
 *
 * @module
 */

import type { Hooks, PluginInput, PluginOptions } from "@opencode-ai/plugin";
import v1 from "../../plugin/muxbridge.ts";
import { setEnv } from "./env_scope.ts";

/**
 * What OpenCode hands a plugin, as far as muxbridge's plugin reads it.
 *
 * @param dir The project directory (and worktree).
 * @param serverUrl The server URL OpenCode names.
 * @param client OpenCode's client (an in-process fake where a test needs one).
 * @returns The input.
 */
export function pluginInput(
  dir: string,
  serverUrl = "http://127.0.0.1:4096/",
  client: unknown = {},
): PluginInput {
  return {
    serverUrl: new URL(serverUrl),
    directory: dir,
    worktree: dir,
    client,
    project: {},
    experimental_workspace: { register() {} },
    $: {},
  } as unknown as PluginInput;
}

/**
 * Calls the OpenCode 1.x plugin function with `MUXBRIDGE_STATE_DIR` set to `stateDir`.
 *
 * @param stateDir The state directory for this load (created by the plugin if missing).
 * @param input What OpenCode would hand the plugin.
 * @param options The plugin's options.
 * @returns The plugin's hooks.
 */
export function loadPlugin(
  stateDir: string,
  input: PluginInput,
  options: PluginOptions,
): Promise<Hooks> {
  const restore = setEnv({ MUXBRIDGE_STATE_DIR: stateDir });
  try {
    return v1.server(input, options);
  } finally {
    restore();
  }
}
