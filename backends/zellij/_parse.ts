/**
 * Private to the zellij backend: the parsers of what zellij prints (version text, the id a new
 * pane prints, `list-panes --json`) and the pane id form muxbridge accepts.
 *
 * Shapes come from `docs/backends/zellij.md` ("§N"), read in the zellij source (0.45.0 snapshot
 * `bf8d23a4`); zellij cannot run here, so no output was captured live.
 *
 * @module
 */

import { z } from "zod";
import { checkPaneId } from "../../lib/backend/_pane_id.ts";
import { readVersion } from "../../lib/backend/_version_gate.ts";
import { parseJson, unparseableOutput } from "../../lib/sys/parse_output.ts";
import type { PaneId } from "../../lib/sys/validate.ts";
import { ZELLIJ_GATE } from "./_traits.ts";

/** A terminal pane id as the CLI prints and takes it (`terminal_N`, §2). */
export const TERMINAL_ID = /^terminal_(\d+)$/;

/**
 * Makes a zellij pane id: `terminal_N` only, so no id can name a plugin pane or read as a flag.
 *
 * @param text The id, as zellij printed it or as muxbridge was handed it.
 * @returns The pane id.
 * @throws {MuxError} `invalid_argument` for any other form.
 */
export function zellijPaneId(text: string): PaneId {
  return checkPaneId(
    text,
    TERMINAL_ID,
    'A zellij pane id is "terminal_" followed by digits, such as terminal_3',
  );
}

/**
 * Turns `zellij --version` output into semver as {@linkcode ZELLIJ_GATE} reads it: `zellij
 * 0.44.1` → `0.44.1`, `zellij 0.45` → `0.45.0`; a pre-release or build suffix is dropped (its
 * features are the release's).
 *
 * @param text What `zellij --version` printed.
 * @returns The semver text, or null when it is not a zellij version.
 */
export function parseZellijVersion(text: string): string | null {
  return readVersion(ZELLIJ_GATE, text)?.semver ?? null;
}

/**
 * Reads the id `action new-pane` prints (0.44.0+, PR #4690). Empty output is a known quirk, not
 * an error: a crowded tab silently drops a directed split, and some builds print nothing
 * (§2), so the caller finds the pane by listing.
 *
 * @param stdout What zellij printed.
 * @returns `terminal_N`, or null when nothing was printed.
 * @throws {MuxError} `unparseable_output` for anything else (a `plugin_N` included).
 */
export function parseNewPaneId(stdout: string): PaneId | null {
  const parsed = NewPaneIdSchema.safeParse(stdout.trim());
  if (!parsed.success) throw unparseable("new pane id", stdout);
  return parsed.data === "" ? null : zellijPaneId(parsed.data);
}

/** Nothing, or `terminal_N`. */
const NewPaneIdSchema = z.union([z.literal(""), z.string().regex(TERMINAL_ID)]);

/**
 * One element of `list-panes --json`: zellij's `PaneInfo` plus tab fields (§3).
 * Only the fields muxbridge reads are checked; the rest are kept out.
 */
const PaneSchema = z.object({
  id: z.number().int().min(0),
  is_plugin: z.boolean(),
  is_focused: z.boolean().optional(),
  title: z.string(),
  exited: z.boolean().optional(),
  is_held: z.boolean().optional(),
  tab_id: z.number().int().min(0).optional(),
  // "the stringified version of the command and its cli arguments" of a command pane
  // (zellij-utils/src/data.rs `PaneInfo`): where muxbridge's spawn token is found.
  terminal_command: z.string().nullable().optional(),
});

const PaneListSchema = z.array(PaneSchema);

/** A terminal pane as muxbridge sees it. */
export interface ZellijPane {
  /** `terminal_N`. */
  paneId: PaneId;
  /** The bare number zellij uses in JSON and in `ZELLIJ_PANE_ID`. */
  number: number;
  /** The pane's title. */
  title: string;
  /** The program ended and the pane is held (no `--close-on-exit`). */
  dead: boolean;
  /** The pane has its tab's focus. */
  focused: boolean;
  /** The tab the pane is in, when listed. */
  tabId?: number;
  /** The command the pane was started with, as zellij shows it (command panes only). */
  command?: string;
}

/**
 * Parses `action list-panes --json --all`, keeping terminal panes only (plugin panes such as
 * the tab bar have their own id space, §3).
 *
 * @param stdout What zellij printed.
 * @returns The terminal panes, in zellij's order.
 * @throws {MuxError} `unparseable_output` when it is not the documented array.
 */
export function parsePaneList(stdout: string): ZellijPane[] {
  const panes = parseJson(PaneListSchema, stdout);
  if (panes === undefined) throw unparseable("pane list", stdout);
  return panes.filter((p) => !p.is_plugin).map((p) => {
    const pane: ZellijPane = {
      paneId: zellijPaneId(`terminal_${p.id}`),
      number: p.id,
      title: p.title,
      dead: p.exited === true || p.is_held === true,
      focused: p.is_focused === true,
    };
    if (p.tab_id !== undefined) pane.tabId = p.tab_id;
    if (typeof p.terminal_command === "string") pane.command = p.terminal_command;
    return pane;
  });
}

const unparseable = (what: string, raw: string) => unparseableOutput("zellij", what, raw);
