/**
 * Private to the tmux backend: opening a pane — the request checked and turned into the pane's
 * flags, program and marks, then the I/O around the one call `_open.ts` builds.
 *
 * @module
 */

import { checkProgramArgv } from "../../lib/backend/_program_argv.ts";
import type { BackendDeps, SpawnedPane, SpawnRequest } from "../../lib/backend/backend.ts";
import { tokenArgv } from "../../lib/backend/spawn_token.ts";
import { MuxError } from "../../lib/sys/errors.ts";
import { shArgv } from "../../lib/sys/shell_quote.ts";
import {
  cleanTitle,
  type PaneId,
  validateDirectory,
  validateEnv,
  validateTarget,
} from "../../lib/sys/validate.ts";
import type { Anchor } from "./_anchor.ts";
import { classifyFailure, redactArgs, type TmuxCommand, tmuxError } from "./_command.ts";
import { type AddedPane, planLayout } from "./_layout.ts";
import { openCommands, type OpenSpec, parseOpenOutput } from "./_open.ts";
import { escapeFormat, escapeTitle, PANE_FORMAT, parsePaneRows } from "./_parse.ts";
import { isMarked, planPlacement } from "./_place.ts";
import { statusOption } from "./_title.ts";
import type { TmuxConfig } from "./_traits.ts";

/** How often one open re-decides after the session changed under it before giving up. */
export const OPEN_ATTEMPTS = 4;

/**
 * Opens a pane in one tmux call: placement decided on the last listing, then split (or new
 * window), ownership marks, title and layout in one command list, which ends with a fresh
 * listing. When the listing was out of date tmux runs nothing but the listing, and the
 * placement is decided again on it; "no space" moves on to the next place.
 *
 * @param ctx The backend's deps, command runner and anchor.
 * @param spec What the pane gets (flags, program, options, title).
 * @param shownFlags `spec.paneFlags` as messages may show them (secrets replaced).
 * @param check The marks a pane opened by this call carries.
 * @param signal Aborts the call.
 * @returns The new pane, its program's pid, and whether the layout came with it.
 * @throws {MuxError} `no_space`, `pane_not_found` (the anchor), `command_failed`, or what tmux
 *   answered.
 */
export async function openPane(
  ctx: { deps: BackendDeps<TmuxConfig>; tmux: TmuxCommand; anchor: Anchor },
  spec: Omit<OpenSpec, "anchor" | "layout">,
  shownFlags: readonly string[],
  check: { sessionId: string; owner: string },
  signal?: AbortSignal,
): Promise<{ paneId: PaneId; pid: number; arranged: boolean }> {
  const { deps, tmux } = ctx;
  const anchor = await ctx.anchor.resolve(signal);
  const full = new Set<string>();
  let current = ctx.anchor.cached(anchor);
  for (let attempt = 0; attempt < OPEN_ATTEMPTS; attempt++) {
    current ??= await ctx.anchor.list(signal);
    const placement = planPlacement(current, deps.config.placement, full);
    const rows = current.rows;
    const layout = placement.kind === "split" && !placement.overflow
      ? (added: AddedPane) =>
        planLayout({
          rows,
          anchor,
          owned: new Set(rows.filter(isMarked).map((r) => r.paneId)),
          layout: deps.config.layout,
          mainPaneSize: deps.config.main_pane_size,
          added,
          anchorWindowOnly: true,
        }).commands
      : placement.kind === "split"
      ? () => [["select-layout", "-t", placement.target.windowId, "tiled"]]
      : undefined;
    const full_ = { ...spec, anchor, ...(layout ? { layout } : {}) };
    const commands = openCommands(placement, full_);
    const shown = openCommands(placement, { ...full_, paneFlags: shownFlags });
    const result = await tmux.run(commands, signal, {
      secret: spec.paneFlags.includes("-e"),
      shown,
    });
    const out = parseOpenOutput(result.stdout);
    current = ctx.anchor.absorb(anchor, out.listing);
    if (out.spawned) {
      if (result.code === 0) return { ...out.spawned, arranged: true };
      // Something after the split failed. A pane carrying its marks is muxbridge's and open
      // (the layout or the listing is what failed); an unmarked one would never be recognised:
      // kill it. Without a listing (the anchor went away), the pane itself is asked.
      const { paneId } = out.spawned;
      const row = out.listing !== undefined
        ? current?.rows.find((r) => r.paneId === paneId)
        : await tmux.run([["list-panes", "-t", paneId, "-F", PANE_FORMAT]], signal)
          .then((r) => (r.code === 0
            ? parsePaneRows(r.stdout).find((x) =>
              x.paneId === paneId
            )
            : undefined)
          )
          .catch(() => undefined);
      if (row?.session === check.sessionId && row.owner === check.owner) {
        deps.log.warn(`tmux: pane ${row.paneId} opened, but: ${result.stderr.trim()}`);
        return { ...out.spawned, arranged: false };
      }
      await tmux.run([["kill-pane", "-t", out.spawned.paneId]]).catch(() => {});
      ctx.anchor.absorb(anchor, undefined);
      throw tmuxError(`mark new pane "${out.spawned.paneId}"`, result);
    }
    if (result.code === 0) continue; // the listing was out of date: decide again on the new one
    const failure = classifyFailure(result.stderr);
    if (failure === "no_space" && placement.kind === "split") {
      full.add(placement.target.windowId);
      continue;
    }
    // The split pane went away, or the window index was taken: decide again.
    if (failure === "not_found" || failure === "conflict") continue;
    if (failure === "no_space") {
      throw new MuxError(
        "no_space",
        "Cannot open a pane: tmux has no room even in a new window",
        {
          hint: "Close some panes or enlarge the terminal",
        },
      );
    }
    throw tmuxError(
      placement.kind === "split"
        ? `open a pane next to "${placement.target.paneId}"`
        : "open an overflow window",
      result,
    );
  }
  throw new MuxError(
    "command_failed",
    `Cannot open a pane: the tmux session changed under ${OPEN_ATTEMPTS} attempts in a row`,
    { hint: "Try again once the panes of the session settle" },
  );
}

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
  validateEnv(env);
  return Object.entries(env).flatMap(([name, value]) => ["-e", `${name}=${value}`]);
}

/**
 * Opens the pane of a child session: the request is checked (owner, directory, title, program,
 * environment, in that order), then {@linkcode openPane} opens it carrying its ownership marks
 * and, when known, the child's state.
 *
 * @param ctx The backend's deps, command runner and anchor.
 * @param req What to open.
 * @returns The new pane, its program's pid, and whether the layout came with it.
 * @throws {MuxError} `invalid_argument` for an unsafe value, or what {@linkcode openPane} throws.
 */
export async function spawnPane(
  ctx: { deps: BackendDeps<TmuxConfig>; tmux: TmuxCommand; anchor: Anchor },
  req: SpawnRequest,
): Promise<SpawnedPane> {
  const sessionId = req.sessionId;
  const owner = validateTarget("owner", req.owner);
  const cwd = validateDirectory(req.cwd);
  const title = cleanTitle(req.title);
  const program = programArgv(req.argv, req.token);
  const env = envFlags(req.env);
  // -c is format-expanded, hence escaped (see escapeFormat).
  const dir = ["-c", escapeFormat(cwd)];
  const { paneId, pid, arranged } = await openPane(
    ctx,
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
}
