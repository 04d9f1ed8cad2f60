/**
 * The tmux backend (tmux >= 3.0): one pane per child session next to an anchor pane, ownership
 * marks as pane user options, overflow into a tagged muxbridge window when the anchor's window is
 * full, layouts that never reshape the user's panes.
 *
 * Evidence for every quirk is in `docs/backends/tmux.md` ("§N") or a live observation on tmux
 * 3.3a noted where it is used.
 *
 * @module
 */

import { checkProgramArgv } from "../../lib/backend/_program_argv.ts";
import { binaryChecks } from "../../lib/backend/_binary_checks.ts";
import { gateVersion } from "../../lib/backend/_version_gate.ts";
import type {
  Backend,
  BackendDeps,
  Check,
  LayoutRequest,
  LayoutResult,
  PaneInfo,
  ProbeResult,
  SpawnedPane,
  SpawnRequest,
} from "../../lib/backend/backend.ts";
import { failedCheck } from "../../lib/backend/failed_check.ts";
import type { PaneStatus } from "../../lib/backend/pane_status.ts";
import { isMuxError, MuxError } from "../../lib/sys/errors.ts";
import { shArgv } from "../../lib/sys/shell_quote.ts";
import { tokenArgv, tokenMarker } from "../../lib/backend/spawn_token.ts";
import {
  cleanTitle,
  type PaneId,
  validateDirectory,
  validateTarget,
} from "../../lib/sys/validate.ts";
import { ANCHOR_HINT, createAnchor } from "./_anchor.ts";
import { commandLine, createTmuxCommand, redactArgs, tmuxError } from "./_command.ts";
import { planLayout } from "./_layout.ts";
import { layoutGuard, parseOpenOutput, sessionListing } from "./_open.ts";
import { isMarked } from "./_place.ts";
import {
  escapeFormat,
  escapeTitle,
  PANE_FORMAT,
  PANE_ID,
  type PaneRow,
  parsePaneRows,
  tmuxPaneId,
} from "./_parse.ts";
import { OPEN_ATTEMPTS, openPane } from "./_spawn.ts";
import { TMUX_CAPABILITIES, TMUX_DOCTOR, TMUX_GATE, type TmuxConfig } from "./_traits.ts";

/**
 * The program argv: several elements are exec'd by tmux without a shell (§2). With a spawn token
 * the program starts through {@linkcode tokenArgv}, so the pane's start command carries the token
 * from the moment tmux creates it.
 */
