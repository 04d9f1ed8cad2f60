/**
 * Private to the wezterm backend: reading what `wezterm` prints. Every shape and text here is
 * from wezterm's source (docs/backends/wezterm.md cites the file and lines: "§N").
 *
 * @module
 */

import { z } from "zod";
import { checkPaneId } from "../../lib/backend/_pane_id.ts";
import { readVersion } from "../../lib/backend/_version_gate.ts";
import type { Version } from "../../lib/backend/backend.ts";
import { parseJson, unparseableOutput } from "../../lib/sys/parse_output.ts";
import type { PaneId } from "../../lib/sys/validate.ts";
import { WEZTERM_GATE } from "./_traits.ts";

/** A pane id as wezterm prints it (a `u64`). */
export const PANE_ID: RegExp = /^\d{1,19}$/;

/**
 * Makes a WezTerm pane id: wezterm's numeric ids only, so no id can read as a flag.
 *
 * @param text The id, as wezterm printed it or as muxbridge was handed it.
 * @returns The pane id.
 * @throws {MuxError} `invalid_argument` for any other form.
 */
export function weztermPaneId(text: string): PaneId {
  return checkPaneId(text, PANE_ID, "A WezTerm pane id is a number, such as 3");
}

/** A WezTerm version: `YYYYMMDD-HHMMSS-<hash>`, the commit's date and time (§5). */
export interface WeztermVersion {
  /** The version as printed: `20240203-110809-5046fc22`. */
  text: string;
  /** Date and time as one number for ordering: 20240203110809. */
  stamp: number;
  /** The date, ISO: `2024-02-03`. */
  date: string;
  /** The same version as semver (for muxbridge's probe result): `20240203.110809.0+5046fc22`. */
  semver: string;
}

/**
 * Reads `wezterm --version` (`wezterm 20240203-110809-5046fc22`) as {@linkcode WEZTERM_GATE}
 * reads it. Releases and nightlies share the scheme; the date is what orders them, never a
 * semver reading of the digits.
 *
 * @param text The output, trimmed.
 * @returns The version, or null when there is none (a build without its tag prints `wezterm `).
 */
export function parseWeztermVersion(text: string): WeztermVersion | null {
  const v = readVersion(WEZTERM_GATE, text);
  return v === null ? null : weztermVersion(v);
}

/**
 * A date version as the wezterm backend keeps it.
 *
 * @param v A version {@linkcode WEZTERM_GATE} read.
 * @returns The same, with its stamp.
 */
export function weztermVersion(v: Version): WeztermVersion {
  const text = v.text ?? "";
  return {
    text,
    stamp: Number(text.slice(0, 15).replace("-", "")),
    date: v.date ?? "",
    semver: v.semver,
  };
}

/** One pane of `wezterm cli list --format json` (`CliListResultItem`, §2). */
export interface WeztermPane {
  /** The pane id, as text. */
  paneId: PaneId;
  /** Its tab. */
  tabId: number;
  /** Its window. */
  windowId: number;
  /** The pane's title (the program's OSC title, or its process name). */
  title: string;
  /** Rows × columns. */
  area: number;
  /** Rows and columns. */
  size: { rows: number; cols: number };
  /** Active pane of its tab (>= 20230408; undefined before). */
  isActive?: boolean;
  /** The pty, or null where there is none (a pane of a remote domain); undefined before 20230408. */
  ttyName?: string | null;
  /** `is_dead` where a build reports it (none in the source read; used only when present). */
  isDead?: boolean;
}

const NonNegative = z.number().int().min(0);

const ListItemSchema = z.object({
  window_id: NonNegative,
  tab_id: NonNegative,
  pane_id: NonNegative,
  workspace: z.string(),
  size: z.object({ rows: NonNegative, cols: NonNegative }),
  title: z.string(),
  cwd: z.string(),
  is_active: z.boolean().optional(),
  tty_name: z.string().nullable().optional(),
  is_dead: z.boolean().optional(),
});

