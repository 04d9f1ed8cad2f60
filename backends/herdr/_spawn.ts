/**
 * Private to the herdr backend: opening a pane, one at a time. The request is checked first
 * (owner, cwd, argv, variables); then the version is gated, the place chosen (`_place.ts`), the
 * pane split with the launch command in its environment and the credentials in a private file
 * (`_launch.ts`), the constant launch line typed, the label set and the agent reported.
 *
 * @module
 */

import { checkProgramArgv } from "../../lib/backend/_program_argv.ts";
import type { BackendDeps, SpawnedPane, SpawnRequest } from "../../lib/backend/backend.ts";
import { SPAWN_TOKEN_VAR, tokenMarker } from "../../lib/backend/spawn_token.ts";
import { type CredentialsFile, removeCredentialsFile } from "../../lib/sys/credentials_file.ts";
import { writePaneCredentials } from "../../lib/backend/_pane_credentials.ts";
import {
  cleanTitle,
  type PaneId,
  validateDirectory,
  validateEnv,
  validateTarget,
  validateText,
} from "../../lib/sys/validate.ts";
import type { AgentReporter } from "./_agent.ts";
import type { HerdrApi } from "./_api.ts";
import { paneShellPid } from "./_inspect.ts";
import { LAUNCH_LINE, LAUNCH_VAR, launchCommand } from "./_launch.ts";
import { herdrPaneId } from "./_parse.ts";
import { placePane } from "./_place.ts";
import { setPaneTitle } from "./_title.ts";
import type { HerdrConfig } from "./_traits.ts";

/** The token, checked (tokenMarker throws for anything else). */
const checkToken = (token: string) => (tokenMarker(token), token);

/** Variables herdr manages itself (a caller's `--env` cannot override them, docs/backends/herdr.md §4). */
const RESERVED_ENV = new Set([
  "HERDR_ENV",
  "HERDR_SOCKET_PATH",
  "HERDR_BIN_PATH",
  "HERDR_WORKSPACE_ID",
  "HERDR_TAB_ID",
  "HERDR_PANE_ID",
  LAUNCH_VAR,
  SPAWN_TOKEN_VAR,
]);

/** What a backend's spawns keep between calls. */
export interface SpawnState {
  /** Panes this backend opened, oldest first: later splits stack beside the newest. */
  opened: string[];
  /** Credentials files not yet read by their pane's shell, by pane: removed when it closes. */
  envFiles: Map<string, CredentialsFile>;
  /** The last spawn: the next one starts after it settles. */
  queue: Promise<unknown>;
}

/**
 * A backend's spawn state, before its first spawn.
 *
 * @returns No pane opened, no credentials file, nothing queued.
 */
export function createSpawnState(): SpawnState {
  return { opened: [], envFiles: new Map(), queue: Promise.resolve() };
}

/**
 * Removes a pane's credentials file, if its shell has not already.
 *
 * @param envFiles The backend's credentials files by pane.
 * @param paneId The pane.
 */
export function forgetEnvFile(envFiles: Map<string, CredentialsFile>, paneId: string): void {
  const envFile = envFiles.get(paneId);
  if (!envFile) return;
  envFiles.delete(paneId);
  removeCredentialsFile(envFile);
}

/** What {@linkcode spawnPane} uses of the backend. */
export interface SpawnContext {
  /** The backend's deps (config `layout`, log). */
  deps: BackendDeps<HerdrConfig>;
  /** herdr's operations. */
  api: HerdrApi;
  /** The agent reporter (the first status). */
  agents: AgentReporter;
  /** The pane muxbridge runs in, if it splits off it. */
  anchor(): PaneId | undefined;
  /** What spawns keep. */
  state: SpawnState;
}

/**
 * Opens a pane for a child, after the spawns before it: concurrent splits of the same pane land
 * on top of each other (OMOS #762).
 *
 * @param ctx The backend's deps, operations, reporter, anchor and spawn state.
 * @param req The spawn.
 * @returns The new pane and, when herdr tells, its shell's pid.
 * @throws {MuxError} `invalid_argument` for a bad request; what herdr answered.
 */
export function spawnPane(ctx: SpawnContext, req: SpawnRequest): Promise<SpawnedPane> {
  const run = ctx.state.queue.then(() => openPane(ctx, req));
  ctx.state.queue = run.catch(() => {});
  return run;
}

/** One spawn, once the ones before it settled. */
async function openPane(ctx: SpawnContext, req: SpawnRequest): Promise<SpawnedPane> {
  const { deps, api, agents, state } = ctx;
  validateTarget("owner", req.owner);
  const cwd = validateDirectory(req.cwd);
  const title = cleanTitle(req.title);
  checkProgramArgv(req.argv);
  validateEnv(req.env, RESERVED_ENV);
  const line = validateText("pane command", LAUNCH_LINE);
  await api.version(req.signal);
  const { target, direction } = await placePane({
    layout: deps.config.layout,
    opened: state.opened,
    list: (signal) => api.list(signal),
    anchor: ctx.anchor,
  }, req.signal);
  const envFile = writePaneCredentials(deps, req.env);
  let paneId: PaneId;
  try {
    // Only the command travels in the pane's environment, on either transport: the
    // credentials stay in their private file (see herdr/_launch.ts).
    paneId = herdrPaneId(
      await api.split({
        ...(target === undefined ? {} : { target }),
        direction,
        cwd,
        env: {
          [LAUNCH_VAR]: launchCommand(req.argv, envFile),
          // In the shell's environment from the split on, and the program's after `exec`.
          ...(req.token === undefined ? {} : { [SPAWN_TOKEN_VAR]: checkToken(req.token) }),
        },
      }, req.signal),
    );
  } catch (err) {
    if (envFile) removeCredentialsFile(envFile);
    throw err;
  }
  if (envFile) state.envFiles.set(paneId, envFile);
  const pid = await paneShellPid(api, deps.log, paneId, req.signal);
  try {
    await api.run(paneId, line, req.signal);
  } catch (err) {
    // A shell pane without the program would stay forever: close it.
    await api.close(paneId).catch(() => {});
    forgetEnvFile(state.envFiles, paneId);
    throw err;
  }
  state.opened.push(paneId);
  if (title !== "") {
    try {
      await setPaneTitle(api, paneId, title, req.signal);
    } catch (err) {
      deps.log.warn(`herdr: cannot title pane ${paneId}: ${(err as Error).message}`);
    }
  }
  if (req.status !== undefined && req.status.state !== "unknown") {
    // The pane is open either way: a report that fails now goes again at the next change.
    await agents.report(paneId, req.status, req.signal).catch((err) =>
      deps.log.debug(`herdr: cannot report the agent of ${paneId}: ${(err as Error).message}`)
    );
  }
  return pid === undefined ? { paneId } : { paneId, pid };
}
