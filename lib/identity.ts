/**
 * Which multiplexers this process runs inside, read from the environment through an injected
 * lookup, and which one wins.
 *
 * Several layers are normal (tmux inside kitty). Terminals (kitty, cmux, WezTerm) always hold
 * the multiplexers that run in them, so they are outermost; among multiplexers the environment
 * cannot tell the nesting, so the contract's order decides: tmux > zellij > herdr > cmux > kitty
 * > wezterm. The `provider` backend is never detected: only the config chooses it.
 *
 * @module
 */

/** Every backend: the multiplexers, and the pane provider a config names. */
export const BACKEND_NAMES = [
  "tmux",
  "zellij",
  "herdr",
  "kitty",
  "cmux",
  "wezterm",
  "provider",
] as const;

/** A backend's name. */
export type BackendName = typeof BACKEND_NAMES[number];

/** Reads one environment variable; `undefined` when unset. */
export type EnvLookup = (name: string) => string | undefined;

/** The contract's precedence when several layers are found, innermost first. */
export const PRECEDENCE: readonly BackendName[] = [
  "tmux",
  "zellij",
  "herdr",
  "cmux",
  "kitty",
  "wezterm",
];

/** One multiplexer layer found in the environment. */
export interface Layer {
  /** Which backend. */
  backend: BackendName;
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
  backend: BackendName | null;
  /** Every layer found, innermost first. */
  layers: Layer[];
  /** The harness. */
  harness: Harness;
}

function nonEmpty(env: EnvLookup, name: string): string | undefined {
  const v = env(name);
  return v === undefined || v === "" ? undefined : v;
}

function int(value: string | undefined): number | undefined {
  if (value === undefined || !/^\d+$/.test(value)) return undefined;
  return Number(value);
}

function withDefined(value: Layer): Layer {
  for (const key of Object.keys(value) as Array<keyof Layer>) {
    if (value[key] === undefined) delete value[key];
  }
  return value;
}

/** Reads the tmux layer: `TMUX=<socket>,<server pid>,<session>` and `TMUX_PANE=%N`. */
function tmuxLayer(env: EnvLookup): Layer | null {
  const tmux = nonEmpty(env, "TMUX");
  if (!tmux) return null;
  const parts = tmux.split(",");
  const pid = parts.length >= 3 ? int(parts[parts.length - 2]) : undefined;
  const socket = parts.length >= 3 ? parts.slice(0, -2).join(",") : tmux;
  return withDefined({ backend: "tmux", paneId: nonEmpty(env, "TMUX_PANE") ?? null, socket, pid });
}

/** Reads the zellij layer: `ZELLIJ`, `ZELLIJ_SESSION_NAME`, `ZELLIJ_PANE_ID` (a bare number). */
function zellijLayer(env: EnvLookup): Layer | null {
  // zellij sets ZELLIJ=0 in its panes; an empty value is treated as unset.
  if (!nonEmpty(env, "ZELLIJ") && !nonEmpty(env, "ZELLIJ_SESSION_NAME")) return null;
  const pane = nonEmpty(env, "ZELLIJ_PANE_ID");
  return withDefined({
    backend: "zellij",
    paneId: pane === undefined ? null : /^\d+$/.test(pane) ? `terminal_${pane}` : pane,
    session: nonEmpty(env, "ZELLIJ_SESSION_NAME"),
    socket: nonEmpty(env, "ZELLIJ_SOCKET_DIR"),
  });
}

/** Reads the herdr layer: `HERDR_ENV`/`HERDR_PANE_ID` and the socket, workspace, tab, binary. */
function herdrLayer(env: EnvLookup): Layer | null {
  const pane = nonEmpty(env, "HERDR_PANE_ID");
  if (!pane && env("HERDR_ENV") !== "1") return null;
  return withDefined({
    backend: "herdr",
    paneId: pane ?? null,
    socket: nonEmpty(env, "HERDR_SOCKET_PATH"),
    session: nonEmpty(env, "HERDR_SESSION"),
    workspaceId: nonEmpty(env, "HERDR_WORKSPACE_ID"),
    tabId: nonEmpty(env, "HERDR_TAB_ID"),
    binPath: nonEmpty(env, "HERDR_BIN_PATH"),
  });
}

