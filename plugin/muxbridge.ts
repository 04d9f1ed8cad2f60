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
 * and uses no `Bun.*` API; it also runs under Deno for its tests. It is one file with one
 * exported function because OpenCode treats every exported function of a plugin module (and
 * every `.ts` file in its plugin folder) as a plugin.
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
/**
 * The URL OpenCode 1.18.33 hands plugins when it listens on no port (its `serverUrl` getter's
 * fallback); its real listeners are named by `--hostname`, 127.0.0.1 by default.
 */
const UNLISTENED_URL = "http://localhost:4096/";
/** The sidecar `muxbridge install` writes beside this file. */
const SIDECAR = "muxbridge.json";

/** A value of unknown shape, read without casts. */
type Bag = Record<string, unknown>;
const bag = (
  v: unknown,
): Bag => (typeof v === "object" && v !== null ? v as Bag : {});
const text = (
  v: unknown,
): string | undefined => (typeof v === "string" ? v : undefined);

/**
 * The OpenCode plugin: starts `muxbridge bridge --url <url> --dir <directory>` once per
 * OpenCode process, sends `bridge.hello`, forwards every `session.*` event and background-job
 * changes (`bridge.job`).
 *
 * @param input What OpenCode hands a plugin (`serverUrl`, `directory` and `client` are used).
 * @param options `bin`, `log`, `instance`, `backoffMs`, `backoffMaxMs`, `maxRestarts`,
 *   `stableMs`, `queueBytes`, `stopGraceMs` (all optional; see the README).
 * @returns The hooks: `event`, `tool.execute.after` and `dispose`. It never rejects.
 */
export const MuxbridgePlugin: Plugin = (
  input: PluginInput,
  options?: PluginOptions,
) => {
  try {
    return Promise.resolve(
      sharedLink(input, settingsFrom(options ?? {})).join(),
    );
  } catch {
    return Promise.resolve({}); // never throw into OpenCode; nothing usable to log to
  }
};

// ---------------------------------------------------------------- settings

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
    instance: (str("instance") ?? "default").replace(/[^A-Za-z0-9_-]/g, "_")
      .slice(0, 64),
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

/** The plugin's log: lines land in the order they were logged, one write in flight at a time. */
interface LogWriter {
  /** Queues one line (a timestamp and the plugin's pid are added). */
  line(message: string): void;
  /** Resolves once every queued line is written. */
  flush(): Promise<void>;
}

/**
 * A log writer over `fd`: asynchronous (a slow disk never blocks OpenCode) and serialised (a
 * later line never lands before an earlier one, which parallel `fs.write` calls allow).
 */
function logWriter(fd: number | null): LogWriter {
  const pending: string[] = [];
  let pendingBytes = 0;
  let dropped = 0;
  let busy = false;
  const idle: Array<() => void> = [];
  const next = () => {
    const chunk = pending.join("");
    pending.length = 0;
    pendingBytes = 0;
    if (chunk === "" || fd === null) {
      busy = false;
      for (const resolve of idle.splice(0)) resolve();
      return;
    }
    busy = true;
    // A failed log write is not worth a throw; the next chunk tries again.
    write(fd, chunk, () => next());
  };
  return {
    line(message) {
      if (fd === null) return;
      if (pendingBytes > MAX_LOG_PENDING) {
        dropped++;
        return;
      }
      const lost = dropped ? ` (${dropped} earlier log lines were dropped)` : "";
      dropped = 0;
      const line = `${
        new Date().toISOString()
      } muxbridge-plugin[${process.pid}] ${message}${lost}\n`;
      pending.push(line);
      pendingBytes += line.length;
      if (!busy) next();
    },
    flush: () =>
      new Promise<void>((resolve) => {
        if (!busy && pending.length === 0) return resolve();
        idle.push(resolve);
      }),
  };
}

// ---------------------------------------------------------------- one bridge per process

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

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** The outcome of {@linkcode lockProcess}. */
type Lock =
  | { kind: "owner"; release(): void }
  | { kind: "taken" }
  | { kind: "unlocked"; reason: string };

