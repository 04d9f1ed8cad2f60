/**
 * Private to the zellij backend: whether muxbridge can work here — `probe` (version, one
 * listing) and the `doctor` checks (binary, version and focus, session, anchor).
 *
 * @module
 */

import semver from "semver";
import { binaryChecks } from "../../lib/backend/_binary_checks.ts";
import type { Check, ProbeResult } from "../../lib/backend/backend.ts";
import { failedCheck } from "../../lib/backend/failed_check.ts";
import { type ZellijCommand, zellijError } from "./_command.ts";
import { ANCHOR_HINT, type ZellijPanes } from "./_panes.ts";
import type { ZellijPane } from "./_parse.ts";
import { ZELLIJ_DOCTOR, ZELLIJ_MIN_VERSION } from "./_traits.ts";
import { gateZellij, NO_FOCUS_VERSION } from "./_version.ts";

/**
 * `probe`: the gated version, then one listing (the session answers).
 *
 * @param ctx The backend's command runner and reads.
 * @param signal Aborts the calls.
 * @returns The binary and its version.
 * @throws {MuxError} `binary_not_found`, `unsupported_version`, `backend_unreachable`, or what
 *   zellij answered.
 */
export async function probeZellij(
  ctx: { zellij: ZellijCommand; panes: ZellijPanes },
  signal?: AbortSignal,
): Promise<ProbeResult> {
  const v = await ctx.panes.version(signal);
  await ctx.panes.list(signal);
  return { binary: ctx.zellij.bin, version: v };
}

/**
 * Runs the checks, marking those that depend on a failed one as not checked.
 *
 * @param ctx The backend's command runner and reads.
 * @param signal Aborts the calls.
 * @returns The checks, each failure with a hint.
 */
export async function zellijDoctor(
  ctx: { zellij: ZellijCommand; panes: ZellijPanes },
  signal?: AbortSignal,
): Promise<Check[]> {
  const { zellij } = ctx;
  const raw = await zellij.version(signal).catch((err) => err as Error);
  const checks = binaryChecks(
    "zellij",
    zellij.bin,
    raw,
    (run) => zellijError("read the zellij version", run),
    ZELLIJ_DOCTOR.slice(1),
  );
  if (raw instanceof Error) return checks;
  let versionOk = false;
  try {
    const v = gateZellij(raw.stdout, raw.argv);
    versionOk = true;
    const focus = semver.gte(v, NO_FOCUS_VERSION)
      ? "new panes keep the user's focus"
      : `new panes take focus (--no-focus needs ${NO_FOCUS_VERSION})`;
    checks.push({
      name: "zellij version",
      status: semver.gte(v, NO_FOCUS_VERSION) ? "pass" : "warn",
      detail: `${v} >= ${ZELLIJ_MIN_VERSION}; ${focus}`,
      ...(semver.gte(v, NO_FOCUS_VERSION) ? {} : {
        hint: `Upgrade zellij to ${NO_FOCUS_VERSION} so new panes do not take focus`,
      }),
    });
  } catch (err) {
    checks.push(failedCheck("zellij version", err));
  }
  if (!versionOk) {
    for (const name of ["zellij session", "zellij anchor"]) {
      checks.push({ name, status: "fail", detail: "not checked: unsupported zellij version" });
    }
    return checks;
  }
  let panes: ZellijPane[] = [];
  try {
    panes = await ctx.panes.list(signal);
    checks.push({
      name: "zellij session",
      status: zellij.session === undefined ? "warn" : "pass",
      detail: `session ${
        zellij.session === undefined
          ? "(not named: zellij picks the only one)"
          : `"${zellij.session}"`
      } answers with ${panes.length} terminal panes`,
      ...(zellij.session === undefined
        ? { hint: "Set zellij.session, or run muxbridge inside zellij" }
        : {}),
    });
  } catch (err) {
    checks.push(failedCheck("zellij session", err));
    checks.push({ name: "zellij anchor", status: "fail", detail: "not checked: no session" });
    return checks;
  }
  try {
    const tab = ctx.panes.anchorTab(panes);
    checks.push(
      tab === undefined
        ? {
          name: "zellij anchor",
          status: "warn",
          detail: "muxbridge does not run in a pane of this session: panes open in the focused tab",
          hint: ANCHOR_HINT,
        }
        : { name: "zellij anchor", status: "pass", detail: `panes open in tab ${tab}` },
    );
  } catch (err) {
    checks.push(failedCheck("zellij anchor", err, ANCHOR_HINT));
  }
  return checks;
}
