/**
 * The one interface every multiplexer backend implements, and what it is given. The session
 * loop and the CLI only ever talk to a {@linkcode Backend}; they never branch on its name.
 *
 * Conventions every backend keeps:
 * - every program runs through `runCommand` (`_run_command.ts`: `deps.run` bounded by
 *   `config.command_timeout_ms`); a failure that means nothing more specific is `commandFailed`
 *   (`_command_failed.ts`);
 * - ids arrive checked (`SessionId`, `PaneId`, made where the input entered); a backend checks
 *   only that a pane id has its own form (`_pane_id.ts`), and every other value (a directory, a
 *   socket, a title) passes `lib/sys/validate.ts` before it reaches argv;
 * - "the pane does not exist" is a `MuxError` coded `pane_not_found` (from `interrupt`, `kill`,
 *   `setTitle`) or `null` (from `inspect`), decided from evidence the backend's document under
 *   `docs/backends/` records;
 * - output is parsed with zod; a mismatch is `unparseable_output` with the raw text cut short.
 *
 * @module
 */

import type { z } from "zod";
import type { Clock } from "../sys/clock.ts";
import type { Config, LayoutName } from "../config/config.ts";
import type { ConfigSection, SectionSchema } from "../config/section.ts";
import type { Runner } from "../sys/exec.ts";
import type { EnvLookup, Identity, Layer } from "./identity.ts";
import type { Logger } from "../sys/log.ts";
import type { PaneId, SessionId } from "../sys/validate.ts";
import type { SpawnStatus, StatusPlace } from "./pane_status.ts";

/**
 * The form of a backend's name (`tmux`, `wezterm`): lower-case letters and digits, starting with a
 * letter. A pane record names its backend in this form; one this build lacks is kept, not
 * refused (a record of a newer or older muxbridge).
 */
export const BACKEND_NAME: RegExp = /^[a-z][a-z0-9]{0,31}$/;

/**
 * What a backend is built from.
 *
 * @typeParam C The config it reads: muxbridge's keys, and for a backend its own section
 *   ({@linkcode SectionConfig}).
 */
