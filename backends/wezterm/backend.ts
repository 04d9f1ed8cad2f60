/**
 * The WezTerm backend (WezTerm >= 20230326-111934-3666303c): one pane per child session, split
 * off the pane muxbridge runs in (or `wezterm.pane_id`) with `wezterm cli split-pane`, its
 * program started by argv, every call addressed by pane id, never by focus.
 *
 * WezTerm cannot run here: this backend is verified against the fake CLI in
 * `tests/fakes/bin/wezterm`, which follows wezterm's CLI source; `docs/backends/wezterm.md`
 * ("§N") says what was checked against which upstream file.
 *
 * What WezTerm cannot do, and what muxbridge does instead:
 * - `split-pane` moves focus to the new pane and has no flag against it (§1): when the user
 *   looks at the anchor's tab (a client's focused pane is in it), that pane is activated again
 *   right after the split (a brief flash); elsewhere nothing is activated, since `activate-pane`
 *   would also switch the user's window to that tab;
 * - no environment flag (§1): credentials go into a private 0600 file an explicit `/bin/sh -c`
 *   sources and removes before it `exec`s the program, on a local pane only (a pane of a remote
 *   domain has no `tty_name`, and the file would not be there): `auth_unsupported` elsewhere;
 * - no start command, user data or environment in `list` (§2): the spawn token is exported into
 *   the pane program's environment and found, with the `WEZTERM_PANE` WezTerm puts there, among
 *   this user's session leaders (`/proc`, Linux; where muxbridge knows the socket, so a pane id
 *   of another WezTerm is never taken for one of this one). Elsewhere `spawnToken` is false and a
 *   split whose answer is unreadable is cleaned up by comparing the tab before and after;
 * - no pane title setter (§3): `set-tab-title` would rename the user's tab, and muxbridge's panes
 *   never have a tab of their own, so `capabilities.title` is false;
 * - no layout command and no ownership marks in `list`: new panes split by `layout` and
 *   `main_pane_size`; ownership lives in muxbridge's records.
 *
 * @module
 */

import { gateVersion } from "../../lib/backend/_version_gate.ts";
import { keepSuccess } from "../../lib/backend/_keep_success.ts";
import type {
  Backend,
  BackendDeps,
  Capabilities,
  Check,
  LayoutResult,
  PaneInfo,
  ProbeResult,
  SpawnedPane,
  SpawnRequest,
} from "../../lib/backend/backend.ts";
import {
  type CredentialsFile,
  removeCredentialsFile,
  writeCredentialsFile,
} from "../../lib/sys/credentials_file.ts";
import { MuxError, toMuxError } from "../../lib/sys/errors.ts";
import { describeArgv } from "../../lib/sys/exec.ts";
import { ENVIRON_READABLE, sessionLeaders } from "../../lib/sys/processes.ts";
import { SPAWN_TOKEN_VAR } from "../../lib/backend/spawn_token.ts";
import {
  cleanTitle,
  type PaneId,
  validateDirectory,
  validateTarget,
} from "../../lib/sys/validate.ts";
import { weztermDoctor } from "./_doctor.ts";
import { splitPlan } from "./_place.ts";
import {
  ANCHOR_HINT,
  createWeztermCommand,
  programArgv,
  splitArgs,
  weztermError,
} from "./_command.ts";
import {
  PANE_ID,
  parseFocused,
  parseList,
  parseSplit,
  type WeztermPane,
  weztermPaneId,
  type WeztermVersion,
  weztermVersion,
} from "./_parse.ts";
import { WEZTERM_CAPABILITIES, WEZTERM_GATE, type WeztermConfig } from "./_traits.ts";

/** A session leader and its environment (`lib/sys/processes.ts` `sessionLeaders`). */
export type SessionLeader = { pid: number; env: Readonly<Record<string, string>> };

/** Seams of {@linkcode createWeztermBackend}, for tests. */
export interface WeztermBackendOptions {
  /**
   * This user's session leaders with their environment, where a pane's program (and the spawn
   * token in it) is found; null: none can be read (no spawn token).
   * @default `sessionLeaders` on Linux, else null
   */
  leaders?: (() => SessionLeader[]) | null;
}

