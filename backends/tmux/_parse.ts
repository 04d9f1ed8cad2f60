/**
 * Private to the tmux backend: the formats muxbridge asks tmux for, and the parsers of what tmux
 * prints back (pane rows, the `-P` line of a new pane, version text).
 *
 * @module
 */

import { z } from "zod";
import { checkPaneId } from "../../lib/backend/_pane_id.ts";
import { readVersion } from "../../lib/backend/_version_gate.ts";
import { unparseableOutput } from "../../lib/sys/parse_output.ts";
import type { PaneId } from "../../lib/sys/validate.ts";
import { TMUX_GATE } from "./_traits.ts";

/** Starts each row of a pane listing (ASCII record separator). */
export const RS = "\x1e";
/** Separates the fields of a row (ASCII unit separator). */
export const US = "\x1f";

/**
 * The pane fields muxbridge reads, in row order. Free text comes last: tmux 3.3a refuses a title
 * holding control characters (`select-pane -T` with `\n`/`\x1f` left the title unchanged,
 * observed live), and user options are only ever written by muxbridge with validated values; a
 * row with an unexpected field count is reported, not guessed at.
 */
const FIELDS = [
  "pane_id",
  "pane_dead",
  "pane_pid",
  "pane_active",
  "pane_index",
  "pane_width",
  "pane_height",
  "window_id",
  "window_index",
  "window_active",
  "window_zoomed_flag",
  "window_width",
  "window_height",
  "session_id",
  "version",
  "window_layout",
  "@muxbridge-overflow",
  "@muxbridge-owner",
  "@muxbridge-session",
  "pane_title",
] as const;

/**
 * The `-F` format of every pane listing: rows start with {@linkcode RS} so a value holding a
 * newline cannot split a row, fields are joined by {@linkcode US}. `#{@option}` in a pane's
 * context falls back to its window's option (tmux 3.x option inheritance, observed live on
 * 3.3a), which is how the window tag `@muxbridge-overflow` shows on every pane of the window.
 */
export const PANE_FORMAT = RS + FIELDS.map((f) => `#{${f}}`).join(US);

/** The `-F` format of `split-window -P` / `new-window -P`. */
export const SPAWN_FORMAT = "#{pane_id} #{pane_pid}";

/** A tmux pane id: `%` and digits (server-unique, never reused in a server's life). */
export const PANE_ID = /^%\d+$/;

/**
 * Makes a tmux pane id: `%N` only, so a name can never resolve to another pane.
 *
 * @param text The id, as tmux printed it or as muxbridge was handed it.
 * @returns The pane id.
 * @throws {MuxError} `invalid_argument` for any other form.
 */
export function tmuxPaneId(text: string): PaneId {
  return checkPaneId(text, PANE_ID, 'A tmux pane id is "%" followed by digits, such as %3');
}

const flag = z.enum(["0", "1"]).transform((v) => v === "1");
const count = z.string().regex(/^\d+$/).transform(Number);

const RowSchema = z.object({
  pane_id: z.string().regex(PANE_ID),
  pane_dead: flag,
  // A pane whose program could not start has no pid (empty or 0).
  pane_pid: z.string().regex(/^\d*$/).transform((v) => (v === "" || v === "0" ? undefined : +v)),
  pane_active: flag,
  pane_index: count,
  pane_width: count,
  pane_height: count,
  window_id: z.string().regex(/^@\d+$/),
  window_index: count,
  window_active: flag,
  window_zoomed_flag: flag,
  window_width: count,
  window_height: count,
  session_id: z.string().regex(/^\$\d+$/),
  version: z.string(),
  window_layout: z.string(),
  "@muxbridge-overflow": z.string(),
  "@muxbridge-owner": z.string(),
  "@muxbridge-session": z.string(),
  pane_title: z.string(),
});

/** One pane as a listing reports it. */
export interface PaneRow {
  /** `%N`. */
  paneId: PaneId;
  /** The program ended and the pane is held (remain-on-exit). */
  dead: boolean;
  /** The pane program's pid. */
  pid?: number;
  /** The pane is its window's active pane. */
  active: boolean;
  /** The pane's index in its window (0 is the first pane, the main pane of main-* layouts). */
  index: number;
  /** Pane width in cells. */
  width: number;
  /** Pane height in cells. */
  height: number;
  /** `@N`. */
  windowId: string;
  /** The window's index in its session (`$S:N` names it). */
  windowIndex: number;
  /** The window is its session's current window. */
  windowActive: boolean;
  /** The window is zoomed (one pane fills it). */
  windowZoomed: boolean;
  /** Window width in cells. */
  windowWidth: number;
  /** Window height in cells. */
  windowHeight: number;
  /** `$N`. */
  sessionId: string;
  /** The server's version text (`3.3a`). */
  version: string;
  /** The window's layout string (`#{window_layout}`). */
  windowLayout: string;
  /** The window carries muxbridge's overflow tag. */
  overflow: boolean;
  /** The ownership mark's owner, empty when unmarked. */
  owner: string;
  /** The ownership mark's session, empty when unmarked. */
  session: string;
  /** The pane title. */
  title: string;
}

/**
 * Parses the output of a pane listing made with {@linkcode PANE_FORMAT}.
 *
 * @param stdout What tmux printed.
 * @returns The rows, in tmux's order.
 * @throws {MuxError} `unparseable_output` when a row does not have the expected shape.
 */
