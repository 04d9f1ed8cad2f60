/**
 * The zellij backend (zellij >= 0.44.1): one pane per child session in the tab of the pane
 * muxbridge runs in, the attach command launched directly (no shell), every action addressed by
 * pane id, never by focus.
 *
 * zellij cannot be installed here: this backend is verified against the fake CLI in
 * `tests/fakes/bin/zellij`, built from `docs/backends/zellij.md` ("§N", read in the zellij
 * source), never against a real zellij.
 *
 * What zellij cannot do, and what muxbridge does instead:
 * - no per-pane environment (zellij issues #1987, #3856, #4031: panes get the *server's*
 *   environment), so credentials cannot reach a pane without argv or typing:
 *   `capabilities.env` is false and the loop reports `auth_unsupported`;
 * - no hidden per-pane data (titles are the clean session title, nothing else), so ownership
 *   survives a crash through muxbridge's durable pane records, not marks: `marks` is false;
 * - no layout command that arranges only some panes: `applyLayout` is an honest no-op and the
 *   split direction is chosen at creation;
 * - no pane pid in `list-panes`: a program that outlives its pane is not terminated by pid.
 *
 * @module
 */

import { checkProgramArgv } from "../../lib/backend/_program_argv.ts";
import semver from "semver";
import { binaryChecks } from "../../lib/backend/_binary_checks.ts";
import { keepSuccess } from "../../lib/backend/_keep_success.ts";
import { gateVersion } from "../../lib/backend/_version_gate.ts";
import type {
  Backend,
  BackendDeps,
  Capabilities,
  Check,
  LayoutRequest,
  LayoutResult,
  PaneInfo,
  ProbeResult,
  SpawnedPane,
  SpawnRequest,
} from "../../lib/backend/backend.ts";
import { failedCheck } from "../../lib/backend/failed_check.ts";
import { MuxError } from "../../lib/sys/errors.ts";
import { carriesToken, tokenArgv } from "../../lib/backend/spawn_token.ts";
import {
  cleanTitle,
  type PaneId,
  validateDirectory,
  validateTarget,
} from "../../lib/sys/validate.ts";
import { createZellijCommand, zellijError } from "./_command.ts";
import { parseNewPaneId, parsePaneList, type ZellijPane, zellijPaneId } from "./_parse.ts";
import {
  ZELLIJ_CAPABILITIES,
  ZELLIJ_DOCTOR,
  ZELLIJ_GATE,
  ZELLIJ_MIN_VERSION,
  type ZellijConfig,
} from "./_traits.ts";

/** `new-pane --no-focus` (PR #5346, §7). */
const NO_FOCUS_VERSION = "0.45.0";

/** The program argv: zellij runs what follows `--` directly, without a shell (§2). */
function programArgv(argv: readonly string[]): string[] {
  checkProgramArgv(argv);
  return [...argv];
}

/**
 * Parses and gates `zellij --version`.
 *
 * @throws {MuxError} `unparseable_output`, `unsupported_version`.
 */
function gateZellij(stdout: string, argv: readonly string[]): string {
  const text = stdout.trim();
  return gateVersion(ZELLIJ_GATE, text, { argv }).semver;
}

/** What to do when the pane muxbridge runs in is not in the session's list. */
const ANCHOR_HINT =
  "Run muxbridge inside the zellij pane it should open panes next to, or set zellij.session";

