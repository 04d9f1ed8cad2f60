/**
 * Private to the kitty backend: the parsers of what kitty prints (version text, the window id
 * `launch` prints, the `ls` JSON) and the version thresholds of the features muxbridge uses.
 *
 * Evidence: `docs/backends/kitty.md` ("§N") and live runs of kitty
 * 0.26.5 under Xvfb (Debian 12), noted where used.
 *
 * @module
 */

import { z } from "zod";
import { checkPaneId } from "../../lib/backend/_pane_id.ts";
import { readVersion } from "../../lib/backend/_version_gate.ts";
import { cut, MuxError } from "../../lib/sys/errors.ts";
import { SPAWN_TOKEN, SPAWN_TOKEN_VAR } from "../../lib/backend/spawn_token.ts";
import type { PaneId } from "../../lib/sys/validate.ts";
import { KITTY_GATE } from "./_traits.ts";

/** `launch --var` and `ls` `user_vars` (ownership marks) arrived in 0.30.0 (§6). */
export const USER_VARS_VERSION = "0.30.0";

/** `launch --next-to` (place the window next to a given one) arrived in 0.40.0 (§6). */
export const NEXT_TO_VERSION = "0.40.0";

/** A kitty window id: decimal digits (monotonic per kitty process, never reused; §2). */
export const WINDOW_ID = /^\d+$/;

/**
 * Makes a kitty window id (muxbridge's pane id on kitty): decimal digits only, so a match
 * expression can never sneak in.
 *
 * @param text The id, as kitty printed it or as muxbridge was handed it.
 * @returns The pane id.
 * @throws {MuxError} `invalid_argument` for any other form.
 */
export function kittyWindowId(text: string): PaneId {
  return checkPaneId(text, WINDOW_ID, "A kitty window id is a number, such as 3");
}

/**
 * Reads `kitty --version` (`kitty 0.26.5 created by Kovid Goyal`, live) or `kitten --version`
 * (`kitten 0.32.2 created by Kovid Goyal`) into semver, as {@linkcode KITTY_GATE} reads it.
 *
 * @param text The program's output.
 * @returns The version, or null when the text is not a kitty version line.
 */
export function parseKittyVersion(text: string): string | null {
  return readVersion(KITTY_GATE, text)?.semver ?? null;
}

/**
 * Reads the window id `launch` prints (one integer line, §2: `2`).
 *
 * @param stdout What `launch` printed.
 * @returns The window id.
 * @throws {MuxError} `unparseable_output` when it is not one integer.
 */
export function parseLaunchOutput(stdout: string): PaneId {
  const id = stdout.trim();
  if (!WINDOW_ID.test(id)) {
    throw new MuxError(
      "unparseable_output",
      `Cannot read the new kitty window id from ${JSON.stringify(cut(stdout, 256))}`,
      { hint: "Report this with `kitty --version` and the output shown" },
    );
  }
  return kittyWindowId(id);
}

// The `ls` schema keeps only what muxbridge reads. zod objects drop every other key, and of
// each window's `env` (the child's environment as kitty reads it from the process, which may hold
// the server password: observed live on 0.26.5) only the spawn token is kept: nothing else of it
// leaves this parser.
const WindowSchema = z.object({
  id: z.number().int().nonnegative(),
  pid: z.number().int().positive().nullable().optional(),
  title: z.string(),
  // 0.30+ (§3); absent on 0.26.
  user_vars: z.record(z.string(), z.string()).optional(),
  env: z.record(z.string(), z.unknown()).optional(),
});

const TabSchema = z.object({
  id: z.number().int().nonnegative(),
  layout: z.string(),
  enabled_layouts: z.array(z.string()).optional(),
  windows: z.array(WindowSchema),
});

const LsSchema = z.array(z.object({
  id: z.number().int().nonnegative(),
  tabs: z.array(TabSchema),
}));

/** One kitty window as `ls` reports it (only the fields muxbridge uses). */
export interface KittyWindow {
  /** The window id, as text. */
  id: PaneId;
  /** The window's child pid. */
  pid?: number;
  /** The window title. */
  title: string;
  /** User variables (`launch --var`, 0.30+); empty when none or unsupported. */
  userVars: Record<string, string>;
  /**
   * The spawn token in the window's environment (`launch --env`); null when kitty showed the
   * environment and it holds none, absent when kitty showed none.
   */
  spawnToken?: string | null;
}

/** One kitty tab. */
export interface KittyTab {
  /** The tab id, as text. */
  id: string;
  /** The current layout name. */
  layout: string;
  /** The layouts `goto-layout` accepts in this tab. */
  enabledLayouts: string[];
  /** The tab's windows in kitty's order (the first is the main window of `tall`/`fat`). */
  windows: KittyWindow[];
}

/**
 * Parses `kitty @ ls` output. On failure the raw text is NOT quoted in the error: it holds every
 * window's environment, which may hold credentials.
 *
 * @param stdout What `ls` printed.
 * @returns Every tab of every OS window, in kitty's order.
 * @throws {MuxError} `unparseable_output`.
 */
export function parseLs(stdout: string): KittyTab[] {
  let data: unknown;
  try {
    data = JSON.parse(stdout);
  } catch {
    throw lsError(`not JSON (${stdout.length} bytes)`);
  }
  const parsed = LsSchema.safeParse(data);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw lsError(`unexpected shape at "${issue?.path.join(".") ?? ""}": ${issue?.message ?? ""}`);
  }
  return parsed.data.flatMap((os) =>
    os.tabs.map((tab) => ({
      id: String(tab.id),
      layout: tab.layout,
      enabledLayouts: tab.enabled_layouts ?? [],
      windows: tab.windows.map((w) => {
        const win: KittyWindow = {
          id: kittyWindowId(String(w.id)),
          title: w.title,
          userVars: w.user_vars ?? {},
        };
        if (typeof w.pid === "number") win.pid = w.pid;
        if (w.env !== undefined) {
          const token = w.env[SPAWN_TOKEN_VAR];
          win.spawnToken = typeof token === "string" && SPAWN_TOKEN.test(token) ? token : null;
        }
        return win;
      }),
    }))
  );
}

function lsError(what: string): MuxError {
  return new MuxError("unparseable_output", `Cannot read kitty's window list: ${what}`, {
    hint: "Report this with `kitty --version`",
  });
}

/** Finds a window and its tab. */
export function findWindow(
  tabs: readonly KittyTab[],
  id: string,
): { tab: KittyTab; window: KittyWindow } | undefined {
  for (const tab of tabs) {
    const window = tab.windows.find((w) => w.id === id);
    if (window) return { tab, window };
  }
  return undefined;
}
