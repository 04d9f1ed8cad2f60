/**
 * Private to the zellij backend: which zellij server muxbridge talks to (docs/backends/zellij.md
 * §11). Pane ids are never reused within one server's life (0.44.0), but a session killed and
 * started again under the same name (or resurrected) counts from the start again. zellij's CLI
 * names no server process; what it shows is each session's age: `zellij list-sessions
 * --no-formatting` prints `<name> [Created <age> ago] <suffix>`, the age being the time since the
 * server's socket was made, in humantime's format (`1h 2m 3s`). So the instance is the session's
 * name and the second its server started, read back from that age as a span (the age is cut to
 * the second, and the clock moves while the CLI runs).
 *
 * @module
 */

import { runCommand } from "../../lib/backend/_run_command.ts";
import type { BackendDeps, Instance } from "../../lib/backend/backend.ts";
import { validateTarget } from "../../lib/sys/validate.ts";
import { zellijError } from "./_command.ts";
import type { ZellijConfig } from "./_traits.ts";

/** humantime's units (`format_duration`), in seconds; a year is 365.25 days, a month 30.44. */
const UNITS: Readonly<Record<string, number>> = {
  year: 31_557_600,
  years: 31_557_600,
  month: 2_630_016,
  months: 2_630_016,
  day: 86_400,
  days: 86_400,
  h: 3600,
  m: 60,
  s: 1,
  ms: 0.001,
  us: 0.000001,
  ns: 0.000000001,
};

/**
 * Reads humantime's `format_duration` text (`1day 2h 3m 4s`, `0s`) in whole seconds.
 *
 * @param text The age.
 * @returns The seconds (sub-second parts dropped), or null when it is not such a text.
 */
export function parseAge(text: string): number | null {
  const parts = text.trim().split(" ");
  let total = 0;
  for (const part of parts) {
    const m = /^(\d{1,20})([a-z]+)$/.exec(part);
    const unit = m ? UNITS[m[2]] : undefined;
    if (!m || unit === undefined) return null;
    total += Number(m[1]) * unit;
  }
  return Math.floor(total);
}

/**
 * Finds a running session's age in `zellij list-sessions --no-formatting` output.
 *
 * @param stdout What the CLI printed.
 * @param session The session's name.
 * @returns Its age in seconds, or null when no running session of that name is listed.
 */
export function sessionAge(stdout: string, session: string): number | null {
  for (const line of stdout.split("\n")) {
    const m = /^(.*) \[Created (.*) ago\](?: (.*))?$/.exec(line);
    // An exited session (resurrectable, or a dead registry entry) runs no server.
    if (!m || m[1] !== session || /EXITED|DEAD/.test(m[3] ?? "")) continue;
    return parseAge(m[2]);
  }
  return null;
}

/**
 * The session muxbridge talks to and when its server started.
 *
 * @param deps The backend's deps (runner, clock, config).
 * @param session The session muxbridge addresses; undefined: none is known.
 * @param signal Aborts the call.
 * @returns The instance, or null when the session is unknown or not listed as running.
 * @throws {MuxError} What the CLI answered, other than "no sessions".
 */
export async function sessionInstance(
  deps: BackendDeps<ZellijConfig>,
  session: string | undefined,
  signal?: AbortSignal,
): Promise<Instance | null> {
  if (session === undefined) return null;
  const before = deps.clock.now();
  const run = await runCommand(deps, [
    validateTarget("zellij binary", deps.config.zellij.bin),
    "list-sessions",
    "--no-formatting",
  ], { signal, notFoundHint: "Install zellij >= 0.44.1 or set zellij.bin to its path" });
  const after = deps.clock.now();
  if (run.code !== 0) {
    if (/No active zellij sessions/.test(run.stderr)) return null;
    throw zellijError("list the sessions", run);
  }
  const age = sessionAge(run.stdout, session);
  if (age === null) return null;
  // zellij cut the age to the second when it ran, somewhere between `before` and `after`.
  return {
    address: session,
    startedAt: [Math.floor(before / 1000) - age - 1, Math.ceil(after / 1000) - age],
  };
}
