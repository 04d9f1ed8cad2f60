/**
 * Private to the cmux backend: parsers of what the cmux CLI prints (version text, `--help`, the
 * `--json` results of `new-split` and `tree`, `OK …` receipts, `Error: <code>: …` lines).
 *
 * Evidence: `docs/backends/cmux.md` (cited "§N"), from cmux's own CLI and server source and issue
 * reports. No cmux runs here (it is a macOS app), so no shape was captured live; the parsers
 * accept the variations seen there.
 *
 * @module
 */

import { z } from "zod";
import { checkPaneId } from "../../lib/backend/_pane_id.ts";
import { readVersion } from "../../lib/backend/_version_gate.ts";
import { parseJson, unparseableOutput } from "../../lib/sys/parse_output.ts";
import type { PaneId } from "../../lib/sys/validate.ts";
import { CMUX_GATE } from "./_traits.ts";

/**
 * Makes a cmux pane id: a surface UUID only, never a ref (`surface:N` refs renumber;
 * docs/backends/cmux.md §1).
 *
 * @param text The id, as cmux answered it or as muxbridge was handed it.
 * @returns The pane id.
 * @throws {MuxError} `invalid_argument` for any other form.
 */
export function surfaceId(text: string): PaneId {
  return checkPaneId(
    text,
    UUID,
    "A cmux pane id is a surface UUID, such as 22222222-2222-2222-2222-222222222222",
  );
}

/** A cmux UUID handle (stable for the app's run, unlike `surface:N` refs; docs/backends/cmux.md §1). */
export const UUID = /^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$/;

/**
 * Reads `cmux --version` (`cmux 0.64.17`, or `cmux 0.64.22 (102) [ddd4a01bc]`;
 * docs/backends/cmux.md §6) as {@linkcode CMUX_GATE} reads it.
 *
 * @param text The output.
 * @returns Semver, or null when no `N.N.N` follows `cmux`.
 */
export function parseCmuxVersion(text: string): string | null {
  return readVersion(CMUX_GATE, text)?.semver ?? null;
}

/** Which optional `new-split` flags a build has. */
export interface SplitFeatures {
  /** `--command <text>`: typed into the new terminal at spawn. */
  command: boolean;
  /** `--cwd <path>`. */
  cwd: boolean;
  /** `--title <text>`. */
  title: boolean;
}

/**
 * Reads `cmux new-split --help`. `--command`, `--cwd` and `--title` exist in some builds only and
 * are not in the public help of older ones (docs/backends/cmux.md §3), so the help text decides.
 *
 * @param help The help text.
 * @returns The flags present.
 */
export function parseSplitHelp(help: string): SplitFeatures {
  const has = (flag: string) => new RegExp(`(^|\\s)--${flag}(\\s|=|,|$)`, "m").test(help);
  return { command: has("command"), cwd: has("cwd"), title: has("title") };
}

/** A cmux failure as its CLI reports it: `Error: <code>: <message>` (docs/backends/cmux.md §2). */
export interface CmuxErrorLine {
  /** The v2 error code (`not_found`, `invalid_state`, …), or null for text without one. */
  code: string | null;
  /** The message. */
  message: string;
}

/**
 * Reads cmux's stderr.
 *
 * @param stderr The text.
 * @returns The code and message of the first `Error:` line, else the last line as message.
 */
export function parseErrorLine(stderr: string): CmuxErrorLine {
  const m = /^Error:\s*([a-z_]+):\s*(.*)$/m.exec(stderr);
  if (m) return { code: m[1], message: m[2].trim() };
  const lines = stderr.trim().split("\n").filter((l) => l.trim() !== "");
  return { code: null, message: (lines.at(-1) ?? "").replace(/^Error:\s*/, "") };
}

const uuid = z.string().regex(UUID);
/**
 * The handles of a `surface.split` answer. cmux builds it with `v2OrNull(…)` for the pane, the
 * window and the type, so each may be `null` (Sources/TerminalController.swift
 * `v2SurfaceSplit`); in a remote tmux workspace the surface itself may be `null` (issue #16).
 */
const SplitIds = z.object({
  surface_id: uuid.nullable(),
  pane_id: uuid.nullable().optional(),
});

