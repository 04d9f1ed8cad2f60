/**
 * The muxbridge OpenCode plugin: starts `muxbridge bridge` next to OpenCode and feeds it the
 * session events it needs, one JSON line each. muxbridge opens a multiplexer pane per child
 * session; this file only carries events to it.
 *
 * Install: `muxbridge install` copies this file into OpenCode's global plugin folder
 * (`$XDG_CONFIG_HOME/opencode/plugin/`, or `$OPENCODE_CONFIG_DIR/plugin/`) and records the
 * muxbridge command beside it in `muxbridge.json`. By hand: add
 * `"plugin": ["file:///abs/path/to/plugin/muxbridge.ts"]` to `opencode.json` (options:
 * `["file:///…/muxbridge.ts", { "bin": "/opt/muxbridge" }]`).
 *
 * What it promises OpenCode:
 * - One bridge per OpenCode process, however often OpenCode loads the plugin: loads in one
 *   JavaScript realm share one link (OpenCode 1.18.33 loads it twice with `--port`); another
 *   realm of the same process (a worker) finds a lock file keyed by the process (kept only in a
 *   private state directory) and hands its events to the realm that owns the bridge.
 * - Plain `opencode` (no `--port`) works: OpenCode then hands plugins a URL nothing listens on,
 *   and an in-process client. The plugin serves a loopback-only endpoint that forwards every
 *   request through that client, guarded by a per-run secret that reaches the panes only
 *   through the bridge (`bridge.hello` `auth`, then the pane's environment).
 * - It never blocks the event hook: lines go through a bounded queue (oldest dropped first, the
 *   drops counted and logged) and are written only while the bridge's pipe takes them.
 * - It never writes to OpenCode's terminal: its own lines and the bridge's stderr go to one log
 *   file, `$MUXBRIDGE_PLUGIN_LOG`, else `$MUXBRIDGE_STATE_DIR/bridge.log`, else
 *   `$XDG_STATE_HOME/muxbridge/bridge.log`, else `~/.local/state/muxbridge/bridge.log`. Its own
 *   lines are written in order, one write at a time.
 * - It never throws into OpenCode: a missing binary is one log line; a bridge that dies is
 *   restarted with capped exponential backoff, up to a restart cap, then one line says it gave
 *   up.
 *
 * It runs inside OpenCode's Bun, so it imports only `node:` modules at run time (types aside)
 * and uses no `Bun.*` API; it also runs under Deno for its tests. It exports one function
 * because OpenCode treats every export of a plugin module as a plugin and refuses any other.
 *
 * Why one file: `muxbridge install` replaces it with one atomic rename, so a starting OpenCode
 * sees the old plugin or the new one, never a mix (a folder of modules cannot be swapped in one
 * step; see `docs/opencode.md`). The file reads top-down in sections, one concern each, every
 * unit a small function or class: the link (the composition, one per realm), settings, the log,
 * the line queue, the bridge process, one bridge per process, the forwarding endpoint, session
 * events, and what the bridge is told and says.
 *
 * @module
 */

import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { Buffer } from "node:buffer";
import { randomBytes, timingSafeEqual } from "node:crypto";
import {
  closeSync,
  constants,
  fchmodSync,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  unlinkSync,
  write,
  writeSync,
} from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { BroadcastChannel } from "node:worker_threads";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { clearTimeout, setTimeout } from "node:timers";
import type { Hooks, Plugin, PluginInput, PluginOptions } from "@opencode-ai/plugin";

/**
 * The muxbridge release this plugin belongs to (a test keeps it equal to deno.json). Not
 * exported: OpenCode takes every export of a plugin module for a plugin function.
 */
const PLUGIN_VERSION = "0.1.0";

/** The bridge refuses longer lines (contract: at most 1 MiB a line). */
const MAX_LINE_BYTES = 1024 * 1024;
/** A log file above this size is moved to `<log>.1` when a plugin starts. */
const MAX_LOG_BYTES = 8 * 1024 * 1024;
/** The most log text waiting for the disk; more is dropped (and counted). */
const MAX_LOG_PENDING = 1024 * 1024;
/** The longest stdout line kept from the bridge (it is only logged). */
const MAX_STDOUT_LINE = 64 * 1024;
/** Background jobs remembered at once (the oldest is forgotten first). */
const MAX_JOBS = 256;
/** The most request body the forwarding endpoint buffers. */
const MAX_FORWARD_BODY = 64 * 1024 * 1024;
/** How long `dispose` waits after SIGTERM before SIGKILL. */
const KILL_GRACE_MS = 1000;
/**
 * The URL OpenCode 1.18.33 hands plugins when it listens on no port (its `serverUrl` getter's
 * fallback); its real listeners are named by `--hostname`, 127.0.0.1 by default.
 */
const UNLISTENED_URL = "http://localhost:4096/";
/** The sidecar `muxbridge install` writes beside this file. */
const SIDECAR = "muxbridge.json";

/** A value of unknown shape, read without casts. */
type Bag = Record<string, unknown>;
const bag = (v: unknown): Bag => (typeof v === "object" && v !== null ? v as Bag : {});
const text = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);

/** Where the plugin's own lines go. */
type Log = (message: string) => void;

/** Wraps a callback so that what it throws becomes a log line, never OpenCode's problem. */
type Guard = <A extends unknown[]>(fn: (...args: A) => void) => (...args: A) => void;

/** A {@linkcode Guard} that logs to `log`. */
function guardWith(log: Log): Guard {
  return <A extends unknown[]>(fn: (...args: A) => void) => (...args: A) => {
    try {
      fn(...args);
    } catch (err) {
      log(`internal error: ${(err as Error)?.stack ?? err}`);
    }
  };
}

