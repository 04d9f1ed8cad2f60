/**
 * Private to the tmux backend: whether muxbridge can work here — `probe` (client version, server
 * answering) and the `doctor` checks (binary, version, server, anchor).
 *
 * @module
 */

import { binaryChecks } from "../../lib/backend/_binary_checks.ts";
import { gateVersion } from "../../lib/backend/_version_gate.ts";
import type { BackendDeps, Check, ProbeResult } from "../../lib/backend/backend.ts";
import { failedCheck } from "../../lib/backend/failed_check.ts";
import { isMuxError } from "../../lib/sys/errors.ts";
import { type Anchor, ANCHOR_HINT } from "./_anchor.ts";
import { type TmuxCommand, tmuxError } from "./_command.ts";
import { TMUX_DOCTOR, TMUX_GATE, type TmuxConfig } from "./_traits.ts";

/**
 * Parses `tmux -V` output and checks it against {@linkcode TMUX_GATE}.
 *
 * @throws {MuxError} `unparseable_output`, `unsupported_version`.
 */
function gateTmux(stdout: string, argv: readonly string[]): string {
  const text = stdout.trim();
  return gateVersion(TMUX_GATE, text, { argv, shown: text.replace(/^tmux\s+/, "") }).semver;
}

/** `tmux -V` parsed and gated. */
async function clientVersion(tmux: TmuxCommand, signal?: AbortSignal): Promise<string> {
  const result = await tmux.version(signal);
  if (result.code !== 0) throw tmuxError("read the tmux version", result);
  return gateTmux(result.stdout, result.argv);
}

/** The server's own version; fails `backend_unreachable` when no server answers. */
function serverVersion(tmux: TmuxCommand, signal?: AbortSignal): Promise<string> {
  return tmux.must("reach the tmux server", [["display-message", "-p", "#{version}"]], signal)
    .then((out) => out.trim());
}

/**
 * Probes: the client's version, gated, then the server's (it answers).
 *
 * @param tmux The backend's command runner.
 * @param signal Aborts the calls.
 * @returns The binary and its version.
 * @throws {MuxError} `binary_not_found`, `unparseable_output`, `unsupported_version`,
 *   `backend_unreachable`, or what tmux answered.
 */
export async function probeTmux(tmux: TmuxCommand, signal?: AbortSignal): Promise<ProbeResult> {
  const version = await clientVersion(tmux, signal);
  await serverVersion(tmux, signal);
  return { binary: tmux.bin, version };
}

/**
 * Runs the checks: binary, version (an unreadable one only warns), server, anchor.
 *
 * @param ctx The backend's deps (config, identity), command runner and anchor.
 * @param signal Aborts the calls.
 * @returns The checks, each failure with a hint.
 */
export async function tmuxDoctor(
  ctx: { deps: BackendDeps<TmuxConfig>; tmux: TmuxCommand; anchor: Anchor },
  signal?: AbortSignal,
): Promise<Check[]> {
  const { deps, tmux, anchor } = ctx;
  const layer = deps.identity.layers.find((l) => l.backend === "tmux");
  const raw = await tmux.version(signal).catch((err) => err as Error);
  const checks = binaryChecks(
    "tmux",
    tmux.bin,
    raw,
    (run) => tmuxError("read the tmux version", run),
    TMUX_DOCTOR.slice(1),
  );
  if (raw instanceof Error) return checks;
  try {
    checks.push({
      name: "tmux version",
      status: "pass",
      detail: `${gateTmux(raw.stdout, raw.argv)} >= 3.0`,
    });
  } catch (err) {
    // A version text muxbridge cannot read may still be a usable (custom) build.
    const check = failedCheck("tmux version", err);
    if (isMuxError(err, "unparseable_output")) check.status = "warn";
    checks.push(check);
  }
  try {
    const where = deps.config.tmux.socket_path ?? deps.config.tmux.socket_name ??
      layer?.socket ?? "the default socket";
    checks.push({
      name: "tmux server",
      status: "pass",
      detail: `tmux ${await serverVersion(tmux, signal)} answers on ${where}`,
    });
  } catch (err) {
    checks.push(failedCheck("tmux server", err));
  }
  try {
    const { anchor: at } = await anchor.list(signal);
    checks.push({ name: "tmux anchor", status: "pass", detail: `panes open next to ${at}` });
  } catch (err) {
    checks.push(failedCheck("tmux anchor", err, ANCHOR_HINT));
  }
  return checks;
}