/** A new split's handles. */
export interface SplitResult {
  /**
   * The new surface (the pane id muxbridge uses); null when cmux made a split but named no
   * surface for it.
   */
  surfaceId: PaneId | null;
  /** The new pane, when reported. */
  paneId?: string;
}

/**
 * Reads the `--json --id-format uuids new-split` result: the flat object cmux prints
 * (`{pane_id, surface_id, type, window_id, workspace_id}`, any of `pane_id`, `type` and
 * `window_id` possibly `null`), or the ids nested under `result` or `result.pane` (variations
 * other callers tolerate).
 *
 * @param stdout The output.
 * @returns The new surface's UUID (null when cmux named none) and its pane's.
 * @throws {MuxError} `unparseable_output` when no object carries a `surface_id` UUID or null.
 */
export function parseSplit(stdout: string): SplitResult {
  let data: unknown;
  try {
    data = JSON.parse(stdout);
  } catch {
    throw unparseable("new-split result", stdout);
  }
  const candidates: unknown[] = [data];
  if (isObject(data) && isObject(data.result)) {
    candidates.push(data.result);
    if (isObject(data.result.pane)) candidates.push(data.result.pane);
  }
  for (const c of candidates) {
    const parsed = SplitIds.safeParse(c);
    if (parsed.success) {
      const id = parsed.data.surface_id;
      const r: SplitResult = { surfaceId: id === null ? null : surfaceId(id) };
      if (parsed.data.pane_id) r.paneId = parsed.data.pane_id;
      return r;
    }
  }
  throw unparseable("new-split result", stdout);
}

const TreeSchema = z.object({
  windows: z.array(z.object({
    id: z.string(),
    workspaces: z.array(z.object({
      id: z.string(),
      panes: z.array(z.object({
        id: z.string(),
        surfaces: z.array(z.object({
          id: z.string(),
          ref: z.string().optional(),
          type: z.string().optional(),
          title: z.string().optional(),
        })),
      })),
    })),
  })),
});

/** One surface of a workspace. */
export interface CmuxSurface {
  /** Its UUID. */
  id: string;
  /** Its `surface:N` ref, when shown. */
  ref?: string;
  /** Its title. */
  title?: string;
  /** Its pane's UUID. */
  paneId: string;
}

/** One workspace and its surfaces. */
export interface CmuxWorkspace {
  /** Its UUID, as cmux prints it. */
  id: string;
  /** Its surfaces, pane by pane. */
  surfaces: CmuxSurface[];
}

/**
 * Reads `cmux --json --id-format uuids tree --all` (docs/backends/cmux.md §7).
 *
 * @param stdout The output.
 * @returns Every workspace of every window with its surfaces.
 * @throws {MuxError} `unparseable_output`.
 */
export function parseTree(stdout: string): CmuxWorkspace[] {
  const tree = parseJson(TreeSchema, stdout);
  if (tree === undefined) throw unparseable("tree", stdout);
  return tree.windows.flatMap((win) =>
    win.workspaces.map((ws) => ({
      id: ws.id,
      surfaces: ws.panes.flatMap((p) =>
        p.surfaces.map((s) => {
          const surface: CmuxSurface = { id: s.id, paneId: p.id };
          if (s.ref !== undefined) surface.ref = s.ref;
          if (s.title !== undefined) surface.title = s.title;
          return surface;
        })
      ),
    }))
  );
}

/** Compares cmux UUIDs (cmux prints them upper case; users may pass lower case). */
export const sameId = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/**
 * Reads an `OK <surface> <workspace>` receipt's handles (UUIDs, refs, or `ref (UUID)` pairs).
 *
 * @param stdout The output.
 * @returns The UUIDs and refs it names, in order; empty when it is not an `OK` line.
 */
export function parseReceipt(stdout: string): { uuids: string[]; refs: string[] } {
  const line = stdout.trim().split("\n").find((l) => l.startsWith("OK"));
  if (!line) return { uuids: [], refs: [] };
  const uuids =
    line.match(/[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}/g) ??
      [];
  const refs = line.match(/\b(?:surface|pane|workspace|window):\d+\b/g) ?? [];
  return { uuids, refs };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

const unparseable = (what: string, raw: string) => unparseableOutput("cmux", what, raw);