/**
 * The OpenCode plugin: starts `muxbridge bridge --url <url> --dir <directory>` once per
 * OpenCode process, sends `bridge.hello`, forwards every `session.*` event, the ids of the
 * events that open and end a request for the user (`permission.*`, `question.*`, `form.*`) and
 * background-job changes (`bridge.job`).
 *
 * @param input What OpenCode hands a plugin (`serverUrl`, `directory` and `client` are used).
 * @param options `bin`, `log`, `instance`, `backoffMs`, `backoffMaxMs`, `maxRestarts`,
 *   `stableMs`, `queueBytes`, `stopGraceMs` (all optional; see the README).
 * @returns The hooks: `event`, `tool.execute.after` and `dispose`. It never rejects.
 */
export const MuxbridgePlugin: Plugin = (input: PluginInput, options?: PluginOptions) => {
  try {
    return Promise.resolve(sharedLink(input, settingsFrom(options ?? {})).join());
  } catch {
    return Promise.resolve({}); // never throw into OpenCode; nothing usable to log to
  }
};

// ---------------------------------------------------------------- the link

/**
 * What the realm registry holds: one bridge and everything around it, shared by every load of
 * the plugin in a realm. Only `join` is called through the registry, so loads of other copies
 * of this file in the same realm (an installed one beside a test's) can share a link.
 */
interface SharedLink {
  /** Hooks for one more load; the link stops when the last load's `dispose` ran. */
  join(): Hooks;
}

const LINKS = Symbol.for("muxbridge.plugin.links");

/** The realm's link for `s.instance`, created on first use. */
function sharedLink(input: PluginInput, s: Settings): SharedLink {
  const realm = globalThis as unknown as Record<symbol, Map<string, SharedLink> | undefined>;
  const links = (realm[LINKS] ??= new Map());
  let link = links.get(s.instance);
  if (!link) {
    link = createLink(input, s, () => links.delete(s.instance));
    links.set(s.instance, link);
  }
  return link;
}

/**
 * Puts a link together: its log, then whether this realm runs the bridge or relays to the realm
 * that does (nothing at all when OpenCode handed no URL or directory).
 */
function createLink(input: PluginInput, s: Settings, forget: () => void): Link {
  const log = new LogWriter(openLog(s.log));
  const guard = guardWith(log.line);
  const link = new Link(s, log, guard, forget);
  const server = plainServerUrl(input.serverUrl);
  const directory = text(input.directory);
  if (!server.url || !directory) {
    link.off("OpenCode gave the plugin no serverUrl or directory; muxbridge is not started");
    return link;
  }
  if (server.hadCredentials) {
    log.line(
      "OpenCode's server URL carries credentials (user:pass@); they were removed (never on " +
        "argv or in a log): set OPENCODE_SERVER_PASSWORD (and OPENCODE_SERVER_USERNAME)",
    );
  }
  const claim = claimBridge(s, log.line, guard, (line) => link.enqueue(line));
  link.begin(claim, input, server.url, directory);
  return link;
}

/** `off`: never started or gave up; `relay`: another realm runs the bridge; `stopped`: disposed. */
type Mode = "starting" | "running" | "relay" | "off" | "stopped";

/**
 * One link's state and its life: lines go to the bridge's queue (or to the realm that owns the
 * bridge) from `begin` until the last `dispose`.
 */
class Link implements SharedLink {
  #refs = 0;
  #mode: Mode = "starting";
  #claim: Claim = NO_CLAIM;
  #forwarder: Forwarder | null = null;
  #bridge: BridgeProcess | null = null;
  readonly #s: Settings;
  readonly #log: LogWriter;
  readonly #guard: Guard;
  readonly #forget: () => void;
  readonly #queue: LineQueue;
  readonly #onEvent: (event: Bag) => void;
  readonly #onToolAfter: (info: Bag, output: Bag) => void;

  constructor(s: Settings, log: LogWriter, guard: Guard, forget: () => void) {
    this.#s = s;
    this.#log = log;
    this.#guard = guard;
    this.#forget = forget;
    this.#queue = new LineQueue(s.queueBytes, log.line);
    const events = new SessionEvents((line) => this.enqueue(line), () => this.#queue.countDrop());
    this.#onEvent = guard((event: Bag) => events.event(event));
    this.#onToolAfter = guard((info: Bag, output: Bag) => events.toolAfter(info, output));
  }

  join(): Hooks {
    this.#refs++;
    let disposed = false;
    return {
      // The hooks return at once: nothing here waits on the bridge.
      event: ({ event }) => {
        this.#onEvent(bag(event));
        return Promise.resolve();
      },
      "tool.execute.after": (info, output) => {
        this.#onToolAfter(bag(info), bag(output));
        return Promise.resolve();
      },
      dispose: () => {
        if (disposed) return Promise.resolve();
        disposed = true;
        return --this.#refs > 0 ? Promise.resolve() : this.#stop().catch(() => {});
      },
    };
  }

  /** Nothing will run: says why once. */
  off(why: string): void {
    this.#mode = "off";
    this.#log.line(why);
  }

  /** Relays to the realm that owns the bridge, or settles where OpenCode is and starts it. */
  begin(claim: Claim, input: PluginInput, serverUrl: string, directory: string): void {
    this.#claim = claim;
    if (claim.relay) this.#mode = "relay";
    else {
      this.#connect(input, serverUrl, directory).catch((err) =>
        this.#log.line(`internal error: ${err}`)
      );
    }
  }

