/**
 * Private to the kitty backend: whether muxbridge can work here — `probe` (program, version,
 * remote control answering) and the `doctor` checks (binary, version, ownership marks, remote
 * control, anchor).
 *
 * @module
 */

import type { BackendDeps, Check, ProbeResult } from "../../lib/backend/backend.ts";
import { failedCheck } from "../../lib/backend/failed_check.ts";
import { toMuxError } from "../../lib/sys/errors.ts";
import { ANCHOR_HINT, anchorWindow } from "./_anchor.ts";
import { type KittyCommand, type KittyProgram, REMOTE_CONTROL_HINT } from "./_command.ts";
import { findWindow, type KittyTab, USER_VARS_VERSION } from "./_parse.ts";
import type { ProgramState } from "./_program.ts";
import { KITTY_DOCTOR, KITTY_MIN_VERSION, type KittyConfig } from "./_traits.ts";
import { listWindows } from "./_windows.ts";

/**
 * Probes: the program and its version, then one listing (remote control answers).
 *
 * @param ctx The backend's command runner and program state.
 * @param signal Aborts the calls.
 * @returns The binary and its version.
 * @throws {MuxError} `binary_not_found`, `unsupported_version`, `backend_unreachable`, or what
 *   kitty answered.
 */
export async function probeKitty(
  ctx: { kitty: KittyCommand; program: ProgramState },
  signal?: AbortSignal,
): Promise<ProbeResult> {
  const found = await ctx.program.read(signal);
  await listWindows(ctx.kitty, signal);
  return { binary: found.bin, version: found.version };
}

/**
 * Runs the checks, marking those that depend on a failed one as not checked.
 *
 * @param ctx The backend's deps (config, identity), command runner and program state.
 * @param signal Aborts the calls.
 * @returns The checks, each failure with a hint.
 */
export async function kittyDoctor(
  ctx: { deps: BackendDeps<KittyConfig>; kitty: KittyCommand; program: ProgramState },
  signal?: AbortSignal,
): Promise<Check[]> {
  const { kitty, program } = ctx;
  const checks: Check[] = [];
  let found: KittyProgram;
  try {
    found = await program.read(signal);
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
  if (!program.atLeast(USER_VARS_VERSION)) {
    checks.push({
      name: "kitty ownership marks",
      status: "warn",
      detail: `kitty ${found.version} has no user variables (0.30+): windows carry no marks`,
      hint: "cleanup relies on muxbridge's own records only; kitty >= 0.30 also marks each window",
    });
  }
  let tabs: KittyTab[];
  try {
    const address = kitty.address();
    tabs = await listWindows(kitty, signal);
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
  const anchorId = anchorWindow(ctx.deps);
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
}
