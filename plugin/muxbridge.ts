/**
 * The muxbridge OpenCode plugin: starts `muxbridge bridge` next to OpenCode and feeds it the
 * session events it needs, one JSON line each. muxbridge opens a multiplexer pane per child
 * session; this file only carries events to it.
 *
 * Install: add `"plugin": ["file:///abs/path/to/plugin/muxbridge.ts"]` to `opencode.json`
 * (options: `["file:///…/muxbridge.ts", { "bin": "/opt/muxbridge" }]`).
 *
 * What it promises OpenCode:
 * - It never blocks the event hook: lines go through a bounded queue (oldest dropped first, the
 *   drops counted and logged) and are written only while the bridge's pipe takes them.
 * - It never writes to OpenCode's terminal: its own lines and the bridge's stderr go to one log
 *   file, `$MUXBRIDGE_PLUGIN_LOG`, else `$MUXBRIDGE_STATE_DIR/bridge.log`, else
 *   `$XDG_STATE_HOME/muxbridge/bridge.log`, else `~/.local/state/muxbridge/bridge.log`.
 * - It never throws into OpenCode: a missing binary is one log line; a bridge that dies is
 *   restarted with capped exponential backoff, up to a restart cap, then one line says it gave
 *   up.
 *
 * It runs inside OpenCode's Bun, so it imports only `node:` modules at run time (types aside)
 * and uses no `Bun.*` API; it also runs under Deno for its tests. It is one file with one
 * exported function because OpenCode treats every exported function of a plugin module as a
 * plugin.
 *
 * @module
 */

import { type ChildProcess, spawn } from "node:child_process";
import { Buffer } from "node:buffer";
import {
  closeSync,
  constants,
  fchmodSync,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  renameSync,
  write,
} from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import process from "node:process";
import { clearTimeout, setTimeout } from "node:timers";
import type { Hooks, Plugin, PluginInput, PluginOptions } from "@opencode-ai/plugin";

/** Plugin options (the second element of a `plugin` entry in `opencode.json`). */
interface Settings {
  /** The muxbridge binary. Env `MUXBRIDGE_BIN` wins. @default "muxbridge" (PATH) */
  bin: string;
  /** The log file. Env `MUXBRIDGE_PLUGIN_LOG` wins. @default the state directory's bridge.log */
  log: string;
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
/** The longest stdout line kept from the bridge (it is only logged). */
const MAX_STDOUT_LINE = 64 * 1024;
/** Background jobs remembered at once (the oldest is forgotten first). */
const MAX_JOBS = 256;

/**
 * The OpenCode plugin: starts `muxbridge bridge --url <serverUrl> --dir <directory>`, sends
 * `bridge.hello`, forwards every `session.*` event and background-job changes (`bridge.job`).
 *
 * @param input What OpenCode hands a plugin (`serverUrl` and `directory` are used).
 * @param options `bin`, `log`, `backoffMs`, `backoffMaxMs`, `maxRestarts`, `stableMs`,
 *   `queueBytes`, `stopGraceMs` (all optional; see the README).
 * @returns The hooks: `event`, `tool.execute.after` and `dispose`. It never rejects.
 */
export const MuxbridgePlugin: Plugin = (
  input: PluginInput,
  options?: PluginOptions,
) => {
  try {
    return Promise.resolve(
      createLink(input, settingsFrom(options ?? {})).hooks,
    );
  } catch {
    return Promise.resolve({}); // never throw into OpenCode; nothing usable to log to
  }
};

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
  return {
    bin: env.MUXBRIDGE_BIN || str("bin") || "muxbridge",
    log: env.MUXBRIDGE_PLUGIN_LOG || str("log") || join(stateDir, "bridge.log"),
    backoffMs: num("backoffMs", 1000, 1),
    backoffMaxMs: num("backoffMaxMs", 30_000, 1),
    maxRestarts: num("maxRestarts", 5, 0),
    stableMs: num("stableMs", 60_000, 0),
    queueBytes: num("queueBytes", 1024 * 1024, 1024),
    stopGraceMs: num("stopGraceMs", 3000, 0),
  };
}

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

/** A value of unknown shape, read without casts. */
type Bag = Record<string, unknown>;
const bag = (
  v: unknown,
): Bag => (typeof v === "object" && v !== null ? v as Bag : {});
const text = (
  v: unknown,
): string | undefined => (typeof v === "string" ? v : undefined);

function createLink(input: PluginInput, s: Settings): { hooks: Hooks } {
  const logFd = openLog(s.log);
  const log = (message: string) => {
    if (logFd === null) return;
    const line = `${new Date().toISOString()} muxbridge-plugin[${process.pid}] ${message}\n`;
    write(logFd, line, () => {}); // asynchronous; a failed log write is not worth a throw
  };
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

  let child: ChildProcess | null = null;
  let startedAt = 0;
  let restarts = 0;
  let timer: ReturnType<typeof setTimeout> | null = null;
  /** `off`: never started or gave up; `stopped`: disposed. */
  let mode: "running" | "off" | "stopped" = "running";
  let writable = false; // the current child's pipe takes more (no pending drain)
  const queue: string[] = [];
  let queued = 0;
  let dropped = 0;
  let droppedReported = 0;
  let exited: (() => void) | null = null;
  /** Background jobs: the session running the job → the session that owns it. */
  const jobs = new Map<string, string>();

  const hello = () => {
    const auth = process.env.OPENCODE_SERVER_PASSWORD
      ? {
        ...(process.env.OPENCODE_SERVER_USERNAME
          ? { username: process.env.OPENCODE_SERVER_USERNAME }
          : {}),
        password: process.env.OPENCODE_SERVER_PASSWORD,
      }
      : undefined;
    return `${
      JSON.stringify({
        type: "bridge.hello",
        serverUrl,
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
    if (mode !== "running") return;
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
  };

  const start = () => {
    timer = null;
    if (mode !== "running") return;
    let c: ChildProcess;
    try {
      c = spawn(s.bin, ["bridge", "--url", serverUrl!, "--dir", directory!], {
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
        `cannot start ${JSON.stringify(s.bin)} (${err.code}): install muxbridge on PATH or set ` +
          `MUXBRIDGE_BIN; no panes will open for this OpenCode`,
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

  const dispose = async () => {
    if (mode === "stopped") return;
    mode = "stopped";
    if (timer) clearTimeout(timer);
    timer = null;
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
    if (dropped > droppedReported) {
      log(`${dropped - droppedReported} events were dropped in total`);
    }
    log("stopped");
    if (logFd !== null) {
      // Let queued log writes land before the descriptor goes.
      await new Promise<void>((resolve) => write(logFd, "", () => resolve()));
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
    log(`starting ${JSON.stringify(s.bin)} for ${serverUrl} in ${directory}`);
    start();
  }

  return {
    hooks: {
      // The hooks return at once: nothing here waits on the bridge.
      event: ({ event }) => {
        guard(onEvent)(bag(event));
        return Promise.resolve();
      },
      "tool.execute.after": (info, output) => {
        guard(onToolAfter)(bag(info), bag(output));
        return Promise.resolve();
      },
      dispose: () => dispose().catch(() => {}),
    },
  };
}