export function parsePaneRows(stdout: string): PaneRow[] {
  if (stdout.trim() === "") return [];
  if (!stdout.startsWith(RS)) throw unparseable("pane list", stdout);
  return stdout.slice(1).split(RS).map((chunk) => {
    const fields = chunk.replace(/\n$/, "").split(US);
    if (fields.length !== FIELDS.length) throw unparseable("pane row", chunk);
    const parsed = RowSchema.safeParse(Object.fromEntries(FIELDS.map((f, i) => [f, fields[i]])));
    if (!parsed.success) throw unparseable("pane row", chunk);
    const r = parsed.data;
    const row: PaneRow = {
      paneId: tmuxPaneId(r.pane_id),
      dead: r.pane_dead,
      active: r.pane_active,
      index: r.pane_index,
      width: r.pane_width,
      height: r.pane_height,
      windowId: r.window_id,
      windowIndex: r.window_index,
      windowActive: r.window_active,
      windowZoomed: r.window_zoomed_flag,
      windowWidth: r.window_width,
      windowHeight: r.window_height,
      sessionId: r.session_id,
      version: r.version,
      windowLayout: r.window_layout,
      overflow: r["@muxbridge-overflow"] !== "",
      owner: r["@muxbridge-owner"],
      session: r["@muxbridge-session"],
      title: r.pane_title,
    };
    if (r.pane_pid !== undefined) row.pid = r.pane_pid;
    return row;
  });
}

const SpawnLineSchema = z.string().regex(/^%\d+ \d+$/);

/**
 * Parses the `-P -F '#{pane_id} #{pane_pid}'` line of a new pane.
 *
 * @param stdout What tmux printed.
 * @returns The pane id and its program's pid.
 * @throws {MuxError} `unparseable_output` when it is not `%N <pid>`.
 */
export function parseSpawnLine(stdout: string): { paneId: PaneId; pid: number } {
  const parsed = SpawnLineSchema.safeParse(stdout.trim());
  if (!parsed.success) throw unparseable("new pane line", stdout);
  const [paneId, pid] = parsed.data.split(" ");
  return { paneId: tmuxPaneId(paneId), pid: Number(pid) };
}

/**
 * Turns tmux version text into semver as {@linkcode TMUX_GATE} reads it: `tmux 3.3a` → `3.3.0`,
 * `tmux next-3.8` → `3.8.0`, `3.2` (from `#{version}`) → `3.2.0`, `tmux 3.4-rc` → `3.4.0`. The
 * letter suffix is a bug-fix release of the same feature set, so it is dropped.
 *
 * @param text `tmux -V` output or a `#{version}` value.
 * @returns The semver text, or null when it is not a version.
 */
export function parseTmuxVersion(text: string): string | null {
  return readVersion(TMUX_GATE, text)?.semver ?? null;
}

/**
 * Escapes text that tmux expands as a format. tmux 3.3a expands formats in `select-pane -T`,
 * `split-window -c` and `new-window -n` (a directory named `a#{pane_id}b` was opened as `a%0b`,
 * did not exist, and tmux silently fell back to another directory; a title `#{pane_id}` became
 * `%1`: observed live). `#(cmd)` would even run a shell command where a client is attached.
 * `-e` values and the program's argv are not expanded.
 *
 * A pair `##` expands to `#`, except in a run of `#` followed by `[`: such a run is kept as it is
 * (it is left for the style parser), so `#[` stays `#[` and `##[` stays `##[` (observed live on
 * 3.3a: title `a##[b` showed `a##[b`, `a###b` showed `a##b`, and a directory holding `#[` passed
 * as `##[` did not exist, so the pane silently started elsewhere). Hence each run of `#` is
 * doubled unless a `[` follows it.
 *
 * @param text Literal text.
 * @returns Text tmux's format expansion turns back into `text`.
 */
export function escapeFormat(text: string): string {
  return text.replace(/#+(?!\[|#)/g, (run) => run + run);
}

/**
 * Escapes a pane title for `select-pane -T` so that it neither expands as a format nor restyles
 * anything where tmux draws it. Every run of `#` is doubled: format expansion halves the runs
 * not followed by `[` back to the original (see {@linkcode escapeFormat}) and keeps the runs
 * followed by `[` as they are, so the stored title holds every `#[` with an even run of `#`
 * before it. tmux draws the status line and pane borders through its style parser, which reads
 * `#[…]` as a style (`#[fg=red]`, `#[range=…]`, `#[list=…]`) after an odd run and as plain
 * text after an even run (observed live on 3.3a through an attached client: a title
 * `AAA#[fg=red,bg=blue]EVIL` coloured the status line; `AAA##[fg=red,bg=blue]EVIL` showed
 * `AAA#[fg=red,bg=blue]EVIL`; the run handling is `format_draw` in
 * https://github.com/tmux/tmux/blob/3.3a/format-draw.c).
 *
 * @param text The clean title.
 * @returns The argument for `select-pane -T`.
 */
export function escapeTitle(text: string): string {
  return text.replace(/#+/g, (run) => run + run);
}

const unparseable = (what: string, raw: string) => unparseableOutput("tmux", what, raw, "tmux -V");