/**
 * Takes `<stateDir>/plugin-locks/<pid>-<instance>.lock` with O_EXCL: `taken` when another
 * realm of this very process holds it (same pid, same start time). A lock left by a dead
 * process is removed; locks of other dead processes are swept on the way.
 */
function lockProcess(stateDir: string, instance: string): Lock {
  // Only a private state directory holds locks: another user must not plant or remove them.
  // Links in its path are resolved once, as the bridge does.
  let dir: string;
  try {
    mkdirSync(stateDir, { recursive: true, mode: 0o700 });
    const real = realpathSync(stateDir);
    const problem = privateDirProblem(real);
    if (problem) return { kind: "unlocked", reason: `${real}: ${problem}` };
    dir = join(real, "plugin-locks");
    try {
      mkdirSync(dir, { mode: 0o700 });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
    const inner = privateDirProblem(dir);
    if (inner) return { kind: "unlocked", reason: `${dir}: ${inner}` };
  } catch (err) {
    return { kind: "unlocked", reason: (err as Error).message };
  }
  const start = processStart(process.pid);
  const path = join(dir, `${process.pid}-${instance}.lock`);
  for (const name of safeList(dir)) {
    const pid = Number(name.split("-")[0]);
    if (
      Number.isInteger(pid) && pid > 0 && pid !== process.pid && !alive(pid)
    ) {
      try {
        unlinkSync(join(dir, name));
      } catch { /* another sweeper was first */ }
    }
  }
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
    let holder: Bag = {};
    try {
      holder = bag(JSON.parse(readFileSync(path, "utf8")));
    } catch { /* half-written or gone: treat as stale */ }
    if (holder.pid === process.pid && holder.start === start) {
      return { kind: "taken" };
    }
    try {
      unlinkSync(path); // a dead process with our pid left it
    } catch { /* gone meanwhile */ }
  }
  return { kind: "unlocked", reason: "the lock file keeps reappearing" };
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

function safeList(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

// ---------------------------------------------------------------- plain `opencode`

/** A fetch that reaches OpenCode's server in this process. */
type InProcessFetch = (request: Request) => Promise<Response>;

/**
 * The in-process route to OpenCode's server when OpenCode listens on no port: its SDK client
 * then carries a fetch that calls the server's handler directly. Null when `serverUrl` is a
 * real listener (or the client is not what OpenCode 1.18.33 hands plugins).
 */
function inProcessFetch(
  input: PluginInput,
  serverUrl: string,
): InProcessFetch | null {
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
async function relay(
  res: ServerResponse,
  upstream: Response,
  closed: () => boolean,
) {
  const headers: Record<string, string> = {};
  upstream.headers.forEach((v, k) => {
    if (
      k !== "content-length" && k !== "transfer-encoding" && k !== "connection"
    ) headers[k] = v;
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

/**
 * Serves `127.0.0.1:0`, forwarding every request that carries the per-run secret to
 * `fetchUpstream`; anything else gets 401 and nothing is forwarded.
 */
function startForwarder(
  fetchUpstream: InProcessFetch,
  log: (message: string) => void,
): Promise<Forwarder> {
  const auth = {
    username: "opencode",
    password: randomBytes(24).toString("base64url"),
  };
  const expected = Buffer.from(
    `Basic ${Buffer.from(`${auth.username}:${auth.password}`).toString("base64")}`,
  );
  const own = envAuth(); // OpenCode's own password, when it has one, guards its server too
  const upstreamAuth = own
    ? `Basic ${Buffer.from(`${own.username ?? "opencode"}:${own.password}`).toString("base64")}`
    : null;
  const server: Server = createServer((req, res) => {
    let closed = false;
    res.on("close", () => (closed = true));
    if (!authorized(req, expected)) {
      res.writeHead(401, { "www-authenticate": 'Basic realm="muxbridge"' })
        .end();
      req.resume();
      return;
    }
    (async () => {
      const body = req.method === "GET" || req.method === "HEAD" ? null : await readBody(req);
      const upstream = await fetchUpstream(
        new Request(new URL(req.url ?? "/", UNLISTENED_URL), {
          method: req.method ?? "GET",
          headers: upstreamHeaders(req, upstreamAuth),
          ...(body ? { body: new Uint8Array(body) } : {}),
        }),
      );
      await relay(res, upstream, () => closed);
    })().catch((err) => {
      if (!res.headersSent) res.writeHead(502).end();
      else res.destroy();
      if (!closed) {
        log(
          `forwarding ${req.method} ${req.url?.split("?")[0]} failed: ${err}`,
        );
      }
    });
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      server.unref(); // never keep OpenCode alive for the endpoint's sake (nor its streams)
      server.on("connection", (socket) => socket.unref?.());
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      resolve({
        url: `http://127.0.0.1:${port}/`,
        auth,
        close: () => {
          server.close();
          server.closeAllConnections?.();
        },
      });
    });
  });
}

// ---------------------------------------------------------------- the shared link

/** One bridge and everything around it, shared by every load of the plugin in a realm. */
interface Link {
  /** Hooks for one more load; the link stops when the last load's `dispose` ran. */
  join(): Hooks;
}

const LINKS = Symbol.for("muxbridge.plugin.links");

/** The realm's link for `s.instance`, created on first use. */
function sharedLink(input: PluginInput, s: Settings): Link {
  const realm = globalThis as unknown as Record<
    symbol,
    Map<string, Link> | undefined
  >;
  const links = (realm[LINKS] ??= new Map());
  let link = links.get(s.instance);
  if (!link) {
    link = createLink(input, s, () => links.delete(s.instance));
    links.set(s.instance, link);
  }
  return link;
}

/** Where the bridge reaches OpenCode's server. */
interface Upstream {
  url: string;
  auth?: { username: string; password: string };
}

function createLink(input: PluginInput, s: Settings, forget: () => void): Link {
  const logFd = openLog(s.log);
  const writer = logWriter(logFd);
  const log = writer.line;
  const guard = <A extends unknown[]>(fn: (...args: A) => void) => (...args: A) => {
    try {
      fn(...args);
    } catch (err) {
      log(`internal error: ${(err as Error)?.stack ?? err}`);
    }
  };

  const server = plainServerUrl(input.serverUrl);
  const serverUrl = server.url;
  const directory = text(input.directory);
  const channelName = `muxbridge:${process.pid}:${s.instance}`;

  let refs = 0;
  let child: ChildProcess | null = null;
  let startedAt = 0;
  let restarts = 0;
  let timer: ReturnType<typeof setTimeout> | null = null;
  /** `off`: never started or gave up; `relay`: another realm runs the bridge; `stopped`: disposed. */
  let mode: "starting" | "running" | "relay" | "off" | "stopped" = "starting";
  let writable = false; // the current child's pipe takes more (no pending drain)
  const queue: string[] = [];
  let queued = 0;
  let dropped = 0;
  let droppedReported = 0;
  let exited: (() => void) | null = null;
  let upstream: Upstream | null = null;
  let forwarder: Forwarder | null = null;
  let lock: Lock = { kind: "unlocked", reason: "not taken yet" };
  let channel: BroadcastChannel | null = null;
  let versionNoted = false;
  /** Background jobs: the session running the job → the session that owns it. */
  const jobs = new Map<string, string>();

  const hello = () => {
    const auth = upstream?.auth ?? envAuth();
    return `${
      JSON.stringify({
        type: "bridge.hello",
        serverUrl: upstream!.url,
        directory,
        ...(auth ? { auth } : {}),
      })
    }\n`;
  };

  const pump = () => {
    while (child && writable && queue.length > 0) {
      const line = queue.shift()!;
      queued -= Buffer.byteLength(line);
      // write() never blocks; `false` means the pipe is full: wait for `drain`.
      writable = child.stdin!.write(line);
    }
    if (queue.length === 0 && dropped > droppedReported) {
      log(
        `bridge caught up; ${dropped - droppedReported} events were dropped while it stalled`,
      );
      droppedReported = dropped;
    }
  };

  const enqueue = (line: string) => {
    if (mode === "relay") {
      channel?.postMessage(line);
      return;
    }
    if (mode !== "running" && mode !== "starting") return;
    const bytes = Buffer.byteLength(line);
    if (bytes > MAX_LINE_BYTES) {
      dropped++;
      return;
    }
    queue.push(line);
    queued += bytes;
    // Drop the oldest: statuses are level-triggered, so the newest line carries the state the
    // bridge needs; the oldest is the most likely to be stale already.
    while (queued > s.queueBytes && queue.length > 0) {
      if (dropped === droppedReported) {
        log(
          `queue full (${s.queueBytes} bytes): the bridge is not reading; dropping oldest events`,
        );
      }
      queued -= Buffer.byteLength(queue.shift()!);
      dropped++;
    }
    pump();
  };

  const onStdout = (() => {
    let buf = "";
    return (chunk: Buffer | string) => {
      buf += chunk.toString();
      let nl;
      while ((nl = buf.indexOf("\n")) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        noteLine(line);
      }
      if (buf.length > MAX_STDOUT_LINE) buf = ""; // not a protocol line; forget it
    };
  })();

  const noteLine = (line: string) => {
    let msg: Bag;
    try {
      msg = bag(JSON.parse(line));
    } catch {
      log(`bridge wrote a line that is not JSON: ${line.slice(0, 200)}`);
      return;
    }
    // Only for the log: what the bridge says is its own business, the plugin acts on none of it.
    if (msg.type !== "pong") log(`bridge: ${line.slice(0, 500)}`);
    if (
      msg.type === "ready" && !versionNoted &&
      text(msg.version) !== PLUGIN_VERSION
    ) {
      versionNoted = true;
      log(
        `version mismatch: this plugin is muxbridge ${PLUGIN_VERSION}, the bridge is ` +
          `${text(msg.version) ?? "unknown"}; run \`muxbridge install\` with the binary you use`,
      );
    }
  };

  const start = () => {
    timer = null;
    if (mode !== "running") return;
    let c: ChildProcess;
    const [bin, ...pre] = s.command;
    try {
      c = spawn(bin, [
        ...pre,
        "bridge",
        "--url",
        upstream!.url,
        "--dir",
        directory!,
      ], {
        stdio: ["pipe", "pipe", logFd ?? "ignore"],
        shell: false,
        windowsHide: true,
      });
    } catch (err) {
      return onGone(null, err as NodeJS.ErrnoException);
    }
    child = c;
    startedAt = Date.now();
    let done = false;
    const end = guard(
      (
        err: NodeJS.ErrnoException | null,
        code?: number | null,
        signal?: string,
      ) => {
        if (done) return;
        done = true;
        onGone(c, err, code, signal);
      },
    );
    c.on("error", (err) => end(err));
    c.on("exit", (code, signal) => end(null, code, signal ?? undefined));
    c.stdin!.on("error", () => {}); // EPIPE when the bridge dies; `exit` handles that
    c.stdin!.on(
      "drain",
      guard(() => {
        writable = true;
        pump();
      }),
    );
    c.stdout!.on("data", guard(onStdout));
    c.stdout!.on("error", () => {});
    // Never keep OpenCode alive for the bridge's sake (`opencode run` must still exit).
    for (
      const h of [c, c.stdin, c.stdout] as Array<{ unref?: () => void } | null>
    ) {
      try {
        h?.unref?.();
      } catch { /* not supported here */ }
    }
    writable = c.stdin!.write(hello());
    pump();
  };

  const onGone = (
    c: ChildProcess | null,
    err: NodeJS.ErrnoException | null,
    code?: number | null,
    signal?: string,
  ) => {
    if (c === null || child === c) {
      child = null;
      writable = false;
    }
    exited?.();
    if (mode !== "running") return;
    if (err && (err.code === "ENOENT" || err.code === "EACCES")) {
      mode = "off";
      queue.length = 0;
      log(
        `cannot start ${JSON.stringify(s.command[0])} (${err.code}): install muxbridge on PATH ` +
          `or run \`muxbridge install\` (or set MUXBRIDGE_BIN); no panes will open for this OpenCode`,
      );
      return;
    }
    const ran = c ? Date.now() - startedAt : 0;
    const why = err ? `failed: ${err.message}` : `exited (${signal ?? `code ${code}`})`;
    if (ran >= s.stableMs) restarts = 0;
    if (restarts >= s.maxRestarts) {
      mode = "off";
      queue.length = 0;
      log(
        `bridge ${why}; giving up after ${restarts} restarts (restart OpenCode to try again)`,
      );
      return;
    }
    const delay = Math.min(s.backoffMs * 2 ** restarts, s.backoffMaxMs);
    restarts++;
    log(
      `bridge ${why} after ${ran} ms; restart ${restarts} of ${s.maxRestarts} in ${delay} ms`,
    );
    timer = setTimeout(guard(start), delay);
    timer.unref?.();
  };

  /** Turns what the plugin sees of background tasks into `bridge.job` lines. */
  const jobEnded = (
    sessionId: string,
    status: "completed" | "error" | "cancelled",
  ) => {
    const owner = jobs.get(sessionId);
    if (owner === undefined) return;
    jobs.delete(sessionId);
    enqueue(
      `${JSON.stringify({ type: "bridge.job", sessionID: owner, status })}\n`,
    );
  };

  const onEvent = (event: Bag) => {
    const type = text(event.type);
    if (!type?.startsWith("session.")) return;
    let line: string;
    try {
      line = `${JSON.stringify(event)}\n`;
    } catch {
      dropped++;
      return;
    }
    enqueue(line);
    if (jobs.size === 0) return;
    const props = bag(event.properties);
    const sid = text(props.sessionID) ?? text(bag(props.info).id);
    if (sid === undefined || !jobs.has(sid)) return;
    if (
      type === "session.idle" ||
      (type === "session.status" && bag(props.status).type === "idle")
    ) {
      jobEnded(sid, "completed");
    } else if (type === "session.deleted") {
      jobEnded(sid, "cancelled");
    } else if (type === "session.error") {
      jobEnded(
        sid,
        bag(props.error).name === "MessageAbortedError" ? "cancelled" : "error",
      );
    }
  };

  /**
   * A background subagent (OpenCode's `task` tool with `background: true`, an experimental
   * feature, or a task promoted to the background) returns at once with
   * `metadata: { background: true, sessionId, parentSessionId }`: the job runs in `sessionId`
   * and belongs to `parentSessionId`. Its end is the job session's idle, error or deletion.
   */
  const onToolAfter = (info: Bag, output: Bag) => {
    if (info.tool !== "task") return;
    const meta = bag(output.metadata);
    const jobSession = text(meta.sessionId);
    const owner = text(meta.parentSessionId) ?? text(info.sessionID);
    if (
      meta.background !== true || !jobSession || !owner || jobs.has(jobSession)
    ) return;
    if (jobs.size >= MAX_JOBS) jobs.delete(jobs.keys().next().value!);
    jobs.set(jobSession, owner);
    enqueue(
      `${
        JSON.stringify({
          type: "bridge.job",
          sessionID: owner,
          status: "running",
        })
      }\n`,
    );
  };

  /** Settles where the bridge reaches OpenCode, then starts it. */
  const begin = async () => {
    const direct = inProcessFetch(input, serverUrl!);
    if (direct) {
      try {
        forwarder = await startForwarder(direct, log);
      } catch (err) {
        log(`cannot serve the forwarding endpoint for plain opencode: ${err}`);
      }
      if (mode !== "starting") return forwarder?.close();
      if (forwarder) {
        log(
          `OpenCode listens on no port: forwarding ${forwarder.url} to it in-process`,
        );
      }
    }
    upstream = forwarder ? { url: forwarder.url, auth: forwarder.auth } : { url: serverUrl! };
    mode = "running";
    log(
      `starting ${JSON.stringify(s.command.join(" "))} (from ${s.commandFrom}) for ` +
        `${forwarder ? "the forwarding endpoint" : upstream.url} in ${directory}`,
    );
    if (s.recordedVersion && s.recordedVersion !== PLUGIN_VERSION) {
      log(
        `version mismatch: this plugin is muxbridge ${PLUGIN_VERSION}, ${SIDECAR} was written ` +
          `by ${s.recordedVersion}; run \`muxbridge install\` again`,
      );
    }
    start();
  };

  const stop = async () => {
    if (mode === "stopped") return;
    const was = mode;
    mode = "stopped";
    forget();
    if (timer) clearTimeout(timer);
    timer = null;
    channel?.close();
    const c = child;
    if (c) {
      const gone = new Promise<void>((resolve) => (exited = resolve));
      const wait = (ms: number) =>
        Promise.race([
          gone.then(() => true),
          new Promise<boolean>((resolve) => {
            const t = setTimeout(() => resolve(false), ms);
            gone.then(() => clearTimeout(t));
          }),
        ]);
      try {
        c.stdin!.end(); // end of input: the bridge closes its panes, says `bye` and exits
        if (!(await wait(s.stopGraceMs))) {
          c.kill("SIGTERM");
          if (!(await wait(1000))) c.kill("SIGKILL");
        }
      } catch { /* already gone */ }
    }
    forwarder?.close();
    if (lock.kind === "owner") lock.release();
    if (dropped > droppedReported) {
      log(`${dropped - droppedReported} events were dropped in total`);
    }
    if (was !== "relay") log("stopped");
    await writer.flush();
    if (logFd !== null) {
      try {
        closeSync(logFd);
      } catch { /* already closed */ }
    }
  };

  if (!serverUrl || !directory) {
    mode = "off";
    log(
      "OpenCode gave the plugin no serverUrl or directory; muxbridge is not started",
    );
  } else {
    if (server.hadCredentials) {
      log(
        "OpenCode's server URL carries credentials (user:pass@); they were removed (never on " +
          "argv or in a log): set OPENCODE_SERVER_PASSWORD (and OPENCODE_SERVER_USERNAME)",
      );
    }
    lock = lockProcess(s.stateDir, s.instance);
    channel = openChannel(channelName, log);
    if (lock.kind === "taken" && channel) {
      mode = "relay";
      log(
        `another realm of this OpenCode process runs the bridge; handing events to it`,
      );
    } else {
      if (lock.kind === "unlocked") {
        log(`cannot lock the process (${lock.reason}); going on`);
      }
      if (lock.kind === "taken") log("another realm runs the bridge, but no channel reaches it");
      if (channel) {
        channel.onmessage = guard((e: { data: unknown }) => {
          if (typeof e.data === "string") enqueue(e.data);
        });
      }
      begin().catch((err) => log(`internal error: ${err}`));
    }
  }

  return {
    join() {
      refs++;
      let disposed = false;
      return {
        // The hooks return at once: nothing here waits on the bridge.
        event: ({ event }) => {
          guard(onEvent)(bag(event));
          return Promise.resolve();
        },
        "tool.execute.after": (info, output) => {
          guard(onToolAfter)(bag(info), bag(output));
          return Promise.resolve();
        },
        dispose: () => {
          if (disposed) return Promise.resolve();
          disposed = true;
          return --refs > 0 ? Promise.resolve() : stop().catch(() => {});
        },
      };
    },
  };
}

/** The channel between realms of this process; null (and one log line) where there is none. */
function openChannel(name: string, log: (message: string) => void): BroadcastChannel | null {
  try {
    const channel = new BroadcastChannel(name);
    channel.unref?.(); // never keep OpenCode alive for it
    return channel;
  } catch (err) {
    log(`no channel between realms (${err}); this realm runs its own bridge`);
    return null;
  }
}

/** Credentials from OpenCode's environment, for a real listener. */
function envAuth(): { username?: string; password: string } | undefined {
  const password = process.env.OPENCODE_SERVER_PASSWORD;
  if (!password) return undefined;
  const username = process.env.OPENCODE_SERVER_USERNAME;
  return { ...(username ? { username } : {}), password };
}