/**
 * Parses `wezterm cli list --format json`.
 *
 * @param stdout The output: a JSON array (no trailing newline).
 * @returns The panes, in tab-tree order.
 * @throws {MuxError} `unparseable_output`.
 */
export function parseList(stdout: string): WeztermPane[] {
  const items = parseJson(z.array(ListItemSchema), stdout);
  if (items === undefined) throw unparseableOutput("wezterm", "pane list", stdout);
  return items.map((it) => {
    const pane: WeztermPane = {
      paneId: weztermPaneId(String(it.pane_id)),
      tabId: it.tab_id,
      windowId: it.window_id,
      title: it.title,
      area: it.size.rows * it.size.cols,
      size: { rows: it.size.rows, cols: it.size.cols },
    };
    if (it.is_active !== undefined) pane.isActive = it.is_active;
    if (it.tty_name !== undefined) pane.ttyName = it.tty_name;
    if (it.is_dead !== undefined) pane.isDead = it.is_dead;
    return pane;
  });
}

const ClientSchema = z.object({ focused_pane_id: NonNegative.nullable().optional() });

/**
 * Parses `wezterm cli list-clients --format json`: the panes clients have focus in (the GUI's
 * is the one the user types into; the CLI's own connection has none).
 *
 * @param stdout The output.
 * @returns The focused pane ids.
 * @throws {MuxError} `unparseable_output`.
 */
export function parseFocused(stdout: string): string[] {
  const clients = parseJson(z.array(ClientSchema), stdout);
  if (clients === undefined) throw unparseableOutput("wezterm", "client list", stdout);
  return clients.flatMap((c) => (c.focused_pane_id == null ? [] : [String(c.focused_pane_id)]));
}

/**
 * Parses what `split-pane` prints: `<new pane id>\n` and nothing else (§1).
 *
 * @param stdout The output.
 * @returns The pane id.
 * @throws {MuxError} `unparseable_output`.
 */
export function parseSplit(stdout: string): PaneId {
  const id = stdout.trim();
  if (!PANE_ID.test(id) || stdout.replace(/\n$/, "") !== id) {
    throw unparseableOutput("wezterm", "new pane id", stdout);
  }
  return weztermPaneId(id);
}

/** Why a `wezterm cli` call failed. */
export type WeztermFailure = "not_found" | "unreachable" | "no_space" | "other";

/**
 * The message of a failed `wezterm cli` call: the text between `wezterm > ` and `; terminating`
 * of its ERROR line (`terminate_with_error`, §0), unwrapped from the mux server's
 * `ErrorResponse { reason: "Error: …" }`; else its last stderr line.
 *
 * @param stderr The call's stderr.
 * @returns The message.
 */
export function weztermMessage(stderr: string): string {
  const lines = stderr.trim().split("\n");
  const error = lines.findLast((l) => / ERROR /.test(l)) ?? lines.at(-1) ?? "";
  const text = /wezterm > (.*?)(?:; terminating)?$/.exec(error)?.[1] ?? error.trim();
  const reason = /ErrorResponse \{ reason: "Error: (.*)" \}/.exec(text)?.[1];
  return reason ?? text;
}

/**
 * Reads a failed call's stderr (the texts of §0): an unknown pane (`no such pane N` from
 * kill-pane and send-text, `pane_id N invalid` from split-pane, `pane N not found` from
 * activate-pane, `unable to resolve current tab` from set-tab-title), no mux to talk to
 * (`failed to connect to Socket(…)`, `no default unix domain is configured`), no room (`No
 * space for split!`).
 *
 * @param stderr The call's stderr.
 * @returns The failure kind.
 */
export function classifyWeztermFailure(stderr: string): WeztermFailure {
  if (
    /no such pane \d+|pane_id \d+ invalid|pane \d+ not found|unable to resolve current tab/.test(
      stderr,
    )
  ) return "not_found";
  if (/failed to connect to|no default unix domain is configured/.test(stderr)) {
    return "unreachable";
  }
  if (/No space for split/.test(stderr)) return "no_space";
  return "other";
}