function programArgv(argv: readonly string[], token?: string): string[] {
  checkProgramArgv(argv);
  if (token !== undefined) return tokenArgv(argv, token);
  // One element after `--` would go through the user's default-shell (§2).
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

/** What a guarded layout step prints when its window changed since the listing. */
const STALE = "muxbridge-stale";

/**
 * Parses `tmux -V` output and checks it against {@linkcode TMUX_GATE}.
 *
 * @throws {MuxError} `unparseable_output`, `unsupported_version`.
 */
function gateTmux(stdout: string, argv: readonly string[]): string {
  const text = stdout.trim();
  return gateVersion(TMUX_GATE, text, { argv, shown: text.replace(/^tmux\s+/, "") }).semver;
}

/**
 * The pane user option holding the child's state (`busy`, `retry`, `idle`, `error`, `failed`) for
 * a user's `pane-border-format` (docs/backends/tmux.md, "The child's state in the border").
 * Stored verbatim: `set-option` expands nothing without `-F`.
 */
const STATUS_OPTION = "@muxbridge-status";

/** The status option a new pane gets with its marks (none before anything is known). */
function statusOption(status: PaneStatus | undefined): Array<[string, string]> {
  return status === undefined || status.state === "unknown" ? [] : [[STATUS_OPTION, status.state]];
}

/**
 * Creates the tmux backend.
 *
 * @param deps Runner, env, clock, config (`tmux`, `placement`, `command_timeout_ms`), identity.
 * @returns The backend.
 *
 * @example Open a pane next to the pane muxbridge runs in
 * ```ts
 * import type { BackendDeps } from "../../lib/backend/backend.ts";
 * import { validateSessionId } from "../../lib/sys/validate.ts";
 * import type { TmuxConfig } from "./_traits.ts";
 * import { createTmuxBackend } from "./backend.ts";
 *
 * async function openAndClose(deps: BackendDeps<TmuxConfig>): Promise<void> {
 *   const backend = createTmuxBackend(deps);
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
export function createTmuxBackend(deps: BackendDeps<TmuxConfig>): Backend {
  const layer = deps.identity.layers.find((l) => l.backend === "tmux");
  const tmux = createTmuxCommand(deps);
  const anchor = createAnchor(deps, tmux);

  const spawn = async (req: SpawnRequest): Promise<SpawnedPane> => {
    const sessionId = req.sessionId;
    const owner = validateTarget("owner", req.owner);
    const cwd = validateDirectory(req.cwd);
    const title = cleanTitle(req.title);
    const program = programArgv(req.argv, req.token);
    const env = envFlags(req.env);
    // -c is format-expanded, hence escaped (see escapeFormat).
    const dir = ["-c", escapeFormat(cwd)];
    const { paneId, pid, arranged } = await openPane(
      { deps, tmux, anchor },
      {
        paneFlags: [...dir, ...env],
        command: ["--", ...program],
        options: [
          ["@muxbridge-session", sessionId],
          ["@muxbridge-owner", owner],
          ...statusOption(req.status),
        ],
        title: escapeTitle(title),
      },
      [...dir, ...redactArgs(env)],
      { sessionId, owner },
      req.signal,
    );
    return { paneId, pid, arranged };
  };

  const inspect = async (paneId: PaneId, signal?: AbortSignal): Promise<PaneInfo | null> => {
    const id = tmuxPaneId(paneId);
    // list-panes, never display-message: the latter exits 0 for an unknown pane (§3).
    // list-panes -t %N lists %N's whole window, so pick %N's row.
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
      const info: PaneInfo = { paneId: tmuxPaneId(paneId), dead: dead === "1" };
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
    const at = await anchor.resolve(signal);
    let current = anchor.cached(at);
    let now = false; // `current` was listed by this call, not kept from an earlier one
    for (let attempt = 0; attempt < OPEN_ATTEMPTS; attempt++) {
      if (!current) {
        current = await anchor.list(signal);
        now = true;
      }
      const { rows } = current;
      const owned = new Set<string>([...req.panes, ...rows.filter(isMarked).map((r) => r.paneId)]);
      owned.delete(at);
      const plan = planLayout({
        rows,
        anchor: at,
        owned,
        layout: req.layout,
        mainPaneSize: req.mainPaneSize,
      });
      const detail = plan.detail.join("; ");
      if (plan.commands.length === 0) {
        // "Nothing to do" cannot be checked by a guard: decide it on a listing of now.
        if (!now) {
          current = undefined;
          continue;
        }
        return { applied: false, detail };
      }
      // Each window is arranged only while its layout is the one the plan was made on.
      const guarded = plan.steps.map((step) => [
        "if-shell",
        "-F",
        "-t",
        step.window,
        layoutGuard(rows.find((r) => r.windowId === step.window)!),
        commandLine(step.commands),
        commandLine([["display-message", "-p", STALE]]),
      ]);
      const result = await tmux.run([...guarded, sessionListing(at)], signal);
      const out = parseOpenOutput(result.stdout.replaceAll(`${STALE}\n`, ""));
      current = anchor.absorb(at, out.listing);
      now = current !== undefined;
      if (result.code !== 0) throw tmuxError(`arrange the panes next to "${at}"`, result);
      if (!result.stdout.includes(STALE)) return { applied: true, detail };
    }
    throw new MuxError(
      "command_failed",
      `Cannot arrange the panes: the tmux session changed under ${OPEN_ATTEMPTS} attempts in a row`,
      { hint: "Run `muxbridge layout` again once the panes settle" },
    );
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
      TMUX_DOCTOR.slice(1),
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
      const { anchor: at } = await anchor.list(signal);
      checks.push({ name: "tmux anchor", status: "pass", detail: `panes open next to ${at}` });
    } catch (err) {
      checks.push(failedCheck("tmux anchor", err, ANCHOR_HINT));
    }
    return checks;
  };

  return {
    name: "tmux",
    capabilities: TMUX_CAPABILITIES,
    probe,
    spawn,
    inspect,
    listOwned,
    findSpawned,
    async interrupt(paneId, signal) {
      const id = tmuxPaneId(paneId);
      await tmux.must(`interrupt pane "${id}"`, [["send-keys", "-t", id, "C-c"]], signal);
    },
    async kill(paneId, signal) {
      const id = tmuxPaneId(paneId);
      const action = `close pane "${id}"`;
      const at = anchor.known();
      if (at !== undefined) {
        // The kill and a listing of the session in one call; the kill sits in a block, a command
        // group of its own, so the listing runs even when the pane had already gone and the
        // next open decides on what is there now. kill-pane removes the pane before it returns
        // (`server_kill_pane`, tmux 3.3a `server-fn.c`): exit 0 means it is gone.
        const result = await tmux.run(
          [["if-shell", "-F", "1", commandLine([["kill-pane", "-t", id]])], sessionListing(at)],
          signal,
        );
        const { listing } = parseOpenOutput(result.stdout);
        anchor.absorb(at, listing);
        if (result.code === 0) return;
        if (listing !== undefined) throw tmuxError(action, result);
        // No listing (the anchor went away): whether the kill ran is unknown, so kill alone.
      }
      await tmux.must(action, [["kill-pane", "-t", id]], signal);
    },
    async setTitle(paneId, title, signal) {
      const id = tmuxPaneId(paneId);
      await tmux.must(
        `title pane "${id}"`,
        [["select-pane", "-t", id, "-T", escapeTitle(cleanTitle(title))]],
        signal,
      );
    },
    async setStatus(paneId, status, signal) {
      // One tmux process: the title, then the user option (select-pane fails first on a pane
      // that is gone, with the "can't find pane" tmuxError reads as pane_not_found).
      const id = tmuxPaneId(paneId);
      await tmux.must(
        `show the status of pane "${id}"`,
        [
          ["select-pane", "-t", id, "-T", escapeTitle(cleanTitle(status.title))],
          status.state === "unknown"
            ? ["set-option", "-p", "-u", "-t", id, STATUS_OPTION]
            : ["set-option", "-p", "-t", id, STATUS_OPTION, status.state],
        ],
        signal,
      );
    },
    applyLayout,
    doctor,
  };
}
