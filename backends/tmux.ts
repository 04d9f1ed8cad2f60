/**
 * The tmux backend (tmux >= 3.0): one pane per child session next to an anchor pane, ownership
 * marks as pane user options, overflow into a tagged muxbridge window when the anchor's window is
 * full, layouts that never reshape the user's panes.
 *
 * Evidence for every quirk is `/work/shared/research/backends.md` §1 and §5 ("research §1.x")
 * or a live observation on tmux 3.3a noted where it is used.
 *
 * @module
 */

import {
  type Backend,
  type BackendDeps,
  binaryChecks,
  type Capabilities,
  type Check,
  checkPaneId,
  failedCheck,
  gateVersion,
  type LayoutRequest,
  type LayoutResult,
  type PaneInfo,
  type ProbeResult,
  type SpawnedPane,
  type SpawnRequest,
  type VersionGate,
} from "../lib/backend.ts";
import { isMuxError, MuxError } from "../lib/sys/errors.ts";
import { describeArgv } from "../lib/sys/exec.ts";
import { shArgv } from "../lib/sys/shell_quote.ts";
import { tokenArgv, tokenMarker } from "../lib/spawn_token.ts";
import {
  cleanTitle,
  SESSION_ID,
  validateDirectory,
  validateSessionId,
  validateTarget,
} from "../lib/validate.ts";
import { classifyFailure, createTmuxCommand, type TmuxArgs, tmuxError } from "./tmux/_command.ts";
import { columnHeightWithOneMore, planLayout, tiledCell } from "./tmux/_layout.ts";
import {
  escapeFormat,
  escapeTitle,
  PANE_FORMAT,
  PANE_ID,
  type PaneRow,
  parsePaneRows,
  parseSpawnLine,
  parseTmuxVersion,
  SPAWN_FORMAT,
} from "./tmux/_parse.ts";

/** The oldest tmux muxbridge supports (`split-window -e` arrived in 3.0, research §1.7). */
export const TMUX_MIN_VERSION = "3.0.0";

/** The name of overflow windows muxbridge opens. */
const OVERFLOW_NAME = "muxbridge";

const CAPABILITIES: Capabilities = {
  layout: true,
  title: true,
  env: true,
  marks: true,
  focusSafe: true,
  // The token rides in the start command, which tmux keeps with the pane
  // (`#{pane_start_command}`): `split-window -e` values reach only the program's environment,
  // which no format shows (docs/backends/tmux.md).
  spawnToken: true,
};

/** Checks a pane id: tmux's `%N` form only, so a name can never resolve to another pane. */
function paneIdArg(paneId: string): string {
  return checkPaneId(paneId, PANE_ID, 'A tmux pane id is "%" followed by digits, such as %3');
}

/**
 * The program argv: several elements are exec'd by tmux without a shell (research §1.2). With a
 * spawn token the program starts through {@linkcode tokenArgv}, so the pane's start command
 * carries the token from the moment tmux creates it.
 */
function programArgv(argv: readonly string[], token?: string): string[] {
  if (argv.length === 0 || argv.some((a) => a.includes("\0"))) {
    throw new MuxError("invalid_argument", `Cannot run ${describeArgv(argv)} in a pane`, {
      hint: "The pane command needs a program and no NUL characters",
    });
  }
  if (token !== undefined) return tokenArgv(argv, token);
  // One element after `--` would go through the user's default-shell (research §1.2).
  return argv.length === 1 ? shArgv(argv) : [...argv];
}

/** `-e NAME=value` flags; values are not format-expanded by tmux (observed live, 3.3a). */
function envFlags(env: Readonly<Record<string, string>>): string[] {
  return Object.entries(env).flatMap(([name, value]) => {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name) || value.includes("\0")) {
      throw new MuxError("invalid_argument", `Cannot pass variable ${JSON.stringify(name)}`, {
        hint: "A variable name is letters, digits and _; a value holds no NUL",
      });
    }
    return ["-e", `${name}=${value}`];
  });
}

function toInfo(row: PaneRow): PaneInfo {
  const info: PaneInfo = { paneId: row.paneId, dead: row.dead, title: row.title };
  if (row.pid !== undefined) info.pid = row.pid;
  if (row.session !== "") info.sessionId = row.session;
  if (row.owner !== "") info.owner = row.owner;
  return info;
}

/** A pane carrying muxbridge's ownership mark (a junk value set by someone else does not count). */
const isMarked = (row: PaneRow) => SESSION_ID.test(row.session);

/** What to do when the anchor cannot be found. */
const ANCHOR_HINT =
  "Run muxbridge in the tmux pane it should open panes next to, or set tmux.target to a live pane";

