/**
 * Chooses the backend: the config's `backend` when it names one, else the innermost multiplexer
 * the environment shows; then builds and probes it (binary, version, reachability). Failing that,
 * there is no backend and a reason a user can act on.
 *
 * @module
 */

import type { Backend, BackendDeps, BackendModule, ProbeResult } from "./backend.ts";
import { createBackend } from "./create_backend.ts";
import { detectedTitles, outsideKeys } from "./hints.ts";
import { toMuxError } from "../sys/errors.ts";

/** Why there is no backend, as a child's `pane.skipped` reason. */
export type NoBackendReason = "no_backend" | "unsupported_version" | "backend_unreachable";

/** The outcome of {@linkcode selectBackend}. */
export type Selection =
  | { ok: true; backend: Backend; probe: ProbeResult }
  | {
    ok: false;
    name: string | null;
    reason: NoBackendReason;
    message: string;
    hint: string;
    code: string;
  };

/** No backend to try at all (none chosen, none found, none built in). */
function noBackend(name: string | null, message: string, hint: string): Selection {
  return { ok: false, name, reason: "no_backend", code: "no_backend", message, hint };
}

/**
 * Picks, builds and probes the backend.
 *
 * @param deps What backends are built from (its `config.backend` and `identity` decide).
 * @param backends The backends (the registry).
 * @param signal Aborts the probe.
 * @returns The probed backend, or why there is none.
 */
export async function selectBackend(
  deps: BackendDeps,
  backends: readonly BackendModule[],
  signal?: AbortSignal,
): Promise<Selection> {
  const choice = deps.config.backend;
  if (choice === "none") {
    return noBackend(null, "backend is set to none", 'Set "backend" to auto or a multiplexer name');
  }
  const name = choice === "auto" ? deps.identity.backend : choice;
  if (name === null) {
    const outside = outsideKeys(backends);
    return noBackend(
      null,
      "No supported multiplexer found in the environment",
      `Run OpenCode inside ${detectedTitles(backends)}, or set backend${
        outside ? ` (and ${outside})` : ""
      } in the config`,
    );
  }
  const module = backends.find((b) => b.name === name);
  if (!module) {
    return noBackend(
      name,
      `The ${name} backend is not available in this build`,
      "Use another backend",
    );
  }
  try {
    const backend = await createBackend(module, deps);
    return { ok: true, backend, probe: await backend.probe(signal) };
  } catch (err) {
    const e = toMuxError(err);
    const reason: NoBackendReason =
      e.code === "unsupported_version" || e.code === "backend_unreachable" ? e.code : "no_backend";
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
