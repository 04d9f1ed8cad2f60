/**
 * Private to the herdr backend: what it checks of herdr — `probe` (version, a listing, where
 * operations go) and the `doctor` checks: binary, transport, version, server, anchor.
 *
 * @module
 */

import type { Check, ProbeResult } from "../../lib/backend/backend.ts";
import { failedCheck } from "../../lib/backend/failed_check.ts";
import type { PaneId } from "../../lib/sys/validate.ts";
import type { HerdrApi } from "./_api.ts";
import { herdrError } from "./_command.ts";
import { inspectPane } from "./_inspect.ts";
import { HERDR_DOCTOR, HERDR_MIN_VERSION } from "./_traits.ts";

const ANCHOR_HINT =
  "Run muxbridge inside the herdr pane it should open panes next to (HERDR_PANE_ID)";

/**
 * Gates the version, lists the panes and reports where operations go.
 *
 * @param api herdr's operations.
 * @param signal Aborts the calls.
 * @returns The socket (`socket <path>`) or the binary, and the version.
 * @throws {MuxError} `binary_not_found`, `unsupported_version`, `backend_unreachable`, and what
 *   herdr answered.
 */
export async function probeHerdr(api: HerdrApi, signal?: AbortSignal): Promise<ProbeResult> {
  const v = await api.version(signal);
  await api.list(signal);
  const { transport } = await api.transport(signal);
  return { binary: transport === "socket" ? api.target() : api.cli.bin, version: v };
}

/** What {@linkcode herdrDoctor} uses of the backend. */
export interface DoctorContext {
  /** herdr's operations. */
  api: HerdrApi;
  /** The pane muxbridge runs in, if it splits off it. */
  anchor(): PaneId | undefined;
}

/**
 * Runs the checks of {@linkcode HERDR_DOCTOR}, in order. The first that fails marks the ones
 * after it "not checked"; a missing binary is only a warning when the socket works.
 *
 * @param ctx herdr's operations and the anchor.
 * @param signal Aborts the calls.
 * @returns The checks, each failure with a hint.
 */
export async function herdrDoctor(ctx: DoctorContext, signal?: AbortSignal): Promise<Check[]> {
  const { api } = ctx;
  const herdr = api.cli;
  const checks: Check[] = [];
  const skip = (why: string) => {
    for (const name of HERDR_DOCTOR.slice(1)) {
      if (!checks.some((c) => c.name === name)) {
        checks.push({ name, status: "fail", detail: `not checked: ${why}` });
      }
    }
    return checks;
  };
  // The transport first (one ping): over the socket, the binary is only the fallback's.
  const state = await api.transport(signal).catch((err) => err as Error);
  const viaSocket = !(state instanceof Error) && state.transport === "socket";
  const raw = await herdr.version(signal).catch((err) => err as Error);
  if (raw instanceof Error || raw.code !== 0) {
    const err = raw instanceof Error ? raw : herdrError("read the herdr version", raw);
    if (!viaSocket) {
      checks.push(failedCheck("herdr binary", err));
      return skip(raw instanceof Error ? "no herdr binary" : "herdr --version failed");
    }
    checks.push({
      ...failedCheck("herdr binary", err),
      status: "warn",
      detail: `${err.message} (needed only if herdr's socket fails)`,
    });
  } else {
    checks.push({
      name: "herdr binary",
      status: "pass",
      detail: `${herdr.bin}: ${raw.stdout.trim()}`,
    });
  }
  if (state instanceof Error) {
    checks.push(failedCheck("herdr transport", state));
    return skip("herdr's socket is unusable");
  }
  checks.push(
    state.fellBack
      ? {
        name: "herdr transport",
        status: "warn",
        detail: state.detail,
        hint:
          "muxbridge works through the herdr CLI; set herdr.transport to cli if this is expected",
      }
      : { name: "herdr transport", status: "pass", detail: state.detail },
  );
  try {
    const v = await api.version(signal);
    checks.push({
      name: "herdr version",
      status: "pass",
      detail: `${v} >= ${HERDR_MIN_VERSION}`,
    });
  } catch (err) {
    checks.push(failedCheck("herdr version", err));
    return skip("unsupported herdr version");
  }
  try {
    const panes = await api.list(signal);
    checks.push({
      name: "herdr server",
      status: "pass",
      detail: `the server on ${api.target()} answers with ${panes.length} panes`,
    });
  } catch (err) {
    checks.push(failedCheck("herdr server", err));
    return skip("no herdr server");
  }
  const a = ctx.anchor();
  if (a === undefined) {
    checks.push({
      name: "herdr anchor",
      status: "warn",
      detail: "muxbridge does not run in a pane of this server: panes split the focused pane",
      hint: ANCHOR_HINT,
    });
  } else {
    try {
      const found = await inspectPane(api, a, signal);
      checks.push(
        found ? { name: "herdr anchor", status: "pass", detail: `panes open next to ${a}` } : {
          name: "herdr anchor",
          status: "fail",
          detail: `herdr does not know pane ${a}`,
          hint: ANCHOR_HINT,
        },
      );
    } catch (err) {
      checks.push(failedCheck("herdr anchor", err, ANCHOR_HINT));
    }
  }
  return checks;
}