/**
 * The smallest pane muxbridge makes by splitting: below this an OpenCode TUI shows little more
 * than its input line, so the child goes to a window of its own instead (policy, not a tmux
 * limit: tmux itself splits down to 1×1).
 */
const MIN_COLS = 20;
/** See {@linkcode MIN_COLS}. */
const MIN_ROWS = 5;

/** Whether splitting `pane` along `direction` leaves both halves at least the minimum size. */
function roomFor(pane: PaneRow, direction: "-h" | "-v"): boolean {
  // A split takes one cell for the border: halves of (size - 1).
  return direction === "-h"
    ? Math.floor((pane.width - 1) / 2) >= MIN_COLS
    : Math.floor((pane.height - 1) / 2) >= MIN_ROWS;
}

/** tmux cannot split a pane below 3 cells along the split (two 1-cell panes and a border). */
const splittable = (pane: PaneRow, direction: "-h" | "-v") =>
  (direction === "-h" ? pane.width : pane.height) >= 3;

/** The largest pane by area; ties go to the oldest (lowest `%N`), for a stable choice. */
function largest(panes: readonly PaneRow[]): PaneRow {
  return [...panes].sort((a, b) =>
    b.width * b.height - a.width * a.height || paneNumber(a.paneId) - paneNumber(b.paneId)
  )[0];
}

/** Pane number of `%N`, for "most recent" (tmux never reuses a pane id, research §0). */
const paneNumber = (id: string) => Number(id.slice(1));

/** tmux's version gate (the oldest supported: {@linkcode TMUX_MIN_VERSION}). */
const TMUX_GATE: VersionGate = {
  program: "tmux",
  min: TMUX_MIN_VERSION,
  minShown: "3.0",
  unreadableHint: "Check that tmux.bin names tmux",
  tooOldHint: "Install tmux 3.0 or later, or point tmux.bin at a newer tmux",
};

/**
 * Parses `tmux -V` output and checks it against {@linkcode TMUX_MIN_VERSION}.
 *
 * @throws {MuxError} `unparseable_output`, `unsupported_version`.
 */
function gateTmux(stdout: string, argv: readonly string[]): string {
  const text = stdout.trim();
  return gateVersion(TMUX_GATE, text, parseTmuxVersion(text), {
    argv,
    shown: text.replace(/^tmux\s+/, ""),
  });
}

/**
 * Creates the tmux backend.
 *
 * @param deps Runner, env, clock, config (`tmux`, `placement`, `command_timeout_ms`), identity.
 * @returns The backend.
 *
 * @example Open a pane next to the pane muxbridge runs in
 * ```ts ignore
 * const backend = createTmuxBackend(deps);
 * await backend.probe();
 * const { paneId } = await backend.spawn({ sessionId: "ses_1", title: "fix", argv, cwd, env: {}, owner: "cli" });
 * ```
 */
