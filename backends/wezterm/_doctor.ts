/**
 * Private to the wezterm backend: its `probe` (version, and the pane it splits is listed) and its
 * `doctor` checks — binary, version (a date), the mux it talks to, the pane it splits,
 * credentials where that pane is remote, the spawn token.
 *
 * @module
 */

import type { Check, ProbeResult } from "../../lib/backend/backend.ts";
import { failedCheck } from "../../lib/backend/failed_check.ts";
import { MuxError, toMuxError } from "../../lib/sys/errors.ts";
import { ANCHOR_HINT, SOCKET_HINT } from "./_command.ts";
import type { WeztermPane, WeztermVersion } from "./_parse.ts";
import { WEZTERM_DOCTOR, WEZTERM_MIN_VERSION } from "./_traits.ts";

/** What the checks read of the backend. */
export interface DoctorContext {
  /** The program. */
  bin: string;
  /** The socket muxbridge talks to, when known. */
  socket: string | undefined;
  /** The gated version. */
  version(signal?: AbortSignal): Promise<WeztermVersion>;
  /** Every pane. */
  list(signal?: AbortSignal): Promise<WeztermPane[]>;
  /** The pane to split. @throws {MuxError} `no_backend` when there is none. */
  anchorId(): string;
  /** Whether the spawn token is in use. */
  spawnToken: boolean;
  /** Whether pane programs' environments can be read here at all. */
  environReadable: boolean;
}

/**
 * `probe`: the gated version, and the anchor among the panes WezTerm lists.
 *
 * @param ctx The backend's view.
 * @param signal Aborts.
 * @returns The program and its version.
 * @throws {MuxError} `no_backend` (no anchor, or it is not listed), and the errors of `version`
 *   and `list`.
 */
export async function weztermProbe(
  ctx: Pick<DoctorContext, "bin" | "version" | "list" | "anchorId">,
  signal?: AbortSignal,
): Promise<ProbeResult> {
  const v = await ctx.version(signal);
  const anchor = ctx.anchorId();
  if (!(await ctx.list(signal)).some((p) => p.paneId === anchor)) {
    throw new MuxError("no_backend", `Cannot find WezTerm pane ${anchor} to split`, {
      hint: ANCHOR_HINT,
    });
  }
  return { binary: ctx.bin, version: v.semver };
}

/**
 * Runs the checks.
 *
 * @param ctx The backend's view.
 * @param signal Aborts.
 * @returns The checks, each failure with a hint.
 */
export async function weztermDoctor(ctx: DoctorContext, signal?: AbortSignal): Promise<Check[]> {
  const checks: Check[] = [];
  let v: WeztermVersion;
  try {
    v = await ctx.version(signal);
  } catch (err) {
    const e = toMuxError(err);
    const check = failedCheck(
      e.code === "binary_not_found" ? "wezterm binary" : "wezterm version",
      e,
    );
    if (e.code === "unparseable_output") check.status = "warn";
    checks.push(check);
    for (const name of WEZTERM_DOCTOR.slice(2, 4)) {
      checks.push({ name, status: "fail", detail: `not checked: ${e.message}` });
    }
    return checks;
  }
  checks.push({ name: "wezterm binary", status: "pass", detail: `${ctx.bin}: wezterm ${v.text}` });
  checks.push({
    name: "wezterm version",
    status: "pass",
    detail: `${v.text} (${v.date}) >= ${WEZTERM_MIN_VERSION}`,
  });
  let panes: WeztermPane[];
  try {
    panes = await ctx.list(signal);
    checks.push({
      name: "wezterm mux",
      status: "pass",
      detail: `answers${ctx.socket ? ` on ${ctx.socket}` : ""} with ${panes.length} panes`,
    });
  } catch (err) {
    checks.push(failedCheck("wezterm mux", err, SOCKET_HINT));
    checks.push({ name: "wezterm anchor", status: "fail", detail: "not checked: no mux" });
    return checks;
  }
  try {
    const anchor = ctx.anchorId();
    const pane = panes.find((p) => p.paneId === anchor);
    checks.push(
      pane
        ? {
          name: "wezterm anchor",
          status: "pass",
          detail: `panes split off pane ${anchor} (tab ${pane.tabId})`,
        }
        : {
          name: "wezterm anchor",
          status: "fail",
          detail: `pane ${anchor} not found`,
          hint: ANCHOR_HINT,
        },
    );
    if (pane?.ttyName === null) {
      checks.push({
        name: "wezterm credentials",
        status: "warn",
        detail:
          `pane ${anchor} belongs to a remote domain: a password-protected server gets no panes`,
        hint: "Run OpenCode in a local WezTerm pane",
      });
    }
  } catch (err) {
    checks.push(failedCheck("wezterm anchor", err, ANCHOR_HINT));
  }
  if (!ctx.spawnToken) {
    checks.push({
      name: "wezterm spawn token",
      status: "warn",
      detail: ctx.environReadable
        ? "the WezTerm socket is unknown (WEZTERM_UNIX_SOCKET unset, no wezterm.socket_path)"
        : "pane programs' environments cannot be read here (no /proc)",
      hint:
        "A split whose answer comes after the timeout may leave a pane; run inside WezTerm on Linux",
    });
  }
  return checks;
}
