/**
 * The bridge process: started by argv (never a shell), restarted with capped exponential
 * backoff when it dies, given up on after a restart cap, stopped gracefully (end of input, then
 * SIGTERM, then SIGKILL). It never keeps its host alive.
 *
 * @module
 */

import type { Buffer } from "node:buffer";
import { type ChildProcess, spawn } from "node:child_process";
import { clearTimeout, setTimeout } from "node:timers";
import type { Sink } from "./line_queue.ts";
import type { Settings } from "./settings.ts";
import type { Guard, Log } from "./values.ts";

/** How long `stop` waits after SIGTERM before SIGKILL. */
const KILL_GRACE_MS = 1000;

/** The settings the supervisor reads: the command and the restart policy. */
export type RestartSettings = Pick<
  Settings,
  "command" | "backoffMs" | "backoffMaxMs" | "maxRestarts" | "stableMs"
>;

/** What {@linkcode BridgeProcess} runs and whom it tells. */
export interface BridgeOptions {
  /** `command`, and the restart and backoff settings. */
  settings: RestartSettings;
  /** The arguments after the command. */
  args: string[];
  /** The first line(s) every start writes. */
  hello: () => string;
  /** The bridge's stderr (the log file), or null for none. */
  stderr: number | null;
  log: Log;
  guard: Guard;
  /**
   * Checked before every start: why the command must not run (the plugin then gives up with
   * that line), or null to run it.
   */
  vet?: () => string | null;
  /** The pipe takes lines: after a start and on `drain`. */
  onWritable(): void;
  /** A chunk of the bridge's stdout. */
  onOutput(chunk: Buffer | string): void;
  /** No bridge will run any more (missing or untrusted binary, or the restart cap). */
  onGaveUp(): void;
}

/**
 * Supervises the bridge: starts it (by argv, never a shell), restarts it with capped exponential
 * backoff when it dies, gives up after the restart cap, and stops it (end of input, then
 * SIGTERM, then SIGKILL).
 */
export class BridgeProcess implements Sink {
  #state: "running" | "off" | "stopped" = "running";
  #child: ChildProcess | null = null;
  #writable = false;
  #startedAt = 0;
  #restarts = 0;
  #timer: ReturnType<typeof setTimeout> | null = null;
  #exited: (() => void) | null = null;
  readonly #o: BridgeOptions;

  constructor(options: BridgeOptions) {
    this.#o = options;
  }

  takes(): boolean {
    return this.#child !== null && this.#writable;
  }

  send(line: string): void {
    // write() never blocks; `false` means the pipe is full: wait for `drain`.
    this.#writable = this.#child!.stdin!.write(line);
  }