  /** One line for the bridge: queued here, or posted to the realm that runs it. */
  enqueue(line: string): void {
    if (this.#mode === "relay") return void this.#claim.channel?.postMessage(line);
    if (this.#mode !== "running" && this.#mode !== "starting") return;
    if (this.#queue.push(line)) this.#queue.drain(this.#bridge);
  }

  /**
   * Plain `opencode` first gets a forwarding endpoint (awaited); a real URL starts the bridge
   * at once, before the hooks are handed out.
   */
  async #connect(input: PluginInput, serverUrl: string, directory: string): Promise<void> {
    const direct = inProcessFetch(input, serverUrl);
    if (direct) {
      this.#forwarder = await startForwarder(direct, this.#log.line).catch((err) => {
        this.#log.line(`cannot serve the forwarding endpoint for plain opencode: ${err}`);
        return null;
      });
      if (this.#mode !== "starting") return this.#forwarder?.close();
      if (this.#forwarder) {
        this.#log.line(
          `OpenCode listens on no port: forwarding ${this.#forwarder.url} to it in-process`,
        );
      }
    }
    const f = this.#forwarder;
    this.#launch(f ? { url: f.url, auth: f.auth } : { url: serverUrl }, directory);
  }

  /** Starts the bridge process for `upstream`. */
  #launch(upstream: Upstream, directory: string): void {
    const s = this.#s;
    this.#mode = "running";
    this.#log.line(
      `starting ${JSON.stringify(s.command.join(" "))} (from ${s.commandFrom}) for ` +
        `${this.#forwarder ? "the forwarding endpoint" : upstream.url} in ${directory}`,
    );
    if (s.recordedVersion && s.recordedVersion !== PLUGIN_VERSION) {
      this.#log.line(
        `version mismatch: this plugin is muxbridge ${PLUGIN_VERSION}, ${SIDECAR} was written ` +
          `by ${s.recordedVersion}; run \`muxbridge install\` again`,
      );
    }
    this.#bridge = new BridgeProcess({
      settings: s,
      args: ["bridge", "--url", upstream.url, "--dir", directory],
      hello: () => helloLine(upstream, directory),
      stderr: this.#log.fd,
      log: this.#log.line,
      guard: this.#guard,
      onWritable: () => this.#queue.drain(this.#bridge),
      onOutput: bridgeOutput(this.#log.line),
      onGaveUp: () => {
        this.#mode = "off";
        this.#queue.clear();
      },
    });
    this.#bridge.start();
  }

  /** The last `dispose`: ends the bridge (gracefully first), the endpoint, the lock, the log. */
  async #stop(): Promise<void> {
    if (this.#mode === "stopped") return;
    const was = this.#mode;
    this.#mode = "stopped";
    this.#forget();
    this.#claim.channel?.close();
    await this.#bridge?.stop(this.#s.stopGraceMs);
    this.#forwarder?.close();
    this.#claim.release();
    this.#queue.reportTotal();
    if (was !== "relay") this.#log.line("stopped");
    await this.#log.close();
  }
}

// ---------------------------------------------------------------- settings

/** Plugin options (the second element of a `plugin` entry in `opencode.json`). */
interface Settings {
  /**
   * The command that runs muxbridge: env `MUXBRIDGE_BIN`, else option `bin`, else the command
   * `muxbridge install` recorded in `muxbridge.json` beside this file, else `muxbridge` (PATH).
   */
  command: string[];
  /** Where `command` came from, for the log. */
  commandFrom: string;
  /** The version that recorded `command`, if recorded. */
  recordedVersion?: string;
  /** The log file. Env `MUXBRIDGE_PLUGIN_LOG` wins. @default the state directory's bridge.log */
  log: string;
  /** The state directory (process locks live in `plugin-locks/`). */
  stateDir: string;
  /** Loads with the same name share one bridge per process. @default "default" */
  instance: string;
  /** First restart delay; it doubles per restart. @default 1000 */
  backoffMs: number;
  /** The longest restart delay. @default 30000 */
  backoffMaxMs: number;
  /** Restarts before giving up. @default 5 */
  maxRestarts: number;
  /** A bridge that ran this long resets the restart count. @default 60000 */
  stableMs: number;
  /** The most bytes of events held while the bridge does not read. @default 1 MiB */
  queueBytes: number;
  /** How long `dispose` waits for the bridge's `bye` before SIGTERM. @default 3000 */
  stopGraceMs: number;
}

/** What `muxbridge install` recorded beside this file, or nothing. */
function recorded(): { command?: string[]; version?: string } {
  try {
    const here = dirname(fileURLToPath(import.meta.url));
    const data = bag(JSON.parse(readFileSync(join(here, SIDECAR), "utf8")));
    const command = Array.isArray(data.command) &&
        data.command.length > 0 &&
        data.command.every((a) => typeof a === "string" && a !== "")
      ? data.command as string[]
      : undefined;
    const version = text(data.version);
    return { ...(command ? { command } : {}), ...(version ? { version } : {}) };
  } catch {
    return {}; // not installed by `muxbridge install`
  }
}

/** The settings of one load: environment, then options, then what install recorded. */
function settingsFrom(options: PluginOptions): Settings {
  const env = process.env;
  const num = (key: string, fallback: number, min: number) => {
    const v = options[key];
    return typeof v === "number" && Number.isFinite(v) && v >= min ? v : fallback;
  };
  const str = (key: string) => {
    const v = options[key];
    return typeof v === "string" && v !== "" ? v : undefined;
  };
  const stateDir = env.MUXBRIDGE_STATE_DIR ||
    join(env.XDG_STATE_HOME || join(homedir(), ".local", "state"), "muxbridge");
  const rec = recorded();
  const [command, commandFrom] = env.MUXBRIDGE_BIN
    ? [[env.MUXBRIDGE_BIN], "MUXBRIDGE_BIN"]
    : str("bin")
    ? [[str("bin")!], "the bin option"]
    : rec.command
    ? [rec.command, SIDECAR]
    : [["muxbridge"], "PATH"];
  return {
    command,
    commandFrom,
    ...(rec.version ? { recordedVersion: rec.version } : {}),
    log: env.MUXBRIDGE_PLUGIN_LOG || str("log") || join(stateDir, "bridge.log"),
    stateDir,
    instance: (str("instance") ?? "default").replace(/[^A-Za-z0-9_-]/g, "_").slice(0, 64),
    backoffMs: num("backoffMs", 1000, 1),
    backoffMaxMs: num("backoffMaxMs", 30_000, 1),
    maxRestarts: num("maxRestarts", 5, 0),
    stableMs: num("stableMs", 60_000, 0),
    queueBytes: num("queueBytes", 1024 * 1024, 1024),
    stopGraceMs: num("stopGraceMs", 3000, 0),
  };
}

