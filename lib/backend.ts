/**
 * The one interface every multiplexer backend implements, and what it is given. The session
 * loop and the CLI only ever talk to a {@linkcode Backend}; they never branch on its name.
 *
 * Conventions every backend keeps:
 * - every program runs through `deps.run` with `config.command_timeout_ms`;
 * - every id and target passes `lib/validate.ts` before it reaches argv;
 * - "the pane does not exist" is a `MuxError` coded `pane_not_found` (from `interrupt`, `kill`,
 *   `setTitle`) or `null` (from `inspect`), decided from evidence the backend's file cites;
 * - output is parsed with zod; a mismatch is `unparseable_output` with the raw text cut short.
 *
 * @module
 */

import type { ChannelOpener } from "./channel.ts";
import type { Clock } from "./clock.ts";
import type { Config, LayoutName } from "./config.ts";
import type { Runner } from "./exec.ts";
import type { BackendName, EnvLookup, Identity } from "./identity.ts";
import type { Logger } from "./log.ts";

/** What a backend is built from. */
export interface BackendDeps {
  /** The exec seam. */
  run: Runner;
  /** The seam for long-lived programs (a control channel); absent: one process per command. */
  openChannel?: ChannelOpener;
  /** The environment lookup. */
  env: EnvLookup;
  /** The clock. */
  clock: Clock;
  /** The resolved config. */
  config: Config;
  /** The detected identity (the backend reads its own layer from it). */
  identity: Identity;
  /** Logs. */
  log: Logger;
}

/** What a backend can do, for the capability matrix and for the loop's choices. */
export interface Capabilities {
  /** Arranges panes (`applyLayout` does something). */
  layout: boolean;
  /** Sets a pane title. */
  title: boolean;
  /** Passes environment variables to the pane without argv (credentials). */
  env: boolean;
  /** Stores ownership marks in the multiplexer itself (survive a muxbridge crash). */
  marks: boolean;
  /** Opens panes without moving the user's focus. */
  focusSafe: boolean;
}

/** The binary and version a backend found. */
export interface ProbeResult {
  /** The program path or name used. */
  binary: string;
  /** The version, as semver text. */
  version: string;
}

/** A pane to open. */
export interface SpawnRequest {
  /** The child session the pane shows (goes into ownership marks). */
  sessionId: string;
  /** The clean title (see `cleanTitle`). */
  title: string;
  /** The program and arguments the pane runs, started without the user's shell. */
  argv: readonly string[];
  /** The pane's working directory (absolute). */
  cwd: string;
  /** Variables for the pane's program only (credentials); never put on argv. */
  env: Readonly<Record<string, string>>;
  /** The ownership mark: `<pid>:<start>` of the owning bridge, or `cli`. */
  owner: string;
  /** Aborts the spawn. */
  signal?: AbortSignal;
}

/** A pane that was opened. */
export interface SpawnedPane {
  /** The backend's pane id. */
  paneId: string;
  /** The pane program's process id, when the backend tells it. */
  pid?: number;
}

/** What a backend knows of one pane. */
export interface PaneInfo {
  /** The backend's pane id. */
  paneId: string;
  /** The pane's program has ended but the pane is still shown (dead, held). */
  dead: boolean;
  /** The pane program's process id, when known. */
  pid?: number;
  /** The pane's title, when known. */
  title?: string;
  /** The session in the pane's ownership mark, when the backend keeps marks. */
  sessionId?: string;
  /** The owner in the pane's ownership mark, when the backend keeps marks. */
  owner?: string;
}

/** A layout request; `panes` are the panes muxbridge owns in the session loop. */
export interface LayoutRequest {
  /** The layout. */
  layout: LayoutName;
  /** Percent for the main pane. */
  mainPaneSize: number;
  /** The owned panes, oldest first. */
  panes: readonly string[];
}

/** What a layout call did. */
export interface LayoutResult {
  /** Whether anything was changed. */
  applied: boolean;
  /** Why not, or what was done. */
  detail: string;
}

/** One `doctor` check. */
export interface Check {
  /** What was checked ("tmux binary"). */
  name: string;
  /** The outcome. */
  status: "pass" | "warn" | "fail";
  /** What was found. */
  detail: string;
  /** What to do about a warn or fail. */
  hint?: string;
}

/** A multiplexer backend. */
export interface Backend {
  /** The backend's name. */
  readonly name: BackendName;
  /** What it can do. */
  readonly capabilities: Capabilities;
  /**
   * The least `min_pane_lifetime_ms` this backend needs, when its panes take longer than most to
   * show their program (the effective value is the larger of this and the config's).
   */
  readonly minPaneLifetimeMs?: number;
  /**
   * Finds the binary and checks its version and reachability.
   *
   * @throws {MuxError} `binary_not_found`, `unsupported_version`, `backend_unreachable`.
   */
  probe(signal?: AbortSignal): Promise<ProbeResult>;
  /**
   * Opens a pane next to the anchor without taking focus, running `req.argv` directly.
   *
   * @throws {MuxError} `no_space`, `invalid_argument`, `command_failed`, `unparseable_output`…
   */
  spawn(req: SpawnRequest): Promise<SpawnedPane>;
  /** Reports a pane, or `null` when it does not exist. */
  inspect(paneId: string, signal?: AbortSignal): Promise<PaneInfo | null>;
  /** Lists panes that carry muxbridge's ownership marks (empty where there are no marks). */
  listOwned(signal?: AbortSignal): Promise<PaneInfo[]>;
  /** Sends the backend's interrupt (Ctrl+C) to the pane's program. */
  interrupt(paneId: string, signal?: AbortSignal): Promise<void>;
  /** Closes the pane at once. */
  kill(paneId: string, signal?: AbortSignal): Promise<void>;
  /** Sets the pane's title. */
  setTitle(paneId: string, title: string, signal?: AbortSignal): Promise<void>;
  /** Arranges the owned panes; never reshapes panes muxbridge does not own. */
  applyLayout(req: LayoutRequest, signal?: AbortSignal): Promise<LayoutResult>;
  /** Checks binary, version and reachability, each with a hint. */
  doctor(signal?: AbortSignal): Promise<Check[]>;
  /** Releases persistent resources (control channels). */
  dispose?(): Promise<void>;
}

/** Builds a backend. */
export type BackendFactory = (deps: BackendDeps) => Backend;
