/**
 * Which multiplexers this process runs in, read from the environment through an injected lookup,
 * and which one wins.
 *
 * Several layers are normal (tmux inside kitty). Each backend declares how it reads its layer and
 * where its layer stands (`BackendModule.detect` of `lib/backend/backend.ts`): a terminal always
 * holds the multiplexers that run in it, so terminals are outermost; among one kind the
 * environment cannot tell the nesting, so each backend's rank decides, which gives the contract's
 * order (tmux > zellij > herdr > cmux > kitty > wezterm: `tests/backends/registry_test.ts`). A
 * backend without detection (the pane provider) is never detected: only the config chooses it.
 *
 * @module
 */

import { envInt, type EnvLookup, envText } from "../sys/env.ts";

export type { EnvLookup };

/** One multiplexer layer found in the environment. */
export interface Layer {
  /** Which backend (its name). */
  backend: string;
  /** The pane (window, surface) this process runs in, in the backend's own id form. */
  paneId: string | null;
  /** The backend's socket or server address, when the environment names one. */
  socket?: string;
  /** Named session, when the backend has one. */
  session?: string;
  /** Workspace (herdr, cmux). */
  workspaceId?: string;
  /** Tab (herdr). */
  tabId?: string;
  /** Server or terminal process id, when known. */
  pid?: number;
  /** The backend's own binary path, when it tells (herdr). */
  binPath?: string;
}

/** The coding-agent harness this process runs under, when the environment says. */
export interface Harness {
  /** `opencode`, `claude-code`, or null when none was recognised. */
  name: "opencode" | "claude-code" | null;
  /** The harness's session id, when exposed. */
  sessionId?: string;
  /** The harness's process id, when exposed. */
  pid?: number;
}

/** Everything {@linkcode detectIdentity} found. */
export interface Identity {
  /** The winning layer's backend, or null. */
  backend: string | null;
  /** Every layer found, innermost first. */
  layers: Layer[];
  /** The harness. */
  harness: Harness;
}

/**
 * A backend as detection reads it: its name and how it finds itself (`BackendModule` of
 * `lib/backend/backend.ts`; null: never detected).
 */
export interface Detector {
  /** The backend's name. */
  readonly name: string;
  /** Its detection, or null. */
  readonly detect: {
    /** Where its layer stands: every terminal is outer to every multiplexer; lower rank is inner. */
    readonly nesting: { readonly kind: "multiplexer" | "terminal"; readonly rank: number };
    /** Reads its layer, or null. */
    read(env: EnvLookup): Layer | null;
  } | null;
}

const KIND_ORDER = { multiplexer: 0, terminal: 1 } as const;

/**
 * The backends that can be detected, innermost first: the order that decides when the
 * environment shows several layers and cannot tell how they nest.
 *
 * @param backends The backends.
 * @returns Their names, innermost first (the provider, never detected, is not among them).
 *
 * @example
 * ```ts
 * import { precedence } from "./identity.ts";
 * const at = (kind: "multiplexer" | "terminal", rank: number) => ({ nesting: { kind, rank }, read: () => null });
 * precedence([{ name: "kitty", detect: at("terminal", 2) }, { name: "tmux", detect: at("multiplexer", 1) }]);
 * // ["tmux", "kitty"]
 * ```
 */
export function precedence(backends: readonly Detector[]): string[] {
  return ordered(backends).map((b) => b.name);
}

function ordered(backends: readonly Detector[]) {
  return backends.flatMap((b) => b.detect ? [{ name: b.name, detect: b.detect }] : [])
    .sort((x, y) =>
      KIND_ORDER[x.detect.nesting.kind] - KIND_ORDER[y.detect.nesting.kind] ||
      x.detect.nesting.rank - y.detect.nesting.rank
    );
}

function harness(name: Harness["name"], sessionId?: string, pid?: number): Harness {
  const h: Harness = { name };
  if (sessionId !== undefined) h.sessionId = sessionId;
  if (pid !== undefined) h.pid = pid;
  return h;
}

/** Reads the harness: OpenCode (`OPENCODE`) or Claude Code (`CLAUDECODE`, `CLAUDE_CODE_SESSION_ID`). */
function readHarness(env: EnvLookup): Harness {
  const claudeSession = envText(env, "CLAUDE_CODE_SESSION_ID");
  if (claudeSession || env("CLAUDECODE") === "1") {
    return harness("claude-code", claudeSession, envInt(envText(env, "CLAUDE_PID")));
  }
  const openSession = envText(env, "OPENCODE_SESSION_ID");
  if (openSession || envText(env, "OPENCODE")) {
    return harness("opencode", openSession, envInt(envText(env, "OPENCODE_PID")));
  }
  return { name: null };
}

/**
 * Finds every multiplexer layer and the harness in the environment.
 *
 * @param env The environment lookup (tests pass a map-backed one).
 * @param backends The backends whose layers to look for (the registry, `backends/mod.ts`).
 * @returns The layers, innermost first, the winning backend and the harness.
 *
 * @example A layer found by the one backend given
 * ```ts
 * import { detectIdentity } from "./identity.ts";
 * const vars: Record<string, string> = { DEMO_PANE: "7" };
 * const demo = {
 *   name: "demo",
 *   detect: {
 *     nesting: { kind: "multiplexer" as const, rank: 1 },
 *     read: (env: (name: string) => string | undefined) => {
 *       const pane = env("DEMO_PANE");
 *       return pane === undefined ? null : { backend: "demo", paneId: pane };
 *     },
 *   },
 * };
 * const id = detectIdentity((k) => vars[k], [demo]);
 * id.backend; // "demo"
 * ```
 */
export function detectIdentity(env: EnvLookup, backends: readonly Detector[]): Identity {
  const layers = ordered(backends).map((b) => b.detect.read(env))
    .filter((l): l is Layer => l !== null);
  return { backend: layers[0]?.backend ?? null, layers, harness: readHarness(env) };
}