// ---------------------------------------------------------------- log

/**
 * Opens the log for appending (rotating a big one), privately: it holds titles, paths and the
 * server URL. Opened once with `O_APPEND|O_CREAT|O_NOFOLLOW`, created 0600; a symbolic link, a
 * non-regular file or another user's file is refused; a mode letting others in is narrowed to
 * 0600, never widened. Null when it cannot be used (the plugin still works, silently).
 */
function openLog(path: string): number | null {
  try {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    try {
      // lstat: a symbolic link is renamed as a link, never followed.
      if (lstatSync(path).size > MAX_LOG_BYTES) renameSync(path, `${path}.1`);
    } catch { /* no log yet */ }
    const flags = constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT |
      (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);
    const fd = openSync(path, flags, 0o600);
    const st = fstatSync(fd);
    const uid = typeof process.geteuid === "function" ? process.geteuid() : undefined;
    if (!st.isFile() || (uid !== undefined && st.uid !== uid)) {
      closeSync(fd);
      return null;
    }
    if (uid !== undefined && (st.mode & 0o077)) fchmodSync(fd, st.mode & 0o700);
    return fd;
  } catch {
    return null; // nowhere to log; the plugin still works
  }
}

/**
 * The plugin's log over `fd`: asynchronous (a slow disk never blocks OpenCode) and serialised
 * (lines land in the order they were logged, one write in flight at a time; parallel
 * `fs.write` calls landed out of order under Bun).
 */
class LogWriter {
  /** The log file (the bridge's stderr goes there too); null: nothing is logged. */
  readonly fd: number | null;
  #pending: string[] = [];
  #pendingBytes = 0;
  #dropped = 0;
  #busy = false;
  #idle: Array<() => void> = [];

  constructor(fd: number | null) {
    this.fd = fd;
  }