export interface BackendDeps<C extends Config = Config> {
  /** The exec seam. */
  run: Runner;
  /** The environment lookup. */
  env: EnvLookup;
  /** The clock. */
  clock: Clock;
  /** The resolved config. */
  config: C;
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

/** A pane to open (and the status it opens with: {@linkcode SpawnStatus}). */
export interface SpawnRequest extends SpawnStatus {
  /** The child session the pane shows (goes into ownership marks), checked where it entered. */
  sessionId: SessionId;
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
  paneId: PaneId;
  /** The pane program's process id, when the backend tells it. */
  pid?: number;
  /** The layout was already applied with the open (no separate layout pass is needed). */
  arranged?: boolean;
}

/** What a backend knows of one pane. */
export interface PaneInfo {
  /** The backend's pane id. */
  paneId: PaneId;
  /** The pane's program has ended but the pane is still shown (dead, held). */
  dead: boolean;
  /** The pane program's process id, when known (whose word it is: {@linkcode Ownership.pid}). */
  pid?: number;
  /**
   * The spawn token the pane was started with, as the multiplexer shows it (the marker in its
   * start command, the variable in its environment): `null` when the backend read the pane and
   * found none (a pane muxbridge did not start), absent when it cannot tell. Read where it costs
   * nothing more than the listing itself.
   */
  token?: string | null;
  /** The pane's title, when known. */
  title?: string;
  /** The session in the pane's ownership mark, when the backend keeps marks. */
  sessionId?: string;
  /** The owner in the pane's ownership mark, when the backend keeps marks. */
  owner?: string;
}

/**
 * The multiplexer instance a backend talks to, as far as it can tell it from a later one: a
 * restarted server (a reboot, `tmux kill-server`) starts its pane ids again, so a pane id means
 * something only together with the instance it was opened on. A record names it
 * (`lib/session/pane_store.ts`), and a recorded pane is acted on only while the backend reports
 * the same instance (`lib/backend/instance.ts`).
 */
export interface Instance {
  /** Where it is reached: a socket path, a listen address, a session name. */
  readonly address: string;
  /** Its server (or terminal) process, when the multiplexer names it. */
  readonly pid?: number;
  /**
   * When its server started, in whole seconds since the epoch, as the multiplexer states it:
   * `[earliest, latest]` (equal when it states the second; a span when only an age is shown).
   */
  readonly startedAt?: readonly [number, number];
  /** Anything else that tells it from a later one at the same address (opaque, compared exactly). */
  readonly stamp?: string;
}

/** What a backend can show of the program a pane runs ({@linkcode Backend.paneProgram}). */
export interface PaneProgram {
  /** Its process id, when known. */
  pid?: number;
  /** The spawn token it was started with: as {@linkcode PaneInfo.token}. */
  token?: string | null;
}

/**
 * How a backend proves that a live pane is the one a record names: the instance it reads
 * ({@linkcode Backend.instance}), whose word a pane's pid is, and whether its ids alone are
 * proof. Each backend declares it in its own folder; `lib/session/pane_proof.ts` applies it, and
 * `docs/backends/<name>.md` ("What proves a pane is ours") says what it rests on.
 */
export interface Ownership {
  /** What {@linkcode Backend.instance} names, for logs and `doctor`: "socket path, server pid and start time". */
  readonly instance: string;
  /**
   * Whose word a pane's pid is. `multiplexer`: the multiplexer started that process itself and
   * names it (tmux's `pane_pid`): a pid whose start stamp is the recorded one is the recorded
   * program. `claimed`: another program's word (a pane provider), or the program's own (its
   * environment): such a pid is signalled only while its environment carries the pane's spawn
   * token. `none`: no pid is ever reported.
   */
  readonly pid: "multiplexer" | "claimed" | "none";
  /**
   * Pane ids are random and never handed out twice (cmux's surface UUIDs): a listed pane with the
   * recorded id, on the recorded instance, is the recorded pane even where its program cannot
   * be read. @default false
   */
  readonly uniqueIds?: boolean;
}

/** A layout request; `panes` are the panes muxbridge owns in the session loop. */
export interface LayoutRequest {
  /** The layout. */
  layout: LayoutName;
  /** Percent for the main pane. */
  mainPaneSize: number;
  /** The owned panes, oldest first. */
  panes: readonly PaneId[];
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

/**
 * A backend's version gate, stated as data: how its program's version reads, the oldest it
 * supports, and what to say when a version is missing or too old (`_version_gate.ts` applies it).
 */
export interface VersionGate {
  /** The program, as messages name it: `tmux`. */
  readonly program: string;
  /**
   * How its versions read and order: `semver` (`major.minor[.patch][-pre]`), or `date`, WezTerm's
   * `YYYYMMDD-HHMMSS-<commit>`, ordered by its date and time, never read as semver digits.
   */
  readonly scheme: "semver" | "date";
  /**
   * Finds the version in what the program prints, with named groups: `major`, `minor`, `patch`
   * (optional; 0 when absent) and `pre` (a pre-release that sorts before its release; leave the
   * group out where a suffix means the release's features) for `semver`; `date` (`YYYYMMDD`),
   * `time` (`HHMMSS`) and `commit` for `date`.
   */
  readonly pattern: RegExp;
  /** The oldest supported version: semver text (`3.0.0`), or a date version as printed. */
  readonly min: string;
  /** The oldest version as messages show it, when not as `min`: `3.0`. */
  readonly minShown?: string;
  /** What to do when the version text holds no version. */
  readonly unreadableHint: string;
  /** What to do when the version is too old. */
  readonly tooOldHint: string;
}

/** A version a {@linkcode VersionGate} read. */
export interface Version {
  /** As semver, which orders it: `3.3.0`; a date version `20240203.110809.0+5046fc22`. */
  readonly semver: string;
  /** A date version as printed (`20240203-110809-5046fc22`); absent for semver. */
  readonly text?: string;
  /** A date version's date, ISO (`2024-02-03`); absent for semver. */
  readonly date?: string;
}

/** The version of a protocol a backend speaks instead of a program it runs (the pane provider). */
export interface ProtocolVersion {
  /** Marks a protocol rather than a program. */
  readonly scheme: "protocol";
  /** The protocol, as documents name it: `pane-provider protocol`. */
  readonly protocol: string;
  /** The version spoken; the other side must speak the same. */
  readonly version: string;
}

/**
 * A multiplexer backend. Every pane id it reports is a {@linkcode PaneId}, made once by its
 * parsers where the id enters from the multiplexer (`_pane_id.ts`). An id it is handed is a
 * `PaneId` already (checked where it entered: a pane record, the CLI, the session loop); the
 * backend still checks it has its own form before it reaches argv, so an id of another backend's
 * form is refused, never sent. Its status place, where it has one: {@linkcode StatusPlace}.
 */
export interface Backend extends StatusPlace {
  /** The backend's name (its {@linkcode BackendModule.name}). */
  readonly name: string;
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
  /** How its panes are proven to be the ones recorded. */
  readonly ownership: Ownership;
  /** Reports a pane, or `null` when it does not exist. */
  inspect(paneId: PaneId, signal?: AbortSignal): Promise<PaneInfo | null>;
  /**
   * The multiplexer instance it talks to now, or null when it cannot tell one from another.
   *
   * @throws {MuxError} when the multiplexer cannot be asked (the caller decides nothing then).
   */
  instance(signal?: AbortSignal): Promise<Instance | null>;
  /**
   * The program a pane runs, where {@linkcode Backend.inspect} does not show it at no extra cost
   * (herdr asks for the pid, WezTerm reads the programs' environments): called only when
   * ownership is decided (cleanup, adoption, `close`). Absent: `inspect` shows all there is.
   *
   * @throws {MuxError} when it cannot be read.
   */
  paneProgram?(paneId: PaneId, signal?: AbortSignal): Promise<PaneProgram>;
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
  interrupt(paneId: PaneId, signal?: AbortSignal): Promise<void>;
  /** Closes the pane at once. */
  kill(paneId: PaneId, signal?: AbortSignal): Promise<void>;
  /** Sets the pane's title. */
  setTitle(paneId: PaneId, title: string, signal?: AbortSignal): Promise<void>;
  /** Arranges the owned panes; never reshapes panes muxbridge does not own. */
  applyLayout(req: LayoutRequest, signal?: AbortSignal): Promise<LayoutResult>;
  /** Checks binary, version and reachability, each with a hint. */
  doctor(signal?: AbortSignal): Promise<Check[]>;
  /** Releases persistent resources (open connections), if the backend holds any. */
  dispose?(): Promise<void>;
}

/**
 * Where a backend's layer stands when the environment shows several (tmux inside kitty): a
 * terminal holds the multiplexers that run in it, so every terminal is outer to every
 * multiplexer; among one kind, the lower rank is inner (the contract's order, where the
 * environment cannot tell).
 */
export interface Nesting {
  /** A multiplexer, or a terminal (which always holds the multiplexers running in it). */
  readonly kind: "multiplexer" | "terminal";
  /** Among its kind, lower is inner; ranks are unique within a kind. */
  readonly rank: number;
}

/** How a backend finds itself in the environment. */
export interface Detection {
  /** The environment variables {@linkcode Detection.read} reads (for `detect` and the docs). */
  readonly envVars: readonly string[];
  /** Where its layer stands among others. */
  readonly nesting: Nesting;
  /**
   * Reads its layer from the environment: the pane this process runs in, the socket, …
   *
   * @param env The environment lookup.
   * @returns The layer, or null when the environment shows none of it.
   */
  read(env: EnvLookup): Layer | null;
}

/** What the CLI says about a backend beside the messages of its own code. */
export interface BackendHints {
  /**
   * The config key that points muxbridge at this backend where the environment does not show
   * it, for the "no multiplexer found" hint (`tmux.target`); absent: none is suggested.
   */
  readonly outside?: string;
}

/**
 * A backend's row of the README's backend matrix (generated by `scripts/gen_readme.ts`), in
 * Markdown: each field is one cell.
 */
export interface ReadmeRow {
  /** The versions it supports. */
  readonly versions: string;
  /** What detection reads (and the config keys that replace it). */
  readonly detectedFrom: string;
  /** How a pane opens. */
  readonly spawn: string;
  /** How a pane closes, and how the close is verified. */
  readonly close: string;
  /** What `layout` does. */
  readonly layout: string;
  /** How a pane is titled. */
  readonly title: string;
  /** Whether opening a pane keeps the user's focus, and how. */
  readonly focusSafe: string;
  /** How the server's credentials reach a pane. */
  readonly credentials: string;
  /** Where ownership marks live. */
  readonly marks: string;
  /** What the backend was verified against. */
  readonly verified: string;
}

/**
 * The config a backend with section `S` named `N` reads: muxbridge's keys and its own section.
 *
 * @typeParam N The backend's name, the key of its section.
 * @typeParam S Its section's schema.
 *
 * @internal
 */
export type SectionConfig<N extends string, S extends SectionSchema> =
  & Config
  & { readonly [K in N]: z.output<S> };

/**
 * Everything about one backend, declared in `backends/<name>/mod.ts`: the registry
 * (`backends/mod.ts`) lists these, and identity, config, selection, `doctor`, `detect`, `schema
 * config` and the README's tables read them. Only {@linkcode BackendModule.create} loads the
 * backend's code, so a process holds the code of the one backend it builds.
 *
 * @typeParam N The backend's name.
 * @typeParam S Its config section's schema.
 */
export interface BackendModule<N extends string = string, S extends SectionSchema = SectionSchema> {
  /** Its name: the `backend` config value, its config section's key, `--backend NAME`. */
  readonly name: N;
  /** How prose names it: `tmux`, `WezTerm`. */
  readonly title: string;
  /** One line: what it is and how it opens panes. */
  readonly summary: string;
  /** How the environment shows it; null: never detected (the config must name it). */
  readonly detect: Detection | null;
  /** Its config section: the zod schema (defaults, descriptions) and what `bridge.hello` may not set. */
  readonly config: ConfigSection<S>;
  /** The versions it works with. */
  readonly version: VersionGate | ProtocolVersion;
  /**
   * What it can do with a supported version where it runs as it should (the README's matrix
   * says the same); a built backend's {@linkcode Backend.capabilities} may say less where a
   * version or the environment decides (its document says when), never more.
   */
  readonly capabilities: Capabilities;
  /** The names of the checks its `doctor` reports, in order. */
  readonly doctor: readonly string[];
  /** What the CLI's hints say about it. */
  readonly hints: BackendHints;
  /** Its row of the README's backend matrix. */
  readonly readme: ReadmeRow;
  /**
   * JSON Schemas it publishes, by name, for `muxbridge schema NAME` (each loaded only when
   * printed): the provider's protocol.
   */
  readonly schemas?: Readonly<Record<string, () => Promise<Record<string, unknown>>>>;
  /**
   * Builds the backend, loading its code first (only now: the registry loads no backend code).
   * Its section of `deps.config` has passed its own schema (`create_backend.ts`).
   *
   * @param deps What a backend is built from.
   * @returns The backend, not yet probed.
   */
  create(deps: BackendDeps<SectionConfig<N, S>>): Promise<Backend>;
}
