/**
 * Shared set-up of the real-life end-to-end tests: a private tmux server, a config file for the
 * bridge and the CLI, the state directory, and ways to run both and read tmux's real state.
 *
 * @module
 */

import { createRealClock } from "../../lib/sys/clock.ts";
import { type CliRun, runCli as runCliProcess } from "./cli_process.ts";
import { startTmuxServer, type TmuxServer, type TmuxServerOptions } from "./tmux_server.ts";

/** The real clock: bounds on real processes only, never in the product's own timing. */
export const clock = createRealClock();

/** What {@linkcode realLife} set up. */
export interface RealLife {
  /** The private tmux server. */
  server: TmuxServer;
  /** A scratch directory of this test (bridge dir, config, state). */
  dir: string;
  /** The environment for the bridge and the CLI. */
  env: Record<string, string>;
  /** Removes everything (kills the server). */
  close(): Promise<void>;
}

/**
 * Starts a private tmux server and writes a config for it.
 *
 * @param config Config keys over fast test timings (`opencode_bin` is required), or a function
 *   of the test's directory (and the tmux server) that returns them (to put a stand-in there).
 * @param options tmux server options.
 * @returns The set-up; always `close()` it.
 */
export async function realLife(
  config:
    | Record<string, unknown>
    | ((dir: string, server: TmuxServer) => Promise<Record<string, unknown>>),
  options: TmuxServerOptions = {},
): Promise<RealLife> {
  const server = await startTmuxServer(options);
  const dir = `${server.dir}/bridge`;
  await Deno.mkdir(dir);
  const keys = typeof config === "function"
    ? await config(dir, server).catch(async (err) => {
      await server.close();
      throw err;
    })
    : config;
  const env = await tmuxBridgeEnv(server, dir, {
    idle_close_delay_ms: 200,
    min_pane_lifetime_ms: 200,
    close_grace_ms: 200,
    poll_interval_ms: 250,
    ...keys,
  });
  return { server, dir, env, close: () => server.close() };
}

/**
 * Writes `dir/config.json` for a bridge on a private tmux server (`tmux` keys are merged over the
 * server's socket and anchor) and returns the environment that points the bridge and the CLI at
 * it: that config, the state directory `dir/state` and a private XDG config home, so nothing of
 * the user's is read or written.
 *
 * @param server The private tmux server.
 * @param dir The bridge's directory.
 * @param keys Config keys over `backend: "tmux"` and the server's socket and anchor.
 * @returns The environment.
 */
export async function tmuxBridgeEnv(
  server: TmuxServer,
  dir: string,
  keys: Record<string, unknown> = {},
): Promise<Record<string, string>> {
  const { tmux, ...rest } = keys as { tmux?: Record<string, unknown> };
  const configPath = `${dir}/config.json`;
  await Deno.writeTextFile(
    configPath,
    JSON.stringify({
      backend: "tmux",
      tmux: { socket_name: server.socketName, target: server.anchorPane, ...tmux },
      ...rest,
    }),
  );
  return {
    ...server.env,
    MUXBRIDGE_CONFIG: configPath,
    MUXBRIDGE_STATE_DIR: `${dir}/state`,
    XDG_CONFIG_HOME: `${dir}/xdg`,
  };
}

/**
 * Runs one muxbridge CLI command with this set-up's environment (the black-box runner of
 * `cli_process.ts`, which also bounds the run).
 *
 * @returns Its exit code and output.
 */
export function runCli(args: string[], env: Record<string, string>): Promise<CliRun> {
  return runCliProcess(args, { env });
}

/** One pane as tmux reports it. */
export interface LivePane {
  /** `@N`. */
  window: string;
  /** `left,top widthxheight`. */
  geometry: string;
  /** The `@muxbridge-session` mark. */
  session: string;
}

/** Every pane of the server, by id. */
export async function livePanes(server: TmuxServer): Promise<Map<string, LivePane>> {
  const out = await server.tmux([
    "list-panes",
    "-a",
    "-F",
    "#{pane_id}\t#{window_id}\t#{pane_left},#{pane_top} #{pane_width}x#{pane_height}\t#{@muxbridge-session}",
  ]);
  const map = new Map<string, LivePane>();
  // Not trimmed: an empty mark is a trailing empty field.
  for (const line of out.split("\n").filter(Boolean)) {
    const [id, window, geometry, session] = line.split("\t");
    map.set(id, { window, geometry, session });
  }
  return map;
}

/** A predicate on bridge output lines. */
export const isType =
  (type: string, sessionID?: string, reason?: string) => (l: Record<string, unknown>) =>
    l.type === type && (sessionID === undefined || l.sessionID === sessionID) &&
    (reason === undefined || l.reason === reason);
