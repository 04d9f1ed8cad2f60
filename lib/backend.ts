/**
 * The one interface every multiplexer backend implements, and what it is given. The session
 * loop and the CLI only ever talk to a {@linkcode Backend}; they never branch on its name.
 *
 * Conventions every backend keeps:
 * - every program runs through {@linkcode runCommand} (`deps.run` bounded by
 *   `config.command_timeout_ms`); a failure that means nothing more specific is
 *   {@linkcode commandFailed};
 * - every id and target passes `lib/validate.ts` before it reaches argv;
 * - "the pane does not exist" is a `MuxError` coded `pane_not_found` (from `interrupt`, `kill`,
 *   `setTitle`) or `null` (from `inspect`), decided from evidence the backend's file cites;
 * - output is parsed with zod; a mismatch is `unparseable_output` with the raw text cut short.
 *
 * @module
 */

import semver from "semver";
import type { Clock } from "./sys/clock.ts";
import { isMuxError, MuxError, toMuxError } from "./sys/errors.ts";
import type { Config, LayoutName } from "./config.ts";
import { describeArgv, type Runner, type RunResult } from "./sys/exec.ts";
import type { BackendName, EnvLookup, Identity } from "./identity.ts";
import type { Logger } from "./sys/log.ts";
import { validateTarget } from "./validate.ts";

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

/**
 * A failed `doctor` check from anything thrown: its message, and its own hint or the given one.
 *
 * @param name What was checked.
 * @param err What was thrown.
 * @param hint The hint when the error has none.
 * @returns The check.
 */
export function failedCheck(name: string, err: unknown, hint?: string): Check {
  const e = toMuxError(err);
  const h = e.hint ?? hint;
  return { name, status: "fail", detail: e.message, ...(h ? { hint: h } : {}) };
}

/**
 * The `<backend> binary` doctor check of a CLI backend from its `--version` run, or from what
 * running it threw; when nothing ran, the checks that need the binary follow as not checked.
 *
 * @param backend The backend's name (`tmux`).
 * @param bin The program, as the passing check names it.
 * @param raw The `--version` run, or the error running it threw.
 * @param failed The error of a run that exited non-zero.
 * @param dependents The checks that cannot run without the binary.
 * @returns The checks, the binary's first.
 */
export function binaryChecks(
  backend: string,
  bin: string,
  raw: CommandRun | Error,
  failed: (run: CommandRun) => MuxError,
  dependents: readonly string[],
): Check[] {
  const name = `${backend} binary`;
  if (raw instanceof Error) {
    return [
      failedCheck(name, raw),
      ...dependents.map((d): Check => ({
        name: d,
        status: "fail",
        detail: `not checked: no ${backend} binary`,
      })),
    ];
  }
  return [
    raw.code !== 0
      ? failedCheck(name, failed(raw))
      : { name, status: "pass", detail: `${bin}: ${raw.stdout.trim()}` },
  ];
}

/** One run of a backend's program, with its argv for messages. */
export interface CommandRun extends RunResult {
  /** The argv that ran, as messages show it. */
  argv: readonly string[];
}

/** Options of {@linkcode runCommand}. */
export interface RunCommandOptions {
  /** Aborts the run. */
  signal?: AbortSignal;
  /** Variables for the program (see `RunOptions.env`). */
  env?: Readonly<Record<string, string>>;
  /** Text for the program's stdin (see `RunOptions.stdin`). */
  stdin?: string;
  /** The argv messages show, when it must differ from the one run. @default argv */
  shown?: readonly string[];
  /**
   * The backend's hint for a missing program: a `binary_not_found` from the seam is thrown again
   * with it (and with `shown`). Absent: that error passes as it is, for the caller to word.
   */
  notFoundHint?: string;
}

/**
 * Runs one program of a backend the way every backend does: through `deps.run`, bounded by
 * `config.command_timeout_ms`. Validating `argv` stays with the caller.
 *
 * @param deps The backend's deps (runner, config).
 * @param argv The program and its arguments.
 * @param options Signal, environment, stdin, the argv shown, the hint for a missing program.
 * @returns The result, for any exit code, with the shown argv.
 * @throws {MuxError} `binary_not_found`, `timed_out` or `interrupted`, as the seam does.
 */