  /** Queues one line (a timestamp and the plugin's pid are added). */
  readonly line: Log = (message) => {
    if (this.fd === null) return;
    if (this.#pendingBytes > MAX_LOG_PENDING) {
      this.#dropped++;
      return;
    }
    const lost = this.#dropped ? ` (${this.#dropped} earlier log lines were dropped)` : "";
    this.#dropped = 0;
    const line = `${new Date().toISOString()} muxbridge-plugin[${process.pid}] ${message}${lost}\n`;
    this.#pending.push(line);
    this.#pendingBytes += line.length;
    if (!this.#busy) this.#next();
  };

  /** Resolves once every queued line is written. */
  flush(): Promise<void> {
    return new Promise<void>((resolve) => {
      if (!this.#busy && this.#pending.length === 0) return resolve();
      this.#idle.push(resolve);
    });
  }

  /** Flushes, then closes the file. */
  async close(): Promise<void> {
    await this.flush();
    if (this.fd === null) return;
    try {
      closeSync(this.fd);
    } catch { /* already closed */ }
  }

  #next(): void {
    const chunk = this.#pending.join("");
    this.#pending = [];
    this.#pendingBytes = 0;
    if (chunk === "" || this.fd === null) {
      this.#busy = false;
      for (const resolve of this.#idle.splice(0)) resolve();
      return;
    }
    this.#busy = true;
    // A failed log write is not worth a throw; the next chunk tries again.
    write(this.fd, chunk, () => this.#next());
  }
}

// ---------------------------------------------------------------- line queue

/** Where queued lines go: the bridge's stdin while its pipe takes more. */
interface Sink {
  /** Whether a bridge runs and its pipe takes more (no pending drain). */
  takes(): boolean;
  /** Writes one line (never blocks; the pipe may then stop taking more). */
  send(line: string): void;
}

/**
 * The bounded queue between the event hook and the bridge: at most `maxBytes` held; when full,
 * the oldest lines go first, counted. Statuses are level-triggered, so the newest line carries
 * the state the bridge needs; the oldest is the most likely to be stale already.
 */
class LineQueue {
  readonly #lines: string[] = [];
  readonly #maxBytes: number;
  readonly #log: Log;
  #bytes = 0;
  #dropped = 0;
  #reported = 0;

  constructor(maxBytes: number, log: Log) {
    this.#maxBytes = maxBytes;
    this.#log = log;
  }

  /** Counts a line lost before it reached the queue. */
  countDrop(): void {
    this.#dropped++;
  }

  /** Queues a line, dropping the oldest over the bound; false (and counted) when too long. */
  push(line: string): boolean {
    const bytes = Buffer.byteLength(line);
    if (bytes > MAX_LINE_BYTES) {
      this.#dropped++;
      return false;
    }
    this.#lines.push(line);
    this.#bytes += bytes;
    while (this.#bytes > this.#maxBytes && this.#lines.length > 0) {
      if (this.#dropped === this.#reported) {
        this.#log(
          `queue full (${this.#maxBytes} bytes): the bridge is not reading; dropping oldest events`,
        );
      }
      this.#bytes -= Buffer.byteLength(this.#lines.shift()!);
      this.#dropped++;
    }
    return true;
  }

  /** Writes lines while `sink` takes them; once empty, says how many a stall cost. */
  drain(sink: Sink | null): void {
    while (sink?.takes() && this.#lines.length > 0) {
      const line = this.#lines.shift()!;
      this.#bytes -= Buffer.byteLength(line);
      sink.send(line);
    }
    if (this.#lines.length === 0 && this.#dropped > this.#reported) {
      const n = this.#dropped - this.#reported;
      this.#log(`bridge caught up; ${n} events were dropped while it stalled`);
      this.#reported = this.#dropped;
    }
  }

  /** Forgets every queued line (nobody will read them). */
  clear(): void {
    this.#lines.length = 0;
    this.#bytes = 0;
  }

  /** Logs the drops not reported yet. */
  reportTotal(): void {
    if (this.#dropped > this.#reported) {
      this.#log(`${this.#dropped - this.#reported} events were dropped in total`);
    }
  }
}

// ---------------------------------------------------------------- the bridge process

/** What {@linkcode BridgeProcess} runs and whom it tells. */
interface BridgeOptions {
  /** `command`, and the restart and backoff settings. */
  settings: Settings;
  /** The arguments after the command. */
  args: string[];
  /** The first line every start writes. */
  hello: () => string;
  /** The bridge's stderr (the log file), or null for none. */
  stderr: number | null;
  log: Log;
  guard: Guard;
  /** The pipe takes lines: after a start and on `drain`. */
  onWritable(): void;
  /** A chunk of the bridge's stdout. */
  onOutput(chunk: Buffer | string): void;
  /** No bridge will run any more (missing binary, or the restart cap). */
  onGaveUp(): void;
}

/**
 * Supervises the bridge: starts it (by argv, never a shell), restarts it with capped exponential
 * backoff when it dies, gives up after the restart cap, and stops it (end of input, then
 * SIGTERM, then SIGKILL).
 */
class BridgeProcess implements Sink {
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
    if (next.kind === "off") {
      this.#state = "off";
      this.#o.onGaveUp();
      return this.#o.log(next.message);
    }
    this.#restarts = next.restarts;
    this.#o.log(next.message);
    this.#timer = setTimeout(this.#o.guard(() => this.start()), next.delay);
    this.#timer.unref?.();
  }
}

/** How a bridge ended: a start error, or an exit code or signal after `ran` milliseconds. */
interface BridgeEnd {
  err: NodeJS.ErrnoException | null;
  code?: number | null;
  signal?: string;
  ran: number;
}

/** What to do after a bridge ended, with the one log line that says so. */
type AfterExit =
  | { kind: "off"; message: string }
  | { kind: "restart"; restarts: number; delay: number; message: string };

/**
 * The restart decision: a missing or non-executable binary is final; a bridge that ran
 * `stableMs` resets the count; past `maxRestarts` it gives up; else the delay doubles from
 * `backoffMs` up to `backoffMaxMs`.
 */
function afterExit(s: Settings, restarts: number, end: BridgeEnd): AfterExit {
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

// ---------------------------------------------------------------- one bridge per process

/** Which realm of this process runs the bridge, and the channel between realms. */
interface Claim {
  /** Another realm of this process runs the bridge: hand it every line. */
  relay: boolean;
  /** The channel between realms, if there is one. */
  channel: BroadcastChannel | null;
  /** Gives the process lock back (when this realm holds it). */
  release(): void;
}

const NO_CLAIM: Claim = { relay: false, channel: null, release() {} };

/**
 * Takes the process lock and opens the channel between realms: this realm relays when another
 * realm of this process holds the lock and a channel reaches it; else it runs the bridge and
 * `deliver`s what other realms post.
 */
function claimBridge(s: Settings, log: Log, guard: Guard, deliver: (line: string) => void): Claim {
  const lock = lockProcess(s.stateDir, s.instance);
  const channel = openChannel(`muxbridge:${process.pid}:${s.instance}`, log);
  const release = () => {
    if (lock.kind === "owner") lock.release();
  };
  if (lock.kind === "taken" && channel) {
    log("another realm of this OpenCode process runs the bridge; handing events to it");
    return { relay: true, channel, release };
  }
  if (lock.kind === "unlocked") log(`cannot lock the process (${lock.reason}); going on`);
  if (lock.kind === "taken") log("another realm runs the bridge, but no channel reaches it");
  if (channel) {
    channel.onmessage = guard((e: { data: unknown }) => {
      if (typeof e.data === "string") deliver(e.data);
    });
  }
  return { relay: false, channel, release };
}

/** The channel between realms of this process; null (and one log line) where there is none. */
function openChannel(name: string, log: Log): BroadcastChannel | null {
  try {
    const channel = new BroadcastChannel(name);
    channel.unref?.(); // never keep OpenCode alive for it
    return channel;
  } catch (err) {
    log(`no channel between realms (${err}); this realm runs its own bridge`);
    return null;
  }
}

/** The outcome of {@linkcode lockProcess}. */
type Lock = { kind: "owner"; release(): void } | { kind: "taken" } | Unlocked;

/** No lock, and why. */
type Unlocked = { kind: "unlocked"; reason: string };

/**
 * Takes `<stateDir>/plugin-locks/<pid>-<instance>.lock` with O_EXCL: `taken` when another
 * realm of this very process holds it (same pid, same start time). A lock left by a dead
 * process is removed; locks of other dead processes are swept on the way.
 */
function lockProcess(stateDir: string, instance: string): Lock {
  const dir = lockDir(stateDir);
  if (typeof dir !== "string") return dir;
  const start = processStart(process.pid);
  sweepDeadLocks(dir);
  return takeLock(join(dir, `${process.pid}-${instance}.lock`), start);
}

/** `<stateDir>/plugin-locks`, made if missing, when both are private; else why not. */
function lockDir(stateDir: string): string | Unlocked {
  // Only a private state directory holds locks: another user must not plant or remove them.
  // Links in its path are resolved once, as the bridge does.
  try {
    mkdirSync(stateDir, { recursive: true, mode: 0o700 });
    const real = realpathSync(stateDir);
    const problem = privateDirProblem(real);
    if (problem) return { kind: "unlocked", reason: `${real}: ${problem}` };
    const dir = join(real, "plugin-locks");
    try {
      mkdirSync(dir, { mode: 0o700 });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
    const inner = privateDirProblem(dir);
    return inner ? { kind: "unlocked", reason: `${dir}: ${inner}` } : dir;
  } catch (err) {
    return { kind: "unlocked", reason: (err as Error).message };
  }
}

/** Removes the locks of processes that are gone. */
function sweepDeadLocks(dir: string): void {
  for (const name of safeList(dir)) {
    const pid = Number(name.split("-")[0]);
    if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && !alive(pid)) {
      try {
        unlinkSync(join(dir, name));
      } catch { /* another sweeper was first */ }
    }
  }
}

/** Creates the lock at `path` (O_EXCL), or finds this process holds it, or removes a stale one. */
function takeLock(path: string, start: string | null): Lock {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(path, "wx", 0o600);
      writeSync(fd, JSON.stringify({ pid: process.pid, start }));
      closeSync(fd);
      return {
        kind: "owner",
        release() {
          try {
            unlinkSync(path);
          } catch { /* already gone */ }
        },
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") {
        return { kind: "unlocked", reason: (err as Error).message };
      }
    }
    if (heldByThisProcess(path, start)) return { kind: "taken" };
    try {
      unlinkSync(path); // a dead process with our pid left it
    } catch { /* gone meanwhile */ }
  }
  return { kind: "unlocked", reason: "the lock file keeps reappearing" };
}

