/**
 * The kitty backend (kitty >= 0.26 with remote control on): one kitty window per child session in
 * the tab of the anchor window, opened without taking focus, driven through `kitten @` (0.27+) or
 * `kitty @` (0.26) addressed with `--to`.
 *
 * Evidence for every quirk is `docs/backends/kitty.md` ("§N"), the kitty 0.26.5 source or a live
 * run of kitty 0.26.5 under Xvfb, noted where used. Newer versions (kitten, user variables,
 * `--next-to`) are gated on the probed version and tested against a fake runner only.
 *
 * @module
 */

import semver from "semver";
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
import { waitFor } from "../../lib/sys/clock.ts";
import type { LayoutName } from "../../lib/config/config.ts";
import {
  type CredentialsFile,
  removeCredentialsFile,
  sourceAndExec,
  writeCredentialsFile,
} from "../../lib/sys/credentials_file.ts";
import { isMuxError, MuxError, toMuxError } from "../../lib/sys/errors.ts";
import {
  cleanTitle,
  type PaneId,
  SESSION_ID,
  validateDirectory,
  validateTarget,
} from "../../lib/sys/validate.ts";
import { createKittyCommand, type KittyProgram, REMOTE_CONTROL_HINT } from "./_command.ts";
import { launchArgs, MARK_OWNER, MARK_SESSION } from "./_launch.ts";
import {
  KITTY_CAPABILITIES,
  KITTY_DOCTOR,
  KITTY_MIN_VERSION,
  type KittyConfig,
} from "./_traits.ts";
import {
  findWindow,
  type KittyTab,
  type KittyWindow,
  kittyWindowId,
  NEXT_TO_VERSION,
  parseLaunchOutput,
  parseLs,
  USER_VARS_VERSION,
  WINDOW_ID,
} from "./_parse.ts";

/**
 * tmux layout names → kitty layouts (§5). kitty layouts rearrange a whole tab and
 * have no main-pane-size setting of their own (the size is the layout's `bias` option in
 * `enabled_layouts`).
 */
export const KITTY_LAYOUTS: Readonly<Record<LayoutName, string>> = {
  "main-vertical": "tall",
  "main-horizontal": "fat",
  tiled: "grid",
  "even-horizontal": "horizontal",
  "even-vertical": "vertical",
};

const ANCHOR_HINT =
  "Run muxbridge in the kitty window panes should open next to, or set kitty.window_id to a live window";

/** The ownership mark of a window (kitty >= 0.30 user variables), when valid. */
function marksOf(window: KittyWindow): { sessionId?: string; owner?: string } {
  const sessionId = window.userVars[MARK_SESSION];
  if (sessionId === undefined || !SESSION_ID.test(sessionId)) return {};
  const owner = window.userVars[MARK_OWNER];
  return owner ? { sessionId, owner } : { sessionId };
}

function toInfo(window: KittyWindow): PaneInfo {
  // Without --hold a kitty window closes when its program exits (§2), so a listed
  // window is never dead.
  const info: PaneInfo = { paneId: window.id, dead: false, title: window.title };
  if (window.pid !== undefined) info.pid = window.pid;
  return { ...info, ...marksOf(window) };
}

