/**
 * Private to the kitty backend: opening a window next to the anchor (`launch`), its credentials
 * in a private file rather than on argv.
 *
 * @module
 */

import type { BackendDeps, SpawnedPane, SpawnRequest } from "../../lib/backend/backend.ts";
import { writePaneCredentials } from "../../lib/backend/_pane_credentials.ts";
import {
  type CredentialsFile,
  removeCredentialsFile,
  sourceAndExec,
} from "../../lib/sys/credentials_file.ts";
import { isMuxError, MuxError, toMuxError } from "../../lib/sys/errors.ts";
import {
  cleanTitle,
  type PaneId,
  validateDirectory,
  validateTarget,
} from "../../lib/sys/validate.ts";
import { ANCHOR_HINT, anchorWindow } from "./_anchor.ts";
import type { KittyCommand } from "./_command.ts";
import { launchArgs } from "./_launch.ts";
import { NEXT_TO_VERSION, parseLaunchOutput, USER_VARS_VERSION } from "./_parse.ts";
import type { ProgramState } from "./_program.ts";
import { titleWindow } from "./_title.ts";
import type { KittyConfig } from "./_traits.ts";

/** What opening a window works with. */
export interface SpawnContext {
  /** The backend's deps (config, identity, log). */
  deps: BackendDeps<KittyConfig>;
  /** The backend's command runner. */
  kitty: KittyCommand;
  /** The program and the version it was read with. */
  program: ProgramState;
  /** Credentials files of windows opened by this backend, until the window is killed. */
  credentials: Map<string, CredentialsFile>;
}

/**
 * Opens a window next to the anchor without taking focus, marked as muxbridge's where kitty has
 * user variables.
 *
 * @param ctx What it works with.
 * @param req The pane to open.
 * @returns The new window's id.
 * @throws {MuxError} `pane_not_found` (with a hint) when the anchor window is gone, or what
 *   kitty answered.
 */
export async function openWindow(ctx: SpawnContext, req: SpawnRequest): Promise<SpawnedPane> {
  const { deps, kitty, program } = ctx;
  const sessionId = req.sessionId;
  const owner = validateTarget("owner", req.owner);
  const cwd = validateDirectory(req.cwd);
  const title = cleanTitle(req.title);
  await program.read(req.signal);
  const anchorId = anchorWindow(deps);
  // Credentials never ride in `launch --env`: that is argv of the `kitty @` client, readable
  // in /proc/<pid>/cmdline while it runs (contract: never on argv). An explicit /bin/sh -c
  // sources them from a private file, removes it, then execs the program.
  const credentials = writePaneCredentials(deps, req.env);
  const argv = credentials ? ["/bin/sh", "-c", sourceAndExec(req.argv, credentials)] : req.argv;
  const plan = launchArgs({
    title,
    cwd,
    argv,
    anchor: anchorId,
    nextTo: program.atLeast(NEXT_TO_VERSION),
    marks: program.atLeast(USER_VARS_VERSION) ? { sessionId, owner } : undefined,
    ...(req.token !== undefined ? { token: req.token } : {}),
  });
  let stdout: string;
  try {
    stdout = await kitty.must(
      anchorId ? `open a window next to window ${anchorId}` : "open a window",
      plan.args,
      req.signal,
    );
  } catch (err) {
    if (credentials) removeCredentialsFile(credentials);
    // launch --match names the anchor's tab: no match means the anchor window is gone.
    if (isMuxError(err, "pane_not_found")) {
      throw new MuxError("pane_not_found", `Cannot find anchor window ${anchorId} in kitty`, {
        cause: err,
        hint: ANCHOR_HINT,
      });
    }
    throw err;
  }
  let paneId: PaneId;
  try {
    paneId = parseLaunchOutput(stdout);
  } catch (err) {
    if (credentials) removeCredentialsFile(credentials);
    throw err;
  }
  if (credentials) ctx.credentials.set(paneId, credentials);
  if (plan.titleAfter !== undefined) {
    await titleWindow(kitty, paneId, plan.titleAfter, req.signal).catch((err) =>
      deps.log.warn(`cannot title kitty window ${paneId}: ${toMuxError(err).message}`)
    );
  }
  return { paneId };
}