/** Reads the kitty layer: `KITTY_WINDOW_ID`/`KITTY_PID` and `KITTY_LISTEN_ON`. */
function kittyLayer(env: EnvLookup): Layer | null {
  const window = nonEmpty(env, "KITTY_WINDOW_ID");
  const pid = nonEmpty(env, "KITTY_PID");
  if (!window && !pid) return null;
  return withDefined({
    backend: "kitty",
    paneId: window ?? null,
    socket: nonEmpty(env, "KITTY_LISTEN_ON"),
    pid: int(pid),
  });
}

/** Reads the cmux layer; only a complete socket + workspace + surface identity counts. */
function cmuxLayer(env: EnvLookup): Layer | null {
  const socket = nonEmpty(env, "CMUX_SOCKET_PATH");
  const workspaceId = nonEmpty(env, "CMUX_WORKSPACE_ID");
  const surface = nonEmpty(env, "CMUX_SURFACE_ID");
  if (!socket || !workspaceId || !surface) return null;
  return { backend: "cmux", paneId: surface, socket, workspaceId };
}

/**
 * Reads the WezTerm layer: `WEZTERM_PANE` (the pane's numeric id, set in every pane) and
 * `WEZTERM_UNIX_SOCKET` (the GUI's or mux server's socket, set for its panes); either one
 * counts (docs/backends/wezterm.md §4).
 */
function weztermLayer(env: EnvLookup): Layer | null {
  const pane = nonEmpty(env, "WEZTERM_PANE");
  const socket = nonEmpty(env, "WEZTERM_UNIX_SOCKET");
  if (!pane && !socket) return null;
  return withDefined({
    backend: "wezterm",
    paneId: pane !== undefined && /^\d+$/.test(pane) ? pane : null,
    socket,
  });
}

const READERS: Record<BackendName, (env: EnvLookup) => Layer | null> = {
  tmux: tmuxLayer,
  zellij: zellijLayer,
  herdr: herdrLayer,
  kitty: kittyLayer,
  cmux: cmuxLayer,
  wezterm: weztermLayer,
  // Never detected: a pane provider is chosen by the config (`backend: "provider"`).
  provider: () => null,
};

function harness(name: Harness["name"], sessionId?: string, pid?: number): Harness {
  const h: Harness = { name };
  if (sessionId !== undefined) h.sessionId = sessionId;
  if (pid !== undefined) h.pid = pid;
  return h;
}

/** Reads the harness: OpenCode (`OPENCODE`) or Claude Code (`CLAUDECODE`, `CLAUDE_CODE_SESSION_ID`). */
function readHarness(env: EnvLookup): Harness {
  const claudeSession = nonEmpty(env, "CLAUDE_CODE_SESSION_ID");
  if (claudeSession || env("CLAUDECODE") === "1") {
    return harness("claude-code", claudeSession, int(nonEmpty(env, "CLAUDE_PID")));
  }
  const openSession = nonEmpty(env, "OPENCODE_SESSION_ID");
  if (openSession || nonEmpty(env, "OPENCODE")) {
    return harness("opencode", openSession, int(nonEmpty(env, "OPENCODE_PID")));
  }
  return { name: null };
}

/**
 * Finds every multiplexer layer and the harness in the environment.
 *
 * @param env The environment lookup (tests pass a map-backed one).
 * @returns The layers, innermost first, the winning backend and the harness.
 *
 * @example Tmux inside kitty
 * ```ts
 * import { detectIdentity } from "./identity.ts";
 * const vars: Record<string, string> = { TMUX: "/tmp/tmux-0/default,1,0", TMUX_PANE: "%1", KITTY_WINDOW_ID: "1" };
 * const id = detectIdentity((k) => vars[k]);
 * id.backend; // "tmux"
 * id.layers.map((l) => l.backend); // ["tmux", "kitty"]
 * ```
 */
export function detectIdentity(env: EnvLookup): Identity {
  const layers = PRECEDENCE.map((name) => READERS[name](env)).filter((l): l is Layer => l !== null);
  return { backend: layers[0]?.backend ?? null, layers, harness: readHarness(env) };
}