/** Whether the lock at `path` names this process (pid and start time). */
function heldByThisProcess(path: string, start: string | null): boolean {
  let holder: Bag = {};
  try {
    holder = bag(JSON.parse(readFileSync(path, "utf8")));
  } catch { /* half-written or gone: treat as stale */ }
  return holder.pid === process.pid && holder.start === start;
}

/**
 * When this process started, to tell our own lock from one a dead process with a reused pid
 * left: Linux `/proc/<pid>/stat`, else `ps -o lstart=` (macOS; once per load, bounded).
 */
function processStart(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19] ?? null;
  } catch { /* no /proc here */ }
  try {
    const out = execFileSync("ps", ["-o", "lstart=", "-p", String(pid)], {
      encoding: "utf8",
      timeout: 2000,
      stdio: ["ignore", "pipe", "ignore"],
    }).trim();
    return out === "" ? null : out;
  } catch {
    return null;
  }
}

/** Whether a process with this pid exists (EPERM: it does, another user's). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Why `dir` is no private directory of this user, or null: the bridge's own rule for the state
 * directory (a directory, not a link, owned by this user, writable by nobody else).
 */
function privateDirProblem(dir: string): string | null {
  try {
    const st = lstatSync(dir);
    if (!st.isDirectory()) return "it is not a directory";
    const uid = typeof process.geteuid === "function" ? process.geteuid() : undefined;
    if (uid !== undefined && st.uid !== uid) return `it is owned by uid ${st.uid}`;
    if (uid !== undefined && (st.mode & 0o022)) return "other users can write to it";
    return null;
  } catch (err) {
    return (err as Error).message;
  }
}

/** A directory's entries; none when it cannot be read. */
function safeList(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

// ---------------------------------------------------------------- forwarding endpoint

/** A fetch that reaches OpenCode's server in this process. */
type InProcessFetch = (request: Request) => Promise<Response>;

/**
 * The in-process route to OpenCode's server when OpenCode listens on no port: its SDK client
 * then carries a fetch that calls the server's handler directly. Null when `serverUrl` is a
 * real listener (or the client is not what OpenCode 1.18.33 hands plugins).
 */
function inProcessFetch(input: PluginInput, serverUrl: string): InProcessFetch | null {
  if (serverUrl !== UNLISTENED_URL) return null;
  try {
    const inner = bag(bag(input.client)._client);
    const config = typeof inner.getConfig === "function" ? bag(inner.getConfig()) : {};
    const fetch = config.fetch;
    return typeof fetch === "function" ? (request) => fetch(request) as Promise<Response> : null;
  } catch {
    return null;
  }
}

/** The forwarding endpoint: its URL and the credentials that open it. */
interface Forwarder {
  /** `http://127.0.0.1:<port>/`. */
  url: string;
  /** What requests must carry (Basic auth). */
  auth: { username: string; password: string };
  /** Stops listening and ends open streams. */
  close(): void;
}

/** What the endpoint checks and where it forwards to. */
interface Route {
  /** The exact `authorization` header a request must carry. */
  expected: Buffer;
  /** OpenCode's own credentials for the forwarded request, if it has any. */
  upstreamAuth: string | null;
  fetchUpstream: InProcessFetch;
  log: Log;
}

/**
 * Serves `127.0.0.1:0`, forwarding every request that carries the per-run secret to
 * `fetchUpstream`; anything else gets 401 and nothing is forwarded.
 */
async function startForwarder(fetchUpstream: InProcessFetch, log: Log): Promise<Forwarder> {
  const auth = { username: "opencode", password: randomBytes(24).toString("base64url") };
  const own = envAuth(); // OpenCode's own password, when it has one, guards its server too
  const route: Route = {
    expected: Buffer.from(basicAuth(auth.username, auth.password)),
    upstreamAuth: own ? basicAuth(own.username ?? "opencode", own.password) : null,
    fetchUpstream,
    log,
  };
  const listening = await listenLoopback(createServer((req, res) => forward(req, res, route)));
  return { ...listening, auth };
}

/** `Basic base64(username:password)`. */
function basicAuth(username: string, password: string): string {
  return `Basic ${Buffer.from(`${username}:${password}`).toString("base64")}`;
}

/** Listens on a free loopback port; neither the server nor its streams keep OpenCode alive. */
function listenLoopback(server: Server): Promise<{ url: string; close(): void }> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      server.unref(); // never keep OpenCode alive for the endpoint's sake (nor its streams)
      server.on("connection", (socket) => socket.unref?.());
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      resolve({
        url: `http://127.0.0.1:${port}/`,
        close: () => {
          server.close();
          server.closeAllConnections?.();
        },
      });
    });
  });
}