/**
 * Creates the zellij backend.
 *
 * @param deps Runner, env, clock, config (`zellij`, `layout`, `command_timeout_ms`), identity.
 * @returns The backend.
 *
 * @example Open a pane in the tab muxbridge runs in
 * ```ts
 * import type { BackendDeps } from "../../lib/backend/backend.ts";
 * import { validateSessionId } from "../../lib/sys/validate.ts";
 * import type { ZellijConfig } from "./_traits.ts";
 * import { createZellijBackend } from "./backend.ts";
 *
 * async function openAndClose(deps: BackendDeps<ZellijConfig>): Promise<void> {
 *   const backend = createZellijBackend(deps);
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
export function createZellijBackend(deps: BackendDeps<ZellijConfig>): Backend {
  const zellij = createZellijCommand(deps);
  const layer = deps.identity.layers.find((l) => l.backend === "zellij");
  // focusSafe is set once the version is known (ZELLIJ_CAPABILITIES).
  const capabilities: Capabilities = { ...ZELLIJ_CAPABILITIES, focusSafe: false };
  /** Spawns run one at a time: each lists the panes before and after its own split. */
  let spawnQueue: Promise<unknown> = Promise.resolve();

  /** `zellij --version`, gated; a success is kept for the backend's life. */
  const version = keepSuccess(async (signal?: AbortSignal): Promise<string> => {
    const result = await zellij.version(signal);
    if (result.code !== 0) throw zellijError("read the zellij version", result);
    const v = gateZellij(result.stdout, result.argv);
    capabilities.focusSafe = semver.gte(v, NO_FOCUS_VERSION);
    return v;
  });

  /** Every terminal pane of the session. */
  const listPanes = async (signal?: AbortSignal): Promise<ZellijPane[]> => {
    await version(signal);
    return parsePaneList(
      await zellij.must("list the session's panes", ["list-panes", "--json", "--all"], signal),
    );
  };

  /**
   * The pane, or a `pane_not_found` error. zellij's `write`, `close-pane` and `rename-pane` exit
   * 0 and do nothing for an unknown id (§5), so existence is checked by listing.
   */
  const requirePane = async (id: string, action: string, signal?: AbortSignal) => {
    const pane = (await listPanes(signal)).find((p) => p.paneId === id);
    if (!pane) {
      throw new MuxError("pane_not_found", `Cannot ${action}: zellij does not know pane "${id}"`, {
        hint: "The pane is gone; `muxbridge list` shows what muxbridge still tracks",
      });
    }
    return pane;
  };

  /** The caller's pane (`ZELLIJ_PANE_ID`), when muxbridge runs inside the session it uses. */
  const anchorId = (): string | undefined => {
    if (!layer?.paneId) return undefined;
    if (deps.config.zellij.session && deps.config.zellij.session !== layer.session) {
      return undefined;
    }
    return zellijPaneId(layer.paneId);
  };

  /** The tab to open panes in: the caller's pane's tab, never a guess (OMOS PR #774). */
  const anchorTab = (panes: ZellijPane[]): number | undefined => {
    const anchor = anchorId();
    if (anchor === undefined) return undefined;
    const pane = panes.find((p) => p.paneId === anchor);
    if (!pane) {
      throw new MuxError(
        "pane_not_found",
        `Cannot find the pane muxbridge runs in ("${anchor}") in zellij session "${
          zellij.session ?? "(default)"
        }"`,
        { hint: ANCHOR_HINT },
      );
    }
    return pane.tabId;
  };

  /**
   * Finds the pane a `new-pane` opened without printing its id: the one terminal pane of the tab
   * that was not there before (ids are never reused since 0.44.0, PR #4859) and carries the
   * title. Several candidates (another client split at the same time) are refused rather than
   * guessed: muxbridge must never later close a pane it did not open.
   */
  const findNewPane = async (
    before: ReadonlySet<string>,
    tabId: number | undefined,
    title: string,
    signal?: AbortSignal,
  ): Promise<PaneId | null> => {
    const fresh = (await listPanes(signal)).filter((p) =>
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
  };

  const doSpawn = async (req: SpawnRequest): Promise<SpawnedPane> => {
    validateTarget("owner", req.owner);
    const cwd = validateDirectory(req.cwd);
    const title = cleanTitle(req.title);
    // With a token the pane's start command (zellij's `terminal_command`) carries it.
    const program = tokenArgv(programArgv(req.argv), req.token);
    if (Object.keys(req.env).length > 0) {
      throw new MuxError(
        "auth_unsupported",
        "Cannot pass credentials to a zellij pane: zellij has no per-pane environment",
        { hint: "Run OpenCode without a server password, or use tmux, herdr or kitty" },
      );
    }
    const v = await version(req.signal);
    const before = await listPanes(req.signal);
    const tabId = anchorTab(before);
    const known = new Set(before.map((p) => p.paneId));
    const layout = deps.config.layout;
    const direction = layout === "main-horizontal" || layout === "even-vertical" ? "down" : "right";
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
      const stdout = await zellij.must("open a pane", open(directed), req.signal);
      paneId = parseNewPaneId(stdout) ?? await findNewPane(known, tabId, title, req.signal);
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
      const renamed = await zellij.action(["rename-pane", "-p", paneId, "--", title], req.signal);
      if (renamed.code !== 0) {
        deps.log.warn(zellijError(`title pane "${paneId}"`, renamed).message);
      }
    }
    return { paneId };
  };

  const spawn = (req: SpawnRequest): Promise<SpawnedPane> => {
    const run = spawnQueue.then(() => doSpawn(req));
    spawnQueue = run.catch(() => {});
    return run;
  };

  const inspect = async (paneId: PaneId, signal?: AbortSignal): Promise<PaneInfo | null> => {
    const id = zellijPaneId(paneId);
    const pane = (await listPanes(signal)).find((p) => p.paneId === id);
    return pane ? { paneId: pane.paneId, dead: pane.dead, title: pane.title } : null;
  };

  /** Terminal panes whose start command carries the token. */
  const findSpawned = async (token: string, signal?: AbortSignal): Promise<PaneInfo[]> =>
    (await listPanes(signal)).filter((p) => carriesToken(p.command, token))
      .map((p) => ({ paneId: p.paneId, dead: p.dead, title: p.title }));

  const applyLayout = (req: LayoutRequest): Promise<LayoutResult> => {
    const detail =
      `zellij has no command that arranges only muxbridge's panes; ${req.layout} is applied as the split direction of new panes`;
    deps.log.debug(`zellij layout: ${detail}`);
    return Promise.resolve({ applied: false, detail });
  };

  const probe = async (signal?: AbortSignal): Promise<ProbeResult> => {
    const v = await version(signal);
    await listPanes(signal);
    return { binary: zellij.bin, version: v };
  };

  const doctor = async (signal?: AbortSignal): Promise<Check[]> => {
    const raw = await zellij.version(signal).catch((err) => err as Error);
    const checks = binaryChecks(
      "zellij",
      zellij.bin,
      raw,
      (run) => zellijError("read the zellij version", run),
      ZELLIJ_DOCTOR.slice(1),
    );
    if (raw instanceof Error) return checks;
    let versionOk = false;
    try {
      const v = gateZellij(raw.stdout, raw.argv);
      versionOk = true;
      const focus = semver.gte(v, NO_FOCUS_VERSION)
        ? "new panes keep the user's focus"
        : `new panes take focus (--no-focus needs ${NO_FOCUS_VERSION})`;
      checks.push({
        name: "zellij version",
        status: semver.gte(v, NO_FOCUS_VERSION) ? "pass" : "warn",
        detail: `${v} >= ${ZELLIJ_MIN_VERSION}; ${focus}`,
        ...(semver.gte(v, NO_FOCUS_VERSION) ? {} : {
          hint: `Upgrade zellij to ${NO_FOCUS_VERSION} so new panes do not take focus`,
        }),
      });
    } catch (err) {
      checks.push(failedCheck("zellij version", err));
    }
    if (!versionOk) {
      for (const name of ["zellij session", "zellij anchor"]) {
        checks.push({ name, status: "fail", detail: "not checked: unsupported zellij version" });
      }
      return checks;
    }
    let panes: ZellijPane[] = [];
    try {
      panes = await listPanes(signal);
      checks.push({
        name: "zellij session",
        status: zellij.session === undefined ? "warn" : "pass",
        detail: `session ${
          zellij.session === undefined
            ? "(not named: zellij picks the only one)"
            : `"${zellij.session}"`
        } answers with ${panes.length} terminal panes`,
        ...(zellij.session === undefined
          ? { hint: "Set zellij.session, or run muxbridge inside zellij" }
          : {}),
      });
    } catch (err) {
      checks.push(failedCheck("zellij session", err));
      checks.push({ name: "zellij anchor", status: "fail", detail: "not checked: no session" });
      return checks;
    }
    try {
      const tab = anchorTab(panes);
      checks.push(
        tab === undefined
          ? {
            name: "zellij anchor",
            status: "warn",
            detail:
              "muxbridge does not run in a pane of this session: panes open in the focused tab",
            hint: ANCHOR_HINT,
          }
          : { name: "zellij anchor", status: "pass", detail: `panes open in tab ${tab}` },
      );
    } catch (err) {
      checks.push(failedCheck("zellij anchor", err, ANCHOR_HINT));
    }
    return checks;
  };

  return {
    name: "zellij",
    capabilities,
    probe,
    spawn,
    inspect,
    listOwned: () => Promise.resolve([]),
    findSpawned,
    async interrupt(paneId, signal) {
      const id = zellijPaneId(paneId);
      await requirePane(id, "interrupt the pane", signal);
      // The raw ETX byte: the pty's line discipline turns it into SIGINT. `send-keys "Ctrl c"`
      // with -p writes kitty CSI-u (ESC[99;5u), which a cooked tty does not (§4).
      await zellij.must(`interrupt pane "${id}"`, ["write", "-p", id, "3"], signal);
    },
    async kill(paneId, signal) {
      const id = zellijPaneId(paneId);
      await requirePane(id, "close the pane", signal);
      await zellij.must(`close pane "${id}"`, ["close-pane", "-p", id], signal);
    },
    async setTitle(paneId, title, signal) {
      const id = zellijPaneId(paneId);
      const clean = cleanTitle(title);
      await requirePane(id, "title the pane", signal);
      if (clean === "") return;
      await zellij.must(`title pane "${id}"`, ["rename-pane", "-p", id, "--", clean], signal);
    },
    applyLayout,
    doctor,
  };
}