/**
 * Creates the kitty backend.
 *
 * @param deps Runner, env, clock, config (`kitty.*`, `command_timeout_ms`), identity.
 * @returns The backend. Its `capabilities.marks` turns true once a kitty >= 0.30 was probed.
 *
 * @example Open a window next to the one muxbridge runs in
 * ```ts
 * import type { BackendDeps } from "../../lib/backend/backend.ts";
 * import { validateSessionId } from "../../lib/sys/validate.ts";
 * import type { KittyConfig } from "./_traits.ts";
 * import { createKittyBackend } from "./backend.ts";
 *
 * async function openAndClose(deps: BackendDeps<KittyConfig>): Promise<void> {
 *   const backend = createKittyBackend(deps);
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
export function createKittyBackend(deps: BackendDeps<KittyConfig>): Backend {
  const kitty = createKittyCommand(deps);
  const layer = deps.identity.layers.find((l) => l.backend === "kitty");
  let version: string | undefined;

  const program = async (signal?: AbortSignal): Promise<KittyProgram> => {
    const found = await kitty.program(signal);
    version = found.version;
    return found;
  };
  const atLeast = (v: string) => version !== undefined && semver.gte(version, v);

  /**
   * The anchor window: `kitty.window_id`, else `$KITTY_WINDOW_ID` when the address is the one of
   * the kitty muxbridge runs in (a window id of another kitty would name an unrelated window).
   */
  const anchor = (): string | undefined => {
    const configured = deps.config.kitty.window_id;
    if (configured !== undefined) return String(configured);
    const listenOn = deps.config.kitty.listen_on;
    const sameInstance = listenOn === undefined || listenOn === layer?.socket;
    if (layer?.paneId && sameInstance && WINDOW_ID.test(layer.paneId)) return layer.paneId;
    return undefined;
  };

  /** Credentials files of windows opened by this backend, until the window is killed. */
  const credentialFiles = new Map<string, CredentialsFile>();

  const list = async (signal?: AbortSignal): Promise<KittyTab[]> =>
    parseLs(await kitty.must("list kitty windows", ["ls"], signal));

  const spawn = async (req: SpawnRequest): Promise<SpawnedPane> => {
    const sessionId = req.sessionId;
    const owner = validateTarget("owner", req.owner);
    const cwd = validateDirectory(req.cwd);
    const title = cleanTitle(req.title);
    await program(req.signal);
    const anchorId = anchor();
    // Credentials never ride in `launch --env`: that is argv of the `kitty @` client, readable
    // in /proc/<pid>/cmdline while it runs (contract: never on argv). An explicit /bin/sh -c
    // sources them from a private file, removes it, then execs the program.
    const credentials = Object.keys(req.env).length > 0 ? writeCredentialsFile(req.env) : undefined;
    const argv = credentials ? ["/bin/sh", "-c", sourceAndExec(req.argv, credentials)] : req.argv;
    const plan = launchArgs({
      title,
      cwd,
      argv,
      anchor: anchorId,
      nextTo: atLeast(NEXT_TO_VERSION),
      marks: atLeast(USER_VARS_VERSION) ? { sessionId, owner } : undefined,
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
    if (credentials) credentialFiles.set(paneId, credentials);
    if (plan.titleAfter !== undefined) {
      await setTitle(paneId, plan.titleAfter, req.signal).catch((err) =>
        deps.log.warn(`cannot title kitty window ${paneId}: ${toMuxError(err).message}`)
      );
    }
    return { paneId };
  };

  const inspect = async (paneId: PaneId, signal?: AbortSignal): Promise<PaneInfo | null> => {
    const id = kittyWindowId(paneId);
    const found = findWindow(await list(signal), id);
    return found ? toInfo(found.window) : null;
  };

  const listOwned = async (signal?: AbortSignal): Promise<PaneInfo[]> => {
    await program(signal);
    // kitty < 0.30 has no user variables, so there are no marks to find.
    if (!atLeast(USER_VARS_VERSION)) return [];
    return (await list(signal)).flatMap((tab) => tab.windows)
      .filter((w) => marksOf(w).sessionId !== undefined)
      .map(toInfo);
  };

  /** Windows whose environment holds the token (kitty reads it from the window's process). */
  const findSpawned = async (token: string, signal?: AbortSignal): Promise<PaneInfo[]> =>
    (await list(signal)).flatMap((tab) => tab.windows)
      .filter((w) => w.spawnToken === token)
      .map(toInfo);

  const interrupt = async (paneId: PaneId, signal?: AbortSignal) => {
    const id = kittyWindowId(paneId);
    // send-text exits 0 and does nothing for an unknown window (§4, live 0.26.5),
    // so the window's existence is checked first.
    if (!findWindow(await list(signal), id)) {
      throw new MuxError("pane_not_found", `Cannot interrupt kitty window ${id}: it is gone`);
    }
    // The ETX byte is what the keyboard's Ctrl+C types: the tty turns it into SIGINT for the
    // whole foreground process group (cooked mode), a raw-mode TUI reads it as Ctrl+C.
    // signal-child is not used: kitty 0.26.5 sends its signal to one process only, the highest
    // pid of the foreground group (kitty/child.py get_pid_for_cwd), so a wrapper script's own
    // shell would never see it. `\x03` is decoded by send-text's Python escape rules.
    await kitty.must(
      `interrupt kitty window ${id}`,
      ["send-text", `--match=id:${id}`, "\\x03"],
      signal,
    );
  };

  const kill = async (paneId: PaneId, signal?: AbortSignal) => {
    const id = kittyWindowId(paneId);
    // A window whose program never ran leaves its credentials file: remove it with the window.
    const credentials = credentialFiles.get(id);
    if (credentials) {
      credentialFiles.delete(id);
      removeCredentialsFile(credentials);
    }
    await kitty.must(`close kitty window ${id}`, ["close-window", `--match=id:${id}`], signal);
    // Closing is deferred to kitty's next loop tick: `ls` may still list the window for a moment
    // and a second close right after still exits 0 (§5, live 0.26.5). Wait until it
    // is gone (bounded) so that one verifying look afterwards is enough, however slow `kitty @`
    // is (1-6 s per call was measured here under load). Still listed at the deadline: the
    // caller's verification reports it.
    await waitFor(deps.clock, async () => !findWindow(await list(signal), id), {
      deadline: deps.clock.now() + deps.config.command_timeout_ms,
      initialIntervalMs: 20,
      maxIntervalMs: 200,
      signal,
    });
  };

  const setTitle = async (paneId: PaneId, title: string, signal?: AbortSignal) => {
    const id = kittyWindowId(paneId);
    // set-window-title joins its arguments with spaces and takes no special values (0.26.5
    // rc/set_window_title.py); an empty title gives the window back to its program's title.
    const clean = cleanTitle(title);
    await kitty.must(
      `title kitty window ${id}`,
      ["set-window-title", `--match=id:${id}`, "--", ...(clean === "" ? [] : [clean])],
      signal,
    );
  };

  const applyLayout = async (req: LayoutRequest, signal?: AbortSignal): Promise<LayoutResult> => {
    const name = KITTY_LAYOUTS[req.layout];
    const anchorId = anchor();
    if (anchorId === undefined) {
      return {
        applied: false,
        detail: "no anchor window (set kitty.window_id): layout left as it is",
      };
    }
    const found = findWindow(await list(signal), anchorId);
    if (!found) return { applied: false, detail: `anchor window ${anchorId} not found` };
    const { tab } = found;
    const owned = new Set(req.panes);
    for (const w of tab.windows) if (marksOf(w).sessionId !== undefined) owned.add(w.id);
    const others = tab.windows.filter((w) => w.id !== anchorId);
    const foreign = others.filter((w) => !owned.has(w.id));
    const isMain = req.layout === "main-vertical" || req.layout === "main-horizontal";
    // goto-layout rearranges every window of the tab, so it only runs when the tab holds the
    // anchor and muxbridge's windows alone.
    let why: string | undefined;
    if (others.length === foreign.length) why = `no owned windows in tab ${tab.id}`;
    else if (foreign.length > 0) {
      why = `user windows in tab ${tab.id} (${foreign.map((w) => w.id).join(" ")})`;
    } else if (isMain && tab.windows[0]?.id !== anchorId) {
      why = `anchor window ${anchorId} is not the first window of tab ${tab.id}`;
    } else if (tab.enabledLayouts.length > 0 && !tab.enabledLayouts.includes(name)) {
      why = `layout ${name} is not in enabled_layouts (${tab.enabledLayouts.join(",")})`;
    } else if (tab.layout === name) why = `tab ${tab.id} already uses ${name}`;
    if (why) return { applied: false, detail: `${why}: ${name} not applied` };
    await kitty.must(
      `set layout ${name} in tab ${tab.id}`,
      ["goto-layout", `--match=window_id:${anchorId}`, name],
      signal,
    );
    const size = isMain
      ? `; main pane size ${req.mainPaneSize}% not set (kitty takes it from enabled_layouts ${name}:bias=${req.mainPaneSize})`
      : "";
    return { applied: true, detail: `${name} on tab ${tab.id}${size}` };
  };

  const probe = async (signal?: AbortSignal): Promise<ProbeResult> => {
    const found = await program(signal);
    await list(signal);
    return { binary: found.bin, version: found.version };
  };

  const doctor = async (signal?: AbortSignal): Promise<Check[]> => {
    const checks: Check[] = [];
    let found: KittyProgram;
    try {
      found = await program(signal);
    } catch (err) {
      const e = toMuxError(err);
      const name = e.code === "binary_not_found" ? "kitty binary" : "kitty version";
      const check = failedCheck(name, e);
      if (e.code === "unparseable_output") check.status = "warn";
      checks.push(check);
      for (const other of KITTY_DOCTOR.slice(3)) {
        checks.push({ name: other, status: "fail", detail: `not checked: ${e.message}` });
      }
      return checks;
    }
    checks.push({
      name: "kitty binary",
      status: "pass",
      detail: `${found.bin}: ${found.versionText}`,
    });
    checks.push({
      name: "kitty version",
      status: "pass",
      detail: `${found.version} >= ${KITTY_MIN_VERSION}`,
    });
    if (!atLeast(USER_VARS_VERSION)) {
      checks.push({
        name: "kitty ownership marks",
        status: "warn",
        detail: `kitty ${found.version} has no user variables (0.30+): windows carry no marks`,
        hint:
          "cleanup relies on muxbridge's own records only; kitty >= 0.30 also marks each window",
      });
    }
    let tabs: KittyTab[];
    try {
      const address = kitty.address();
      tabs = await list(signal);
      const windows = tabs.reduce((n, t) => n + t.windows.length, 0);
      checks.push({
        name: "kitty remote control",
        status: "pass",
        detail: `answers on ${address} (${windows} windows)`,
      });
    } catch (err) {
      checks.push(failedCheck("kitty remote control", err, REMOTE_CONTROL_HINT));
      checks.push({
        name: "kitty anchor",
        status: "fail",
        detail: "not checked: no remote control",
      });
      return checks;
    }
    const anchorId = anchor();
    const where = anchorId === undefined ? undefined : findWindow(tabs, anchorId);
    if (anchorId === undefined) {
      checks.push({
        name: "kitty anchor",
        status: "warn",
        detail: "no anchor window: panes open in kitty's active tab",
        hint: "Run muxbridge inside kitty (KITTY_WINDOW_ID) or set kitty.window_id",
      });
    } else if (!where) {
      checks.push({
        name: "kitty anchor",
        status: "fail",
        detail: `window ${anchorId} not found`,
        hint: ANCHOR_HINT,
      });
    } else {
      checks.push({
        name: "kitty anchor",
        status: "pass",
        detail:
          `panes open next to window ${anchorId} (tab ${where.tab.id}, layout ${where.tab.layout})`,
      });
    }
    return checks;
  };

  return {
    name: "kitty",
    get capabilities(): Capabilities {
      return { ...KITTY_CAPABILITIES, marks: atLeast(USER_VARS_VERSION) };
    },
    probe,
    spawn,
    inspect,
    listOwned,
    findSpawned,
    interrupt,
    kill,
    setTitle,
    applyLayout,
    doctor,
  };
}
