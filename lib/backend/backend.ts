/**
 * The one interface every multiplexer backend implements, and what it is given. The session
 * loop and the CLI only ever talk to a {@linkcode Backend}; they never branch on its name.
 *
 * Conventions every backend keeps:
 * - every program runs through `runCommand` (`_run_command.ts`: `deps.run` bounded by
 *   `config.command_timeout_ms`); a failure that means nothing more specific is `commandFailed`
 *   (`_command_failed.ts`);
 * - every id and target passes `lib/validate.ts` before it reaches argv;
 * - "the pane does not exist" is a `MuxError` coded `pane_not_found` (from `interrupt`, `kill`,
 *   `setTitle`) or `null` (from `inspect`), decided from evidence the backend's document under
 *   `docs/backends/` records;
 * - output is parsed with zod; a mismatch is `unparseable_output` with the raw text cut short.
 *
 * @module
 */

import type { Clock } from "../sys/clock.ts";
import type { Config, LayoutName } from "../config.ts";
import type { Runner } from "../sys/exec.ts";
import type { BackendName, EnvLookup, Identity } from "../identity.ts";
import type { Logger } from "../sys/log.ts";

/** What a backend is built from. */
export interface BackendDeps {
  /** The exec seam. */
  run: Runner;
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
  /**
   * `kill()` resolving means the pane is gone (the multiplexer removes it before answering),
   * so a close need not ask again. @default false
   */
  killVerifies?: boolean;
  /**
   * Puts the spawn token ({@linkcode SpawnRequest.token}) on a new pane in the command that
   * creates it, and finds the pane by it later ({@linkcode Backend.findSpawned}): a pane whose
   * spawn answer was lost (a timeout, unreadable output, muxbridge killed mid-spawn) is found and
   * closed whenever it shows up. Without it, only what `spawn` itself can tell apart right away
   * is cleaned up (see the backend's document under `docs/backends/`).
   */
  spawnToken: boolean;
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
  /**
   * A random token (`lib/session/lost_spawns.ts` `newSpawnToken`) the backend puts on the new
   * pane in the very command that creates it, where it can (`capabilities.spawnToken`). The
   * pending record written before the spawn holds it: that record, not the token, is what makes
   * the pane muxbridge's.
   */
  token?: string;
  /** Aborts the spawn. */
  signal?: AbortSignal;
}

/** A pane that was opened. */
export interface SpawnedPane {
  /** The backend's pane id. */
  paneId: string;
  /** The pane program's process id, when the backend tells it. */
  pid?: number;
  /** The layout was already applied with the open (no separate layout pass is needed). */
  arranged?: boolean;
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

/** A backend's version gate: the oldest version it supports and how to say so. */
export interface VersionGate {
  /** The program, as messages name it: `tmux`. */
  readonly program: string;
  /** The oldest supported version (semver). */
  readonly min: string;
  /** The oldest version as messages show it, when not as `min`: `3.0`. */
  readonly minShown?: string;
  /** What to do when the version text holds no version. */
  readonly unreadableHint: string;
  /** What to do when the version is too old. */
  readonly tooOldHint: string;
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
  /**
   * Lists the panes that carry a spawn token (see {@linkcode SpawnRequest.token}): the pane a
   * spawn made although its answer was lost. Always empty without `capabilities.spawnToken`.
   *
   * @throws {MuxError} when the panes cannot be listed (the caller keeps its pending record).
   */
  findSpawned(token: string, signal?: AbortSignal): Promise<PaneInfo[]>;
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
  /** Releases persistent resources (open connections), if the backend holds any. */
  dispose?(): Promise<void>;
}

/** Builds a backend; it may load the backend's code first (the registry loads it on demand). */
export type BackendFactory = (deps: BackendDeps) => Backend | Promise<Backend>;