function toInfo(pane: WeztermPane, pid?: number): PaneInfo {
  // With the default exit_behavior ("Close") a pane goes when its program exits; is_dead is read
  // where a build reports it (none in the source read, §2).
  const info: PaneInfo = { paneId: pane.paneId, dead: pane.isDead ?? false, title: pane.title };
  if (pid !== undefined) info.pid = pid;
  return info;
}

/**
 * Creates the WezTerm backend.
 *
 * @param deps Runner, env, clock, config (`wezterm.*`, `layout`, `main_pane_size`,
 *   `command_timeout_ms`), identity (its wezterm layer: the pane and socket muxbridge runs in).
 * @param options Seams.
 * @returns The backend.
 *
 * @example
 * ```ts
 * import type { BackendDeps } from "../../lib/backend/backend.ts";
 * import { validateSessionId } from "../../lib/sys/validate.ts";
 * import type { WeztermConfig } from "./_traits.ts";
 * import { createWeztermBackend } from "./backend.ts";
 *
 * async function openAndClose(deps: BackendDeps<WeztermConfig>): Promise<void> {
 *   const backend = createWeztermBackend(deps);
 *   await backend.probe();
 *   const { paneId } = await backend.spawn({
 *     sessionId: validateSessionId("ses_1"),
 *     title: "fix",
 *     argv: ["opencode", "attach", "http://127.0.0.1:4096", "--session", "ses_1"],
 *     cwd: "/home/me/project",
 *     env: {},
 *     owner: "cli",
 *   });
 *   await backend.kill(paneId);
 * }
 * ```
 */