  /** Starts a bridge and writes its hello. */
  start(): void {
    this.#timer = null;
    if (this.#state !== "running") return;
    const refused = this.#o.vet?.() ?? null;
    if (refused !== null) return this.#giveUp(refused);
    let c: ChildProcess;
    const [bin, ...pre] = this.#o.settings.command;
    try {
      c = spawn(bin, [...pre, ...this.#o.args], {
        stdio: ["pipe", "pipe", this.#o.stderr ?? "ignore"],
        shell: false,
        windowsHide: true,
      });
    } catch (err) {
      return this.#gone(null, err as NodeJS.ErrnoException);
    }
    this.#child = c;
    this.#startedAt = Date.now();
    this.#watch(c);
    this.#writable = c.stdin!.write(this.#o.hello());
    this.#o.onWritable();
  }

  /** Ends the input (the bridge closes its panes, says `bye` and exits), then signals. */
  async stop(graceMs: number): Promise<void> {
    this.#state = "stopped";
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    const c = this.#child;
    if (!c) return;
    const gone = new Promise<void>((resolve) => (this.#exited = resolve));
    try {
      c.stdin!.end();
      if (!(await settledWithin(gone, graceMs))) {
        c.kill("SIGTERM");
        if (!(await settledWithin(gone, KILL_GRACE_MS))) c.kill("SIGKILL");
      }
    } catch { /* already gone */ }
  }

  /** Listens to a started bridge; never lets it keep OpenCode alive (`opencode run` exits). */
  #watch(c: ChildProcess): void {
    const { guard } = this.#o;
    let done = false;
    const end = guard(
      (err: NodeJS.ErrnoException | null, code?: number | null, signal?: string) => {
        if (done) return;
        done = true;
        this.#gone(c, err, code, signal);
      },
    );
    c.on("error", (err) => end(err));
    c.on("exit", (code, signal) => end(null, code, signal ?? undefined));
    c.stdin!.on("error", () => {}); // EPIPE when the bridge dies; `exit` handles that
    c.stdin!.on(
      "drain",
      guard(() => {
        this.#writable = true;
        this.#o.onWritable();
      }),
    );
    c.stdout!.on("data", guard((chunk: Buffer | string) => this.#o.onOutput(chunk)));
    c.stdout!.on("error", () => {});
    for (const h of [c, c.stdin, c.stdout] as Array<{ unref?: () => void } | null>) {
      try {
        h?.unref?.();
      } catch { /* not supported here */ }
    }
  }

  /** No bridge will run any more: says why once. */
  #giveUp(message: string): void {
    this.#state = "off";
    this.#o.onGaveUp();
    this.#o.log(message);
  }

  /** A bridge ended (or never started): restart it later, or give up. */
  #gone(
    c: ChildProcess | null,
    err: NodeJS.ErrnoException | null,
    code?: number | null,
    signal?: string,
  ): void {
    if (c === null || this.#child === c) {
      this.#child = null;
      this.#writable = false;
    }
    this.#exited?.();
    if (this.#state !== "running") return;
    const ran = c ? Date.now() - this.#startedAt : 0;
    const next = afterExit(this.#o.settings, this.#restarts, { err, code, signal, ran });
    if (next.kind === "off") return this.#giveUp(next.message);
    this.#restarts = next.restarts;
    this.#o.log(next.message);
    this.#timer = setTimeout(this.#o.guard(() => this.start()), next.delay);
    this.#timer.unref?.();
  }
}

/** How a bridge ended: a start error, or an exit code or signal after `ran` milliseconds. */
export interface BridgeEnd {
  err: NodeJS.ErrnoException | null;
  code?: number | null;
  signal?: string;
  ran: number;
}

/** What to do after a bridge ended, with the one log line that says so. */
export type AfterExit =
  | { kind: "off"; message: string }
  | { kind: "restart"; restarts: number; delay: number; message: string };

/**
 * The restart decision: a missing or non-executable binary is final; a bridge that ran
 * `stableMs` resets the count; past `maxRestarts` it gives up; else the delay doubles from
 * `backoffMs` up to `backoffMaxMs`.
 */
export function afterExit(s: RestartSettings, restarts: number, end: BridgeEnd): AfterExit {
  const { err } = end;
  if (err && (err.code === "ENOENT" || err.code === "EACCES")) {
    return {
      kind: "off",
      message: `cannot start ${JSON.stringify(s.command[0])} (${err.code}): install muxbridge ` +
        `on PATH or run \`muxbridge install\` (or set MUXBRIDGE_BIN); no panes will open for ` +
        `this OpenCode`,
    };
  }
  const why = err ? `failed: ${err.message}` : `exited (${end.signal ?? `code ${end.code}`})`;
  const count = end.ran >= s.stableMs ? 0 : restarts;
  if (count >= s.maxRestarts) {
    return {
      kind: "off",
      message: `bridge ${why}; giving up after ${count} restarts (restart OpenCode to try again)`,
    };
  }
  const delay = Math.min(s.backoffMs * 2 ** count, s.backoffMaxMs);
  return {
    kind: "restart",
    restarts: count + 1,
    delay,
    message: `bridge ${why} after ${end.ran} ms; restart ${count + 1} of ${s.maxRestarts} in ` +
      `${delay} ms`,
  };
}

/** Whether `done` settles within `ms` (the timer is cleared when it does). */
function settledWithin(done: Promise<void>, ms: number): Promise<boolean> {
  return Promise.race([
    done.then(() => true),
    new Promise<boolean>((resolve) => {
      const t = setTimeout(() => resolve(false), ms);
      done.then(() => clearTimeout(t));
    }),
  ]);
}