/** Answers one request: 401 without the secret, else OpenCode's response, streamed. */
function forward(req: IncomingMessage, res: ServerResponse, route: Route): void {
  let closed = false;
  res.on("close", () => (closed = true));
  if (!authorized(req, route.expected)) {
    res.writeHead(401, { "www-authenticate": 'Basic realm="muxbridge"' }).end();
    req.resume();
    return;
  }
  (async () => {
    const body = req.method === "GET" || req.method === "HEAD" ? null : await readBody(req);
    const upstream = await route.fetchUpstream(
      new Request(new URL(req.url ?? "/", UNLISTENED_URL), {
        method: req.method ?? "GET",
        headers: upstreamHeaders(req, route.upstreamAuth),
        ...(body ? { body: new Uint8Array(body) } : {}),
      }),
    );
    await relay(res, upstream, () => closed);
  })().catch((err) => {
    if (!res.headersSent) res.writeHead(502).end();
    else res.destroy();
    if (!closed) route.log(`forwarding ${req.method} ${req.url?.split("?")[0]} failed: ${err}`);
  });
}

/** Whether a request carries `Basic base64(username:password)`, compared in constant time. */
function authorized(req: IncomingMessage, expected: Buffer): boolean {
  const header = req.headers.authorization ?? "";
  const got = Buffer.from(header);
  return got.length === expected.length && timingSafeEqual(got, expected);
}

/** The headers forwarded upstream: ours removed, OpenCode's own credentials put in, if any. */
function upstreamHeaders(req: IncomingMessage, upstreamAuth: string | null): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined || name === "authorization" || name === "host") continue;
    if (name === "connection" || name === "keep-alive" || name === "transfer-encoding") continue;
    for (const v of Array.isArray(value) ? value : [value]) headers.append(name, v);
  }
  if (upstreamAuth) headers.set("authorization", upstreamAuth);
  return headers;
}

/** A request's body, at most {@linkcode MAX_FORWARD_BODY} bytes; null when empty. */
function readBody(req: IncomingMessage): Promise<Buffer | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (c: Buffer) => {
      size += c.length;
      if (size > MAX_FORWARD_BODY) {
        reject(new Error("request body too large"));
        req.destroy();
      } else chunks.push(c);
    });
    req.on("end", () => resolve(chunks.length ? Buffer.concat(chunks) : null));
    req.on("error", reject);
  });
}

/** Copies a response (streaming bodies chunk by chunk, honouring backpressure). */
async function relay(res: ServerResponse, upstream: Response, closed: () => boolean) {
  const headers: Record<string, string> = {};
  upstream.headers.forEach((v, k) => {
    if (k !== "content-length" && k !== "transfer-encoding" && k !== "connection") headers[k] = v;
  });
  res.writeHead(upstream.status, headers);
  res.flushHeaders();
  if (!upstream.body) return void res.end();
  const reader = upstream.body.getReader();
  res.on("close", () => reader.cancel().catch(() => {}));
  while (!closed()) {
    const { value, done } = await reader.read();
    if (done) break;
    if (!res.write(value)) await new Promise((r) => res.once("drain", r));
  }
  res.end();
}

// ---------------------------------------------------------------- session events

/** How a background job ended. */
type JobEnd = "completed" | "error" | "cancelled";

/**
 * What OpenCode's hooks show, as bridge lines: every `session.*` event as it came, the requests
 * for the user (their ids), and `bridge.job` for background jobs. A background subagent
 * (OpenCode's `task` tool with `background: true`, an experimental feature, or a task promoted
 * to the background) returns at once with `metadata: { background: true, sessionId,
 * parentSessionId }`: the job runs in `sessionId` and belongs to `parentSessionId`. Its end is
 * the job session's idle, error or deletion.
 */
class SessionEvents {
  /** Background jobs: the session running the job → the session that owns it. */
  readonly #jobs = new Map<string, string>();
  readonly #send: (line: string) => void;
  readonly #lost: () => void;

  constructor(send: (line: string) => void, lost: () => void) {
    this.#send = send;
    this.#lost = lost;
  }