export function createTmuxBackend(deps: BackendDeps): Backend {
  const layer = deps.identity.layers.find((l) => l.backend === "tmux");
  // The control channel attaches to the anchor's session (see _command.ts).
  const tmux = createTmuxCommand(deps, { attachTarget: () => anchorRef() });
  let resolvedAnchor: { ref: string; paneId: string } | undefined;

  /**
   * The anchor as configured: `tmux.target`, else `$TMUX_PANE` when muxbridge talks to the
   * server it runs inside (a pane id of another server would name an unrelated pane).
   */
  const anchorRef = (): string => {
    const { target, socket_name, socket_path } = deps.config.tmux;
    if (target) return validateTarget("tmux.target", target);
    const sameServer = !socket_name && (!socket_path || socket_path === layer?.socket);
    if (layer?.paneId && sameServer) return validateTarget("TMUX_PANE", layer.paneId);
    throw new MuxError("no_backend", "Cannot place panes: no tmux pane to open them next to", {
      hint: layer?.paneId
        ? "Set tmux.target to a pane of the server tmux.socket_name/socket_path names"
        : "Run inside tmux or set tmux.target",
    });
  };

  /** The anchor pane id; a window or session target resolves to its active pane, once. */
  const resolveAnchor = async (signal?: AbortSignal): Promise<string> => {
    const ref = anchorRef();
    if (PANE_ID.test(ref)) return ref;
    if (resolvedAnchor?.ref === ref) return resolvedAnchor.paneId;
    const result = await tmux.run([["list-panes", "-t", ref, "-F", PANE_FORMAT]], signal);
    const err = result.code === 0 ? undefined : tmuxError(`use tmux.target "${ref}"`, result);
    if (err && err.code !== "pane_not_found") throw err;
    const rows = err ? [] : parsePaneRows(result.stdout);
    const pane = rows.find((r) => r.active) ?? rows[0];
    if (!pane) {
      throw new MuxError("pane_not_found", `Cannot find tmux.target "${ref}"`, {
        cause: err,
        hint: ANCHOR_HINT,
      });
    }
    resolvedAnchor = { ref, paneId: pane.paneId };
    return pane.paneId;
  };

  /** Every pane of the anchor's session, and the anchor's own row. */
  const anchorSession = async (signal?: AbortSignal) => {
    const anchor = await resolveAnchor(signal);
    const result = await tmux.run([["list-panes", "-s", "-t", anchor, "-F", PANE_FORMAT]], signal);
    const err = result.code === 0 ? undefined : tmuxError(`use anchor "${anchor}"`, result);
    if (err && err.code !== "pane_not_found") throw err;
    const rows = err ? [] : parsePaneRows(result.stdout);
    const anchorRow = rows.find((r) => r.paneId === anchor);
    if (!anchorRow) {
      resolvedAnchor = undefined;
      throw new MuxError("pane_not_found", `Cannot find anchor pane "${anchor}"`, {
        cause: err,
        hint: ANCHOR_HINT,
      });
    }
    return { anchor, rows, anchorRow };
  };

  /** Runs a split or new-window; null when tmux has no room (research §1.2: exit 1). */
  const tryOpen = async (action: string, commands: TmuxArgs[], signal?: AbortSignal) => {
    const result = await tmux.run(commands, signal);
    if (result.code === 0) return parseSpawnLine(result.stdout);
    if (classifyFailure(result.stderr) === "no_space") return null;
    throw tmuxError(action, result);
  };

  /**
   * Opens the pane where the placement puts it; `newWindow` tells that a new overflow window was
   * made for it (and must be tagged).
   *
   * In the anchor's window the first child splits the anchor to the right, and later ones split
   * the largest owned pane of that window downwards: the user's own panes are split at most
   * once, and owned panes stay in one column of even-ish panes (halving the newest pane instead
   * left 1-row slivers and overflowed after 5 children in a 40-row window, observed live). A
   * split that would leave a pane under {@linkcode MIN_COLS}×{@linkcode MIN_ROWS} is not tried:
   * the child goes to the overflow window, where panes are tiled.
   */
  const place = async (
    session: { anchor: string; rows: PaneRow[]; anchorRow: PaneRow },
    open: TmuxArgs,
    command: TmuxArgs,
    signal?: AbortSignal,
  ): Promise<{ paneId: string; pid: number; newWindow: boolean }> => {
    const { anchor, rows, anchorRow } = session;
    if (deps.config.placement === "split") {
      const owned = rows.filter((r) =>
        r.windowId === anchorRow.windowId && r.paneId !== anchor && isMarked(r)
      );
      const target = owned.length === 0 ? anchorRow : largest(owned);
      const direction = owned.length === 0 ? "-h" : "-v";
      // In a column of owned panes the layout evens the heights out after the split, so the
      // column's share per pane is what counts; elsewhere the split's halves are.
      const evened = owned.length === 0 ? null : columnHeightWithOneMore(
        anchorRow.windowLayout,
        target.paneId,
        new Set(owned.map((r) => r.paneId)),
      );
      const room = evened === null
        ? roomFor(target, direction)
        : evened >= MIN_ROWS && splittable(target, direction);
      if (room) {
        const split = ["split-window", direction, ...open, "-t", target.paneId, ...command];
        const placed = await tryOpen(`open a pane next to "${target.paneId}"`, [split], signal);
        if (placed) return { ...placed, newWindow: false };
      }
    }
    // The newest overflow window of the anchor's session, if any.
    const overflow = rows.filter((r) => r.overflow && r.windowId !== anchorRow.windowId);
    const window = overflow.map((r) => r.windowId)
      .sort((a, b) => paneNumber(b) - paneNumber(a))[0];
    if (window) {
      // Split the window's largest pane along its longer side (a cell is about twice as tall
      // as wide) or else the other, then tile the window: the tiled grid decides the size.
      const panes = overflow.filter((r) => r.windowId === window);
      const target = largest(panes);
      const cell = tiledCell(panes.length + 1, target.windowWidth, target.windowHeight);
      const longer = target.width >= 2 * target.height ? "-h" : "-v";
      const direction = cell.width >= MIN_COLS && cell.height >= MIN_ROWS
        ? ([longer, longer === "-h" ? "-v" : "-h"] as const).find((d) => splittable(target, d))
        : undefined;
      if (direction) {
        const placed = await tryOpen(`open a pane in overflow window "${window}"`, [
          ["split-window", direction, ...open, "-t", target.paneId, ...command],
          ["select-layout", "-t", window, "tiled"],
        ], signal);
        if (placed) return { ...placed, newWindow: false };
      }
    }
    const placed = await tryOpen("open an overflow window", [
      ["new-window", ...open, "-n", OVERFLOW_NAME, "-t", `${anchorRow.sessionId}:`, ...command],
    ], signal);
    if (placed) return { ...placed, newWindow: true };
    throw new MuxError("no_space", "Cannot open a pane: tmux has no room even in a new window", {
      hint: "Close some panes or enlarge the terminal",
    });
  };

  const spawn = async (req: SpawnRequest): Promise<SpawnedPane> => {
    const sessionId = validateSessionId(req.sessionId);
    const owner = validateTarget("owner", req.owner);
    const cwd = validateDirectory(req.cwd);
    const title = cleanTitle(req.title);
    const program = programArgv(req.argv, req.token);
    const env = envFlags(req.env);
    const session = await anchorSession(req.signal);
    // -d keeps the user's focus; -c is format-expanded, hence escaped (see escapeFormat).
    const open = ["-d", "-P", "-F", SPAWN_FORMAT, "-c", escapeFormat(cwd), ...env];
    const { paneId, pid, newWindow } = await place(session, open, ["--", ...program], req.signal);
    await mark(paneId, { title, sessionId, owner, newWindow }, req.signal);
    return { paneId, pid };
  };

  /**
   * Titles and marks a new pane in one invocation. tmux 3.3a keeps the current pane, not the new
   * one, as the default target of later commands in a `;` chain after a split (observed live: a
   * chained `select-pane -T` titled the old pane), so every command names the pane and the marks
   * cannot share the split's invocation: its id is only known once the split printed it.
   */
  const mark = async (
    paneId: string,
    m: { title: string; sessionId: string; owner: string; newWindow: boolean },
    signal?: AbortSignal,
  ) => {
    const commands: TmuxArgs[] = [
      ["select-pane", "-t", paneId, "-T", escapeTitle(m.title)],
      ["set-option", "-p", "-t", paneId, "@muxbridge-session", m.sessionId],
      ["set-option", "-p", "-t", paneId, "@muxbridge-owner", m.owner],
    ];
    if (m.newWindow) commands.push(["set-option", "-w", "-t", paneId, "@muxbridge-overflow", "1"]);
    const result = await tmux.run(commands, signal);
    if (result.code === 0) return;
    const err = tmuxError(`mark new pane "${paneId}"`, result);
    if (err.code === "pane_not_found") {
      throw new MuxError(
        "pane_not_found",
        `Cannot keep pane "${paneId}" open: its program ended at once`,
        { cause: err, hint: "Run the pane command by hand to see why it exits" },
      );
    }
    // An unmarked pane could never be recognised as muxbridge's again: do not leave it behind.
    await tmux.run([["kill-pane", "-t", paneId]]).catch(() => {});
    throw err;
  };

  const inspect = async (paneId: string, signal?: AbortSignal): Promise<PaneInfo | null> => {
    const id = paneIdArg(paneId);
    // list-panes, never display-message: the latter exits 0 for an unknown pane (research
    // §1.6). list-panes -t %N lists %N's whole window, so pick %N's row.
    const result = await tmux.run([["list-panes", "-t", id, "-F", PANE_FORMAT]], signal);
    if (result.code !== 0) {
      const err = tmuxError(`inspect pane "${id}"`, result);
      if (err.code === "pane_not_found") return null;
      throw err;
    }
    const row = parsePaneRows(result.stdout).find((r) => r.paneId === id);
    return row ? toInfo(row) : null;
  };

  const listOwned = async (signal?: AbortSignal): Promise<PaneInfo[]> => {
    const stdout = await tmux.must(
      "list muxbridge's panes",
      [["list-panes", "-a", "-F", PANE_FORMAT]],
      signal,
    );
    return parsePaneRows(stdout).filter(isMarked).map(toInfo);
  };

  /** Panes whose start command carries the token (`#{m:…}` matches it inside tmux). */
  const findSpawned = async (token: string, signal?: AbortSignal): Promise<PaneInfo[]> => {
    const match = `#{m:*${tokenMarker(token)}*,#{pane_start_command}}`;
    const stdout = await tmux.must(
      "find the pane of a lost spawn",
      [["list-panes", "-a", "-F", `#{pane_id}\t#{pane_dead}\t#{pane_pid}\t${match}`]],
      signal,
    );
    return stdout.split("\n").flatMap((line) => {
      const [paneId, dead, pid, matched] = line.split("\t");
      if (matched !== "1" || !PANE_ID.test(paneId ?? "")) return [];
      const info: PaneInfo = { paneId, dead: dead === "1" };
      if (/^\d+$/.test(pid ?? "")) info.pid = Number(pid);
      return [info];
    });
  };

  const applyLayout = async (req: LayoutRequest, signal?: AbortSignal): Promise<LayoutResult> => {
    if (!Number.isInteger(req.mainPaneSize) || req.mainPaneSize < 1 || req.mainPaneSize > 99) {
      throw new MuxError("invalid_argument", `Cannot use main pane size ${req.mainPaneSize}`, {
        hint: "The main pane size is a percentage from 1 to 99",
      });
    }
    const { anchor, rows } = await anchorSession(signal);
    const owned = new Set([...req.panes, ...rows.filter(isMarked).map((r) => r.paneId)]);
    owned.delete(anchor);
    const plan = planLayout({
      rows,
      anchor,
      owned,
      layout: req.layout,
      mainPaneSize: req.mainPaneSize,
    });
    const detail = plan.detail.join("; ");
    if (plan.commands.length === 0) return { applied: false, detail };
    await tmux.must(
      `arrange the panes next to "${anchor}"`,
      plan.commands,
      signal,
    );
    return { applied: true, detail };
  };

  /** `tmux -V` parsed and gated. */
  const clientVersion = async (signal?: AbortSignal): Promise<string> => {
    const result = await tmux.version(signal);
    if (result.code !== 0) throw tmuxError("read the tmux version", result);
    return gateTmux(result.stdout, result.argv);
  };

  /** The server's own version; fails `backend_unreachable` when no server answers. */
  const serverVersion = (signal?: AbortSignal) =>
    tmux.must("reach the tmux server", [["display-message", "-p", "#{version}"]], signal)
      .then((out) => out.trim());

  const probe = async (signal?: AbortSignal): Promise<ProbeResult> => {
    const version = await clientVersion(signal);
    await serverVersion(signal);
    return { binary: tmux.bin, version };
  };

  const doctor = async (signal?: AbortSignal): Promise<Check[]> => {
    const raw = await tmux.version(signal).catch((err) => err as Error);
    const checks = binaryChecks(
      "tmux",
      tmux.bin,
      raw,
      (run) => tmuxError("read the tmux version", run),
      ["tmux version", "tmux server", "tmux anchor"],
    );
    if (raw instanceof Error) return checks;
    try {
      checks.push({
        name: "tmux version",
        status: "pass",
        detail: `${gateTmux(raw.stdout, raw.argv)} >= 3.0`,
      });
    } catch (err) {
      // A version text muxbridge cannot read may still be a usable (custom) build.
      const check = failedCheck("tmux version", err);
      if (isMuxError(err, "unparseable_output")) check.status = "warn";
      checks.push(check);
    }
    try {
      const where = deps.config.tmux.socket_path ?? deps.config.tmux.socket_name ??
        layer?.socket ?? "the default socket";
      checks.push({
        name: "tmux server",
        status: "pass",
        detail: `tmux ${await serverVersion(signal)} answers on ${where}`,
      });
    } catch (err) {
      checks.push(failedCheck("tmux server", err));
    }
    try {
      const { anchor } = await anchorSession(signal);
      checks.push({ name: "tmux anchor", status: "pass", detail: `panes open next to ${anchor}` });
    } catch (err) {
      checks.push(failedCheck("tmux anchor", err, ANCHOR_HINT));
    }
    return checks;
  };

  return {
    name: "tmux",
    capabilities: CAPABILITIES,
    probe,
    spawn,
    inspect,
    listOwned,
    findSpawned,
    async interrupt(paneId, signal) {
      const id = paneIdArg(paneId);
      await tmux.must(`interrupt pane "${id}"`, [["send-keys", "-t", id, "C-c"]], signal);
    },
    async kill(paneId, signal) {
      const id = paneIdArg(paneId);
      await tmux.must(`close pane "${id}"`, [["kill-pane", "-t", id]], signal);
    },
    async setTitle(paneId, title, signal) {
      const id = paneIdArg(paneId);
      await tmux.must(
        `title pane "${id}"`,
        [["select-pane", "-t", id, "-T", escapeTitle(cleanTitle(title))]],
        signal,
      );
    },
    applyLayout,
    doctor,
    dispose: () => tmux.close(),
  };
}
