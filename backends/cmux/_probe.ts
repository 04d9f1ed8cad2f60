/**
 * Private to the cmux backend: whether muxbridge can work here — `probe` (gate, identity, the
 * caller's surface listed) and the `doctor` checks (binary, version, `new-split`, identity,
 * socket, surface).
 *
 * @module
 */

import type { Check, ProbeResult } from "../../lib/backend/backend.ts";
import { failedCheck } from "../../lib/backend/failed_check.ts";
import { MuxError, toMuxError } from "../../lib/sys/errors.ts";
import { type CmuxCommand, SOCKET_HINT } from "./_command.ts";
import { sameId } from "./_parse.ts";
import type { CmuxProgram } from "./_program.ts";
import { IDENTITY_HINT, locate, type Surfaces } from "./_surfaces.ts";
import { CMUX_MIN_VERSION } from "./_traits.ts";

/** What the probe and the checks read of the backend. */
export interface ProbeContext {
  /** The backend's command runner. */
  cmux: CmuxCommand;
  /** The backend's surfaces view. */
  surfaces: Surfaces;
  /** The version gate, with `new-split`'s optional flags. */
  program(signal?: AbortSignal): Promise<CmuxProgram>;
}

/**
 * Probes: the version gate, the identity, and the caller's surface listed.
 *
 * @param ctx The backend's view.
 * @param signal Aborts the calls.
 * @returns The binary and its version.
 * @throws {MuxError} `no_backend` when the caller's surface is not listed, the gate's and the
 *   identity's errors, or what cmux answered.
 */
export async function probeCmux(ctx: ProbeContext, signal?: AbortSignal): Promise<ProbeResult> {
  const { version } = await ctx.program(signal);
  const { caller } = ctx.surfaces.context();
  if (!locate(await ctx.surfaces.tree(signal), caller)) {
    throw new MuxError("no_backend", `Cannot find the surface muxbridge runs in (${caller})`, {
      hint: IDENTITY_HINT,
    });
  }
  return { binary: ctx.cmux.bin, version };
}

/**
 * Runs the checks, stopping at the first one the rest depend on.
 *
 * @param ctx The backend's view.
 * @param signal Aborts the calls.
 * @returns The checks, each failure with a hint.
 */
export async function cmuxDoctor(ctx: ProbeContext, signal?: AbortSignal): Promise<Check[]> {
  const { cmux, surfaces } = ctx;
  const checks: Check[] = [];
  let found: CmuxProgram;
  try {
    found = await ctx.program(signal);
  } catch (err) {
    const e = toMuxError(err);
    const check = failedCheck(e.code === "binary_not_found" ? "cmux binary" : "cmux version", e);
    if (e.code === "unparseable_output") check.status = "warn";
    checks.push(check);
    return checks;
  }
  checks.push({ name: "cmux binary", status: "pass", detail: `${cmux.bin}: ${found.text}` });
  checks.push({
    name: "cmux version",
    status: "pass",
    detail: `${found.version} >= ${CMUX_MIN_VERSION}`,
  });
  checks.push(
    found.features.command
      ? { name: "cmux new-split", status: "pass", detail: "starts programs with --command" }
      : {
        name: "cmux new-split",
        status: "warn",
        detail: "no --command: programs start through respawn-pane after the split",
        hint: "Update cmux for one-step starts",
      },
  );
  let ids: { workspace: string; caller: string };
  try {
    ids = surfaces.context();
    checks.push({
      name: "cmux identity",
      status: "pass",
      detail: `workspace ${ids.workspace}, surface ${ids.caller}`,
    });
  } catch (err) {
    checks.push(failedCheck("cmux identity", err));
    return checks;
  }
  try {
    const all = await surfaces.tree(signal);
    const ws = all.find((w) => sameId(w.id, ids.workspace));
    checks.push({
      name: "cmux socket",
      status: "pass",
      detail: `answers on ${cmux.socket()} (${all.length} workspaces)`,
    });
    checks.push(
      ws?.surfaces.some((s) => sameId(s.id, ids.caller))
        ? { name: "cmux surface", status: "pass", detail: `panes open right of ${ids.caller}` }
        : {
          name: "cmux surface",
          status: "fail",
          detail: `surface ${ids.caller} is not in workspace ${ids.workspace}`,
          hint: IDENTITY_HINT,
        },
    );
  } catch (err) {
    const check = failedCheck("cmux socket", err);
    check.hint ??= SOCKET_HINT;
    checks.push(check);
  }
  return checks;
}
