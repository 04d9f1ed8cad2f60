/**
 * Private to the zellij backend: opening a pane — `new-pane` in the anchor's tab with the
 * program after `--` (credentials through a private file its `/bin/sh` reads and removes), the
 * pane found in zellij's answer or, when zellij printed no id, by listing — one spawn at a time.
 *
 * @module
 */

import semver from "semver";
import { checkProgramArgv } from "../../lib/backend/_program_argv.ts";
import type { BackendDeps, SpawnedPane, SpawnRequest } from "../../lib/backend/backend.ts";
import type { PaneCredentials } from "../../lib/backend/_pane_credentials.ts";
import { tokenArgv } from "../../lib/backend/spawn_token.ts";
import { credentialsArgv, removeCredentialsFile } from "../../lib/sys/credentials_file.ts";
import { MuxError } from "../../lib/sys/errors.ts";
import {
  cleanTitle,
  type PaneId,
  validateDirectory,
  validateTarget,
} from "../../lib/sys/validate.ts";
import { type ZellijCommand, zellijError } from "./_command.ts";
import type { ZellijPanes } from "./_panes.ts";
import { parseNewPaneId } from "./_parse.ts";
import { splitDirection } from "./_place.ts";
import type { ZellijConfig } from "./_traits.ts";
import { NO_FOCUS_VERSION } from "./_version.ts";

/** The program argv: zellij runs what follows `--` directly, without a shell (§2). */
function programArgv(argv: readonly string[]): string[] {
  checkProgramArgv(argv);
  return [...argv];
}

/**
 * Runs calls one at a time, in the order they were made; a failed call does not stop the next.
 * zellij spawns need it: each lists the panes before and after its own split.
 *
 * @param run The call.
 * @returns The call, queued behind the ones still running.
 */
export function oneAtATime<A, R>(run: (arg: A) => Promise<R>): (arg: A) => Promise<R> {
  let queue: Promise<unknown> = Promise.resolve();
  return (arg) => {
    const next = queue.then(() => run(arg));
    queue = next.catch(() => {});
    return next;
  };
}

/**
 * Finds the pane a `new-pane` opened without printing its id: the one terminal pane of the tab
 * that was not there before (ids are never reused since 0.44.0, PR #4859) and carries the
 * title. Several candidates (another client split at the same time) are refused rather than
 * guessed: muxbridge must never later close a pane it did not open.
 */
async function findNewPane(
  panes: ZellijPanes,
  before: ReadonlySet<string>,
  tabId: number | undefined,
  title: string,
  signal?: AbortSignal,
): Promise<PaneId | null> {
  const fresh = (await panes.list(signal)).filter((p) =>
    !before.has(p.paneId) && (tabId === undefined || p.tabId === tabId)
  );
  const named = title === "" ? fresh : fresh.filter((p) => p.title === title);
  if (named.length === 1) return named[0].paneId;
  if (named.length === 0) return null;
  throw new MuxError(
    "command_failed",
    `Cannot tell which of ${named.map((p) => p.paneId).join(", ")} zellij just opened`,
    { hint: "Another program opened panes at the same time; close the extra pane by hand" },
  );
}

/**
 * `spawn` (call it through {@linkcode oneAtATime}): opens the pane in the anchor's tab, split
 * by `layout`, retried once without `--direction` when zellij opened nothing, then titles it.
 *
 * zellij has no per-pane environment (its panes get the server's, §2), so the variables of
 * `req.env` (the server's credentials) go into a private file that the pane's explicit
 * `/bin/sh` reads and removes before it `exec`s the program (`lib/sys/credentials_file.ts`):
 * never on an argv (zellij's `new-pane` argv is readable by every user in `/proc`), never typed.
 *
 * @param ctx The backend's deps (config `layout`, log), command runner, reads and the
 *   credentials files of its panes.
 * @param req The spawn request.
 * @returns The pane.
 * @throws {MuxError} `no_space` when zellij opened nothing, `command_failed` when the new pane
 *   cannot be told apart (or its credentials file cannot be written), `invalid_config` when the
 *   state directory is not private, or what zellij answered.
 */
export async function openPane(
  ctx: {
    deps: BackendDeps<ZellijConfig>;
    zellij: ZellijCommand;
    panes: ZellijPanes;
    credentials: PaneCredentials;
  },
  req: SpawnRequest,
): Promise<SpawnedPane> {
  const { panes } = ctx;
  validateTarget("owner", req.owner);
  const cwd = validateDirectory(req.cwd);
  const title = cleanTitle(req.title);
  const argv = programArgv(req.argv);
  const v = await panes.version(req.signal);
  const credentials = ctx.credentials.write(req.env);
  try {
    // With a token the pane's start command (zellij's `terminal_command`) carries it; the
    // credentials file's path is there too, never its content.
    const program = tokenArgv(credentialsArgv(argv, credentials), req.token);
    const paneId = await splitAndTitle(ctx, { program, cwd, title, v }, req.signal);
    ctx.credentials.keep(paneId, credentials);
    return { paneId };
  } catch (err) {
    // No pane to hand the file to (a pane that opened after all is found by its token and
    // fails to start without it).
    if (credentials) removeCredentialsFile(credentials);
    throw err;
  }
}

/** The split (retried once without a direction) and the title, for {@linkcode openPane}. */
async function splitAndTitle(
  ctx: { deps: BackendDeps<ZellijConfig>; zellij: ZellijCommand; panes: ZellijPanes },
  what: { program: readonly string[]; cwd: string; title: string; v: string },
  signal?: AbortSignal,
): Promise<PaneId> {
  const { deps, zellij, panes } = ctx;
  const { program, cwd, title, v } = what;
  const before = await panes.list(signal);
  const tabId = panes.anchorTab(before);
  const known = new Set(before.map((p) => p.paneId));
  const direction = splitDirection(deps.config.layout);
  // `--opt=value` so a title or directory can never be read as a flag by clap.
  const open = (directed: boolean) => [
    "new-pane",
    ...(tabId === undefined ? [] : ["--tab-id", String(tabId)]),
    ...(directed ? ["--direction", direction] : []),
    ...(title === "" ? [] : [`--name=${title}`]),
    `--cwd=${cwd}`,
    // The pane goes when its program ends, as a tmux pane does; a held pane would need a kill
    // after every graceful exit.
    "--close-on-exit",
    ...(semver.gte(v, NO_FOCUS_VERSION) ? ["--no-focus"] : []),
    "--",
    ...program,
  ];
  let paneId: PaneId | null = null;
  for (const directed of [true, false]) {
    const stdout = await zellij.must("open a pane", open(directed), signal);
    paneId = parseNewPaneId(stdout) ?? await findNewPane(panes, known, tabId, title, signal);
    if (paneId) break;
    // A crowded tab drops a directed split silently (exit 0, nothing printed; §2): try once more
    // and let zellij place the pane where it has room.
    deps.log.debug(`zellij printed no pane id and opened nothing; retrying without --direction`);
  }
  if (!paneId) {
    throw new MuxError("no_space", "Cannot open a zellij pane: zellij opened nothing", {
      hint: "Close some panes or enlarge the terminal",
    });
  }
  if (title !== "") {
    // Belt and braces: 0.44.0 ignored --name in some paths (PR #4979).
    const renamed = await zellij.action(["rename-pane", "-p", paneId, "--", title], signal);
    if (renamed.code !== 0) {
      deps.log.warn(zellijError(`title pane "${paneId}"`, renamed).message);
    }
  }
  return paneId;
}