  /**
   * The `event` hook: forwards `session.*` events and ends the jobs they end, and forwards the
   * events that open and end a request for the user with only their ids.
   */
  event(event: Bag): void {
    const type = text(event.type);
    if (type !== undefined && ATTENTION.test(type)) {
      return this.#send(attentionLine(type, event));
    }
    if (!type?.startsWith("session.")) return;
    let line: string;
    try {
      line = `${JSON.stringify(event)}\n`;
    } catch {
      return this.#lost();
    }
    this.#send(line);
    if (this.#jobs.size === 0) return;
    const props = bag(event.properties);
    const sid = text(props.sessionID) ?? text(bag(props.info).id);
    const owner = sid === undefined ? undefined : this.#jobs.get(sid);
    const end = jobEnd(type, props);
    if (owner === undefined || end === null) return;
    this.#jobs.delete(sid!);
    this.#send(jobLine(owner, end));
  }

  /** The `tool.execute.after` hook: a `task` that went to the background starts a job. */
  toolAfter(info: Bag, output: Bag): void {
    if (info.tool !== "task") return;
    const meta = bag(output.metadata);
    const jobSession = text(meta.sessionId);
    const owner = text(meta.parentSessionId) ?? text(info.sessionID);
    if (meta.background !== true || !jobSession || !owner || this.#jobs.has(jobSession)) return;
    if (this.#jobs.size >= MAX_JOBS) this.#jobs.delete(this.#jobs.keys().next().value!);
    this.#jobs.set(jobSession, owner);
    this.#send(jobLine(owner, "running"));
  }
}

/**
 * The events that open and end a request for the user: a permission request, a question (1.x),
 * a form (2.x).
 */
const ATTENTION = /^(?:permission|question|form)\.[a-z]+$/;

/**
 * A request event as a bridge line: its type and its ids only, where the event has them
 * (`properties` on 1.x, `data` and `data.form` on 2.x). The rest (the command a permission is
 * for, a file's diff, the question) is not the bridge's business and can be large.
 */
function attentionLine(type: string, event: Bag): string {
  const ids = (value: unknown, depth = 0): Bag => {
    const from = bag(value);
    const out: Bag = {};
    for (const key of ["id", "sessionID", "requestID"]) {
      const v = text(from[key]);
      if (v !== undefined) out[key] = v.slice(0, 256);
    }
    if (depth === 0 && typeof from.form === "object") out.form = ids(from.form, 1);
    return out;
  };
  const line: Bag = { type };
  if ("properties" in event) line.properties = ids(event.properties);
  if ("data" in event) line.data = ids(event.data);
  return `${JSON.stringify(line)}\n`;
}

/** How a job running in the event's session ends with this event, or null when it does not. */
function jobEnd(type: string, props: Bag): JobEnd | null {
  if (type === "session.idle") return "completed";
  if (type === "session.status") return bag(props.status).type === "idle" ? "completed" : null;
  if (type === "session.deleted") return "cancelled";
  if (type === "session.error") {
    return bag(props.error).name === "MessageAbortedError" ? "cancelled" : "error";
  }
  return null;
}

/** A `bridge.job` line. */
function jobLine(owner: string, status: JobEnd | "running"): string {
  return `${JSON.stringify({ type: "bridge.job", sessionID: owner, status })}\n`;
}

// ---------------------------------------------------------------- what the bridge is told and says

/** Where the bridge reaches OpenCode's server. */
interface Upstream {
  url: string;
  auth?: { username: string; password: string };
}

/**
 * OpenCode's server URL as the bridge gets it: credentials in it (`user:pass@`) are removed, so
 * they never reach the bridge's argv or a log line (the bridge refuses such URLs; it takes
 * credentials from `OPENCODE_SERVER_PASSWORD`). An unparseable URL is dropped for the same
 * reason: nothing tells where its credentials would end.
 */
function plainServerUrl(raw: unknown): { url?: string; hadCredentials: boolean } {
  const href = raw instanceof URL ? raw.href : typeof raw === "string" ? raw : undefined;
  if (href === undefined) return { hadCredentials: false };
  let url: URL;
  try {
    url = new URL(href);
  } catch {
    return { hadCredentials: false };
  }
  if (!url.username && !url.password) return { url: href, hadCredentials: false };
  url.username = "";
  url.password = "";
  return { url: url.href, hadCredentials: true };
}

/** Credentials from OpenCode's environment, for a real listener. */
function envAuth(): { username?: string; password: string } | undefined {
  const password = process.env.OPENCODE_SERVER_PASSWORD;
  if (!password) return undefined;
  const username = process.env.OPENCODE_SERVER_USERNAME;
  return { ...(username ? { username } : {}), password };
}

/**
 * The `bridge.hello` line every start sends: the URL, the directory and the credentials (the
 * endpoint's secret, else OpenCode's own, read now).
 */
function helloLine(upstream: Upstream, directory: string): string {
  const auth = upstream.auth ?? envAuth();
  const hello = { type: "bridge.hello", serverUrl: upstream.url, directory };
  return `${JSON.stringify({ ...hello, ...(auth ? { auth } : {}) })}\n`;
}

/**
 * Reads the bridge's stdout, only for the log: what the bridge says is its own business, the
 * plugin acts on none of it, except to say once when the bridge is another version.
 */
function bridgeOutput(log: Log): (chunk: Buffer | string) => void {
  let buf = "";
  let versionNoted = false;
  const note = (line: string) => {
    let msg: Bag;
    try {
      msg = bag(JSON.parse(line));
    } catch {
      return log(`bridge wrote a line that is not JSON: ${line.slice(0, 200)}`);
    }
    if (msg.type !== "pong") log(`bridge: ${line.slice(0, 500)}`);
    if (msg.type === "ready" && !versionNoted && text(msg.version) !== PLUGIN_VERSION) {
      versionNoted = true;
      log(
        `version mismatch: this plugin is muxbridge ${PLUGIN_VERSION}, the bridge is ` +
          `${text(msg.version) ?? "unknown"}; run \`muxbridge install\` with the binary you use`,
      );
    }
  };
  return (chunk) => {
    buf += chunk.toString();
    let nl;
    while ((nl = buf.indexOf("\n")) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      note(line);
    }
    if (buf.length > MAX_STDOUT_LINE) buf = ""; // not a protocol line; forget it
  };
}