export async function runCommand(
  deps: BackendDeps,
  argv: readonly string[],
  options: RunCommandOptions = {},
): Promise<CommandRun> {
  const shown = options.shown ?? argv;
  try {
    const result = await deps.run(argv, {
      timeoutMs: deps.config.command_timeout_ms,
      signal: options.signal,
      ...(options.env !== undefined ? { env: options.env } : {}),
      ...(options.stdin !== undefined ? { stdin: options.stdin } : {}),
    });
    return { ...result, argv: shown };
  } catch (err) {
    if (options.notFoundHint !== undefined && isMuxError(err, "binary_not_found")) {
      throw new MuxError("binary_not_found", err.message, {
        argv: shown,
        cause: err,
        hint: options.notFoundHint,
      });
    }
    throw err;
  }
}

/**
 * What a failed run tells: its argv, exit code and stderr (trimmed), for a `MuxError`.
 *
 * @param run The failed run.
 * @returns The error options.
 */
export function runDetails(
  run: CommandRun,
): { argv: readonly string[]; exitCode: number; stderr: string } {
  return { argv: run.argv, exitCode: run.code, stderr: run.stderr.trim() };
}

/**
 * The error for a failed run that means nothing more specific: `command_failed`, `Cannot
 * <action>: <argv> exited <code>: <text>`, with {@linkcode runDetails}.
 *
 * @param action What was being done ("close pane \"%3\"").
 * @param run The failed run.
 * @param text What the program said. @default its stderr, trimmed
 * @returns The error.
 */
export function commandFailed(
  action: string,
  run: CommandRun,
  text: string = run.stderr.trim(),
): MuxError {
  return new MuxError(
    "command_failed",
    `Cannot ${action}: ${describeArgv(run.argv)} exited ${run.code}: ${text}`,
    runDetails(run),
  );
}

/**
 * Checks a pane id before it reaches argv: a safe target (`validateTarget`) in the backend's own
 * id form, so that no id can name another object or read as a flag.
 *
 * @param paneId The pane id.
 * @param form The backend's id form.
 * @param hint What the form looks like, for the error.
 * @returns The pane id.
 * @throws {MuxError} `invalid_argument`.
 */
export function checkPaneId(paneId: string, form: RegExp, hint: string): string {
  validateTarget("pane id", paneId);
  if (!form.test(paneId)) {
    throw new MuxError("invalid_argument", `Cannot use pane id ${JSON.stringify(paneId)}`, {
      hint,
    });
  }
  return paneId;
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

/**
 * Gates a version a backend read: none in the text is `unparseable_output`, one older than the
 * gate's minimum is `unsupported_version` (semver order: a preview sorts before its release).
 *
 * @param gate The backend's gate.
 * @param text What the program printed (trimmed), for the message.
 * @param version The semver read from it, or `null` when there was none.
 * @param options `argv` that printed it; `shown`, the version as messages show it.
 * @returns The version.
 * @throws {MuxError} `unparseable_output`, `unsupported_version`.
 *
 * @example
 * ```ts ignore
 * gateVersion(TMUX_GATE, "tmux 3.3a", "3.3.0"); // "3.3.0"
 * ```
 */
export function gateVersion(
  gate: VersionGate,
  text: string,
  version: string | null,
  options: { argv?: readonly string[]; shown?: string } = {},
): string {
  if (version === null) {
    throw new MuxError(
      "unparseable_output",
      `Cannot read the ${gate.program} version from ${JSON.stringify(text.slice(0, 100))}`,
      { argv: options.argv, hint: gate.unreadableHint },
    );
  }
  if (semver.lt(version, gate.min)) {
    throw new MuxError(
      "unsupported_version",
      `${gate.program} ${options.shown ?? version} is too old, need >= ${
        gate.minShown ?? gate.min
      }`,
      { hint: gate.tooOldHint },
    );
  }
  return version;
}

/**
 * Keeps the first success of a one-time step (a version gate, a transport decision) for the
 * backend's life; a failure is not kept, so the next call tries again. Calls made while the step
 * runs share it (with the first caller's signal).
 *
 * @param step The step.
 * @returns The step, run at most until it succeeds once.
 *
 * @example
 * ```ts ignore
 * const version = keepSuccess((signal) => readVersion(signal));
 * await version(); // runs readVersion; a later call returns the same promise
 * ```
 */
export function keepSuccess<T>(
  step: (signal?: AbortSignal) => Promise<T>,
): (signal?: AbortSignal) => Promise<T> {
  let kept: Promise<T> | undefined;
  return (signal) => {
    if (!kept) {
      const pending = step(signal);
      pending.catch(() => {
        if (kept === pending) kept = undefined;
      });
      kept = pending;
    }
    return kept;
  };
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
