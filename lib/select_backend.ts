/**
 * Chooses the backend: the config's `backend` when it names one, else the innermost multiplexer
 * the environment shows; then probes it (binary, version, reachability). Failing that, there is
 * no backend and a reason a user can act on.
 *
 * @module
 */

import type { Backend, BackendDeps, BackendFactory, ProbeResult } from "./backend/backend.ts";
import { toMuxError } from "./sys/errors.ts";
import type { BackendName } from "./identity.ts";
import type { SkipReason } from "./bridge/protocol.ts";

/** The outcome of {@linkcode selectBackend}. */
export type Selection =
  | { ok: true; backend: Backend; probe: ProbeResult }
  | {
    ok: false;
    name: BackendName | null;
    reason: SkipReason;
    message: string;
    hint: string;
    code: string;
  };

/** No backend to try at all (none chosen, none found, none built in). */
function noBackend(name: BackendName | null, message: string, hint: string): Selection {
  return { ok: false, name, reason: "no_backend", code: "no_backend", message, hint };
}

/**
 * Picks and probes the backend.
 *
 * @param deps What backends are built from (its `config.backend` and `identity` decide).
 * @param factories The registry's factories by name.
 * @param signal Aborts the probe.
 * @returns The probed backend, or why there is none.
 */
export async function selectBackend(
  deps: BackendDeps,
  factories: Partial<Record<BackendName, BackendFactory>>,
  signal?: AbortSignal,
): Promise<Selection> {
  const choice = deps.config.backend;
  if (choice === "none") {
    return noBackend(null, "backend is set to none", 'Set "backend" to auto or a multiplexer name');
  }
  const name: BackendName | null = choice === "auto" ? deps.identity.backend : choice;
  if (name === null) {
    return noBackend(
      null,
      "No supported multiplexer found in the environment",
      "Run OpenCode inside tmux, zellij, herdr, kitty, cmux or WezTerm, or set backend (and tmux.target, or provider.command) in the config",
    );
  }
  const factory = factories[name];
  if (!factory) {
    return noBackend(
      name,
      `The ${name} backend is not available in this build`,
      "Use another backend",
    );
  }
  try {
    const backend = await factory(deps);
    return { ok: true, backend, probe: await backend.probe(signal) };
  } catch (err) {
    const e = toMuxError(err);
    const reason: SkipReason = e.code === "unsupported_version" || e.code === "backend_unreachable"
      ? e.code
      : "no_backend";
    return {
      ok: false,
      name,
      reason,
      code: e.code,
      message: e.message,
      hint: e.hint ?? `Run \`muxbridge doctor\` for details`,
    };
  }
}