export function createWeztermBackend(
  deps: BackendDeps<WeztermConfig>,
  options: WeztermBackendOptions = {},
): Backend {
  const wezterm = createWeztermCommand(deps);
  const layer = deps.identity.layers.find((l) => l.backend === "wezterm");
  const leaders = options.leaders === undefined
    ? (ENVIRON_READABLE ? sessionLeaders : null)
    : options.leaders;
  // A pane id names a pane of one WezTerm: a program's WEZTERM_PANE counts only when its
  // WEZTERM_UNIX_SOCKET is the socket muxbridge talks to.
  const socket = wezterm.socket;
  const capabilities: Capabilities = {
    ...WEZTERM_CAPABILITIES,
    spawnToken: leaders !== null && socket !== undefined,
  };
  /** Panes this backend opened (split targets for the next ones), until they are gone. */
  const opened = new Set<string>();
  /** Credentials files of panes opened, until the pane is killed. */
  const credentialFiles = new Map<string, CredentialsFile>();

  const version = keepSuccess(async (signal?: AbortSignal): Promise<WeztermVersion> => {
    const run = await wezterm.version(signal);
    if (run.code !== 0) throw weztermError("read the wezterm version", run);
    const text = run.stdout.trim().split("\n")[0] ?? "";
    return weztermVersion(gateVersion(WEZTERM_GATE, text, { argv: run.argv }));
  });

  const list = async (signal?: AbortSignal): Promise<WeztermPane[]> => {
    await version(signal);
    return parseList(
      await wezterm.must("list wezterm panes", ["list", "--format", "json"], signal),
    );
  };

  const anchorId = (): string => {
    const configured = deps.config.wezterm.pane_id;
    const id = configured !== undefined ? String(configured) : layer?.paneId ?? undefined;
    if (id === undefined || !PANE_ID.test(id)) {
      throw new MuxError(
        "no_backend",
        "Cannot place panes: no WezTerm pane to split (WEZTERM_PANE is unset)",
        {
          hint: ANCHOR_HINT,
        },
      );
    }
    return id;
  };

  /** The pane programs WezTerm started for this socket, by pane id (from their environment). */
  const panePrograms = (): Array<{ paneId: string; pid: number; token?: string }> => {
    if (!capabilities.spawnToken || leaders === null) return [];
    return leaders().flatMap(({ pid, env }) => {
      const paneId = env.WEZTERM_PANE;
      if (paneId === undefined || !PANE_ID.test(paneId) || env.WEZTERM_UNIX_SOCKET !== socket) {
        return [];
      }
      const token = env[SPAWN_TOKEN_VAR];
      return [{ paneId, pid, ...(token !== undefined ? { token } : {}) }];
    });
  };

  /**
   * Closes what a split made when its answer is unreadable and no token can find it: the one
   * pane of the anchor's tab that was not there before. Several (the user split meanwhile) are
   * never guessed at.
   */
  const closeLeftover = async (before: WeztermPane[], tabId: number) => {
    try {
      const was = new Set(before.map((p) => p.paneId));
      const fresh = (await list()).filter((p) => p.tabId === tabId && !was.has(p.paneId));
      if (fresh.length === 1) {
        deps.log.warn(
          `wezterm: closing pane ${fresh[0].paneId}, made by a split whose answer was unreadable`,
        );
        await wezterm.must(`close pane ${fresh[0].paneId}`, [
          "kill-pane",
          "--pane-id",
          fresh[0].paneId,
        ]);
      } else if (fresh.length > 1) {
        deps.log.error(
          `wezterm: a split whose answer was unreadable left one of panes ${
            fresh.map((p) => p.paneId).join(", ")
          }; not closing any (cannot tell which), close it by hand`,
        );
      }
    } catch (err) {
      deps.log.error(`wezterm: cannot close what a split left: ${toMuxError(err).message}`);
    }
  };

  /** The pane the user types into, when it is in the anchor's tab (null: leave focus alone). */
  const userFocus = async (
    tabPanes: WeztermPane[],
    signal?: AbortSignal,
  ): Promise<string | null> => {
    try {
      const focused = parseFocused(
        await wezterm.must("list wezterm clients", ["list-clients", "--format", "json"], signal),
      );
      return focused.find((id) => tabPanes.some((p) => p.paneId === id)) ?? null;
    } catch (err) {
      deps.log.debug(`wezterm: cannot tell where the user's focus is: ${toMuxError(err).message}`);
      return null;
    }
  };

  const spawn = async (req: SpawnRequest): Promise<SpawnedPane> => {
    validateTarget("owner", req.owner);
    const cwd = validateDirectory(req.cwd);
    cleanTitle(req.title); // no title to set (see the module comment), but a title is checked
    if (req.argv.length === 0 || req.argv[0] === "" || req.argv.some((a) => a.includes("\0"))) {
      throw new MuxError("invalid_argument", `Cannot run ${describeArgv(req.argv)} in a pane`, {
        hint: "The pane command needs a program and no NUL characters",
      });
    }
    const anchor = anchorId();
    const before = await list(req.signal);
    const anchorPane = before.find((p) => p.paneId === anchor);
    if (!anchorPane) {
      throw new MuxError("pane_not_found", `Cannot find WezTerm pane ${anchor} to split`, {
        hint: ANCHOR_HINT,
      });
    }
    const withCredentials = Object.keys(req.env).length > 0;
    if (withCredentials && anchorPane.ttyName === null) {
      throw new MuxError(
        "auth_unsupported",
        `Cannot pass credentials to a pane next to WezTerm pane ${anchor}: it belongs to a remote domain (no tty here), where muxbridge's private credentials file does not exist`,
        { hint: "Run OpenCode in a local WezTerm pane, or without a server password" },
      );
    }
    const tabPanes = before.filter((p) => p.tabId === anchorPane.tabId);
    const restoreTo = await userFocus(tabPanes, req.signal);
    const where = splitPlan(
      before,
      anchorPane,
      opened,
      deps.config.layout,
      deps.config.main_pane_size,
    );
    const credentials = withCredentials ? writeCredentialsFile(req.env) : undefined;
    const token = capabilities.spawnToken ? req.token : undefined;
    let stdout: string;
    try {
      stdout = await wezterm.must(
        `open a pane next to pane ${where.target}`,
        splitArgs({ ...where, cwd, program: programArgv(req.argv, { credentials, token }) }),
        req.signal,
      );
    } catch (err) {
      if (credentials) removeCredentialsFile(credentials);
      throw err;
    }
    let paneId: PaneId;
    try {
      paneId = parseSplit(stdout);
    } catch (err) {
      if (credentials) removeCredentialsFile(credentials);
      // wezterm exited 0: the split was made. With a token, the lost-spawn sweep finds it.
      if (!token) await closeLeftover(before, anchorPane.tabId);
      throw err;
    }
    opened.add(paneId);
    if (credentials) credentialFiles.set(paneId, credentials);
    if (restoreTo !== null) {
      // split-pane made the new pane the tab's active one (§1); the user was typing in restoreTo.
      await wezterm.must(`give focus back to pane ${restoreTo}`, [
        "activate-pane",
        "--pane-id",
        restoreTo,
      ], req.signal)
        .catch((err) => deps.log.warn(`wezterm: ${toMuxError(err).message}`));
    }
    const pid = panePrograms().find((p) => p.paneId === paneId)?.pid;
    return pid === undefined ? { paneId } : { paneId, pid };
  };

  const inspect = async (paneId: PaneId, signal?: AbortSignal): Promise<PaneInfo | null> => {
    const id = weztermPaneId(paneId);
    const pane = (await list(signal)).find((p) => p.paneId === id);
    if (!pane) opened.delete(id);
    return pane ? toInfo(pane) : null;
  };

  const findSpawned = async (token: string, signal?: AbortSignal): Promise<PaneInfo[]> => {
    if (!capabilities.spawnToken) return [];
    const programs = panePrograms().filter((p) => p.token === token);
    if (programs.length === 0) return [];
    const panes = await list(signal);
    return programs.flatMap((prog) => {
      const pane = panes.find((p) => p.paneId === prog.paneId);
      return pane ? [toInfo(pane, prog.pid)] : [];
    });
  };

  const kill = async (paneId: PaneId, signal?: AbortSignal) => {
    const id = weztermPaneId(paneId);
    const credentials = credentialFiles.get(id);
    if (credentials) {
      credentialFiles.delete(id);
      removeCredentialsFile(credentials);
    }
    opened.delete(id);
    // kill-pane: SIGHUP, then SIGKILL after ~200 ms, and the pane leaves the list before the call
    // returns (§3).
    await wezterm.must(`close pane ${id}`, ["kill-pane", "--pane-id", id], signal);
  };

  const interrupt = async (paneId: PaneId, signal?: AbortSignal) => {
    const id = weztermPaneId(paneId);
    // --no-paste: the byte goes to the pty as typed, so the tty makes SIGINT of it (a cooked
    // program) or a TUI reads Ctrl+C; a paste would be bracketed text (§3).
    await wezterm.must(`interrupt pane ${id}`, [
      "send-text",
      "--pane-id",
      id,
      "--no-paste",
      "--",
      "\x03",
    ], signal);
  };

  const setTitle = async (paneId: PaneId, _title: string, signal?: AbortSignal) => {
    const id = weztermPaneId(paneId);
    if (!(await list(signal)).some((p) => p.paneId === id)) {
      throw new MuxError("pane_not_found", `Cannot title pane ${id}: WezTerm does not list it`);
    }
    throw new MuxError(
      "unsupported",
      `Cannot title WezTerm pane ${id}: wezterm has no pane title command, and set-tab-title would rename the user's tab`,
    );
  };

  const applyLayout = (): Promise<LayoutResult> =>
    Promise.resolve({
      applied: false,
      detail:
        `WezTerm has no command that arranges panes: new panes split by layout ${deps.config.layout} and main_pane_size ${deps.config.main_pane_size}`,
    });

  const probe = async (signal?: AbortSignal): Promise<ProbeResult> => {
    const v = await version(signal);
    const anchor = anchorId();
    if (!(await list(signal)).some((p) => p.paneId === anchor)) {
      throw new MuxError("no_backend", `Cannot find WezTerm pane ${anchor} to split`, {
        hint: ANCHOR_HINT,
      });
    }
    return { binary: wezterm.bin, version: v.semver };
  };

  const doctor = (signal?: AbortSignal): Promise<Check[]> =>
    weztermDoctor({
      bin: wezterm.bin,
      socket,
      version,
      list,
      anchorId,
      spawnToken: capabilities.spawnToken,
      environReadable: leaders !== null,
    }, signal);

  return {
    name: "wezterm",
    capabilities,
    probe,
    spawn,
    inspect,
    // wezterm's list shows no user data (user vars are not in it, §2): no marks.
    listOwned: () => Promise.resolve([]),
    findSpawned,
    interrupt,
    kill,
    setTitle,
    applyLayout,
    doctor,
  };
}
