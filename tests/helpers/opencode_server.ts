/**
 * A real OpenCode server (`opencode serve`, npm `opencode-ai`, pinned in package.json) for tests,
 * on loopback only, with everything it could touch kept in a temporary directory:
 *
 * - HOME and the XDG directories point into the temporary directory, and the
 *   `OPENCODE_DISABLE_*` switches turn off autoupdate, sharing, the models fetch, default
 *   plugins, LSP downloads and Claude Code imports (docs/opencode.md, "A server for tests");
 * - its only provider is a loopback mock model ({@linkcode startMockModel});
 * - the first-run `npm install @opencode-ai/plugin` into the config directory is stubbed (a
 *   `node_modules/` and a lock file that lists the dependency, which OpenCode's installer
 *   accepts as done), and npm is forced offline anyway, so nothing is ever fetched;
 * - it is started with `--port 0 --hostname 127.0.0.1`, and nothing is sent to it before its
 *   `opencode server listening on` line, since requests sent earlier can hang forever
 *   (docs/opencode.md, "A server for tests"); the port is read from that line (`--port 0` means
 *   4096 when free).
 *
 * With `tmux`, the tmux server's global environment gets the same isolated variables (never the
 * password), so the panes muxbridge opens (a real `opencode attach`) share the server's
 * isolation; the server itself runs in a new window of that (private) tmux server unless
 * `tmuxWindow` is false. In a window, `env` and the password reach the server as `-e` flags on
 * the harness's own tmux argv: a test that scans every argv for the password runs the server
 * outside tmux.
 *
 * {@linkcode OpencodeServer.onEvent} subscribes to the server's `/event` stream (with Basic
 * auth when a password is set) and hands every `session.*` event on exactly as an OpenCode
 * plugin's `event` hook receives it, so a test can drive a bridge process with real events.
 *
 * `close()` stops everything it started (SIGTERM, a bounded wait, SIGKILL) and removes the
 * temporary directory.
 *
 * @module
 */

import { createRealClock, waitFor } from "../../lib/sys/clock.ts";
import { createProcesses } from "../../lib/sys/processes.ts";
import { type MockModel, startMockModel } from "./mock_model.ts";
import { prepareOpencodeHome, stopProcess } from "./opencode_home.ts";
import { runTag } from "./run_tag.ts";
import type { TmuxServer } from "./tmux_server.ts";

/** The repository root (with a trailing slash). */
export const ROOT = new URL("../../", import.meta.url).pathname;

/**
 * The real `opencode` binary: `OPENCODE_TEST_BIN` when set (null if it names no file), else
 * node_modules', else null when it is not installed.
 *
 * @returns The binary, or null.
 */
export function opencodeBin(): string | null {
  const named = Deno.env.get("OPENCODE_TEST_BIN");
  if (named) {
    try {
      return Deno.statSync(named).isFile ? named : null;
    } catch {
      return null;
    }
  }
  for (
    const p of [
      `${ROOT}node_modules/.bin/opencode`,
      `${ROOT}node_modules/opencode-linux-x64/bin/opencode`,
    ]
  ) {
    try {
      if (Deno.statSync(p).isFile) return p;
    } catch { /* next */ }
  }
  return null;
}

/** A plugin entry of the OpenCode config: a spec, or a spec and its options. */
export type PluginEntry = string | [string, Record<string, unknown>];

/** Options of {@linkcode startOpencodeServer}. */
export interface OpencodeServerOptions {
  /** Plugins, passed as `OPENCODE_CONFIG_CONTENT` (`file://` URLs). */
  plugins?: PluginEntry[];
  /** Sets `OPENCODE_SERVER_PASSWORD` (requests then use Basic auth). */
  password?: string;
  /** More variables for the server (e.g. `MUXBRIDGE_*` for the plugin's bridge). */
  env?: Record<string, string>;
  /** Give this tmux server's global environment the isolation (and run the server there). */
  tmux?: TmuxServer;
  /** With `tmux`: run the server in a new window of it (else as a direct child). @default true */
  tmuxWindow?: boolean;
  /** The mock model's per-chunk delay. @default 50 */
  chunkDelayMs?: number;
  /** The most time to wait for the listening line (a ceiling for a hung start). @default 120000 */
  startTimeoutMs?: number;
  /** More `opencode serve` arguments (e.g. `["--print-logs", "--log-level", "DEBUG"]`). */
  args?: string[];
}

/** A session as the server returns it (the fields tests use). */
export interface SessionInfo {
  /** `ses_…`. */
  id: string;
  /** The parent, for a child. */
  parentID?: string;
  /** The title. */
  title: string;
  /** The session's directory. */
  directory: string;
}

/** A running OpenCode server. */
export interface OpencodeServer {
  /** The base URL, without a trailing slash. */
  url: string;
  /** The server's pid. */
  pid: number;
  /** The binary. */
  bin: string;
  /** The project directory (the server's working directory). */
  project: string;
  /** The temporary directory holding everything (removed by `close()`). */
  dir: string;
  /** The isolated environment the server got (HOME, XDG, OPENCODE_*, extra `env`). */
  env: Readonly<Record<string, string>>;
  /** The tmux pane the server runs in (tmux mode only). */
  paneId?: string;
  /** Milliseconds from start to the listening line. */
  startMs: number;
  /** The mock model. */
  mock: MockModel;
  /** The server's stdout so far. */
  stdout(): string;
  /** The server's stderr so far. */
  stderr(): string;
  /** Sends a request (Basic auth when a password is set; 60 s timeout). */
  request(method: string, path: string, body?: unknown): Promise<Response>;
  /** Creates a session (a child when `parentID` is given). */
  createSession(body: { title?: string; parentID?: string }): Promise<SessionInfo>;
  /** Starts a prompt on a session (`prompt_async`, answered 204). */
  prompt(id: string, text?: string): Promise<void>;
  /** Aborts a session's turn. */
  abort(id: string): Promise<void>;
  /** Deletes a session. */
  deleteSession(id: string): Promise<void>;
  /** `GET /session/status`: busy and retrying sessions (idle ones are absent). */
  status(): Promise<Record<string, { type: string }>>;
  /** Waits until `id` is busy (`true`) or not (`false`) in `/session/status`, bounded by `ms` (default 60 s). */
  waitBusy(id: string, busy: boolean, ms?: number): Promise<void>;
  /** The pids of the server's direct children (the plugin's bridge is one). */
  children(): number[];
  /**
   * Calls `fn` with every later `session.*` event of the server's `/event` stream, as the
   * plugin hook receives it. The stream starts with the first call and ends with `close()`.
   * @returns Once the stream is connected (events from then on reach `fn`).
   */
  onEvent(fn: (event: Record<string, unknown>) => void): Promise<void>;
  /** Stops the server and the mock, and removes the temporary directory. */
  close(): Promise<void>;
}

const clock = createRealClock();
const processes = createProcesses();

/**
 * Starts a real OpenCode server.
 *
 * @param options Plugins, password, extra environment, tmux, timings.
 * @returns The server, once it printed its listening line; always `await close()`.
 * @throws {Error} When the binary is missing or the server does not get ready in time (after
 *   stopping everything it started).
 */
export async function startOpencodeServer(
  options: OpencodeServerOptions = {},
): Promise<OpencodeServer> {
  const bin = opencodeBin();
  if (!bin) throw new Error("opencode is not installed: run `npm install` (opencode-ai)");
  const base = await Deno.makeTempDir({ prefix: "muxbridge-opencode-" });
  const mock = startMockModel({ chunkDelayMs: options.chunkDelayMs ?? 50 });
  const project = `${base}/project`;
  let stop: () => Promise<void> = async () => {};
  let closing: Promise<void> | null = null;
  const events = new AbortController();
  let eventStream: Promise<void> | null = null;
  const close = () => (closing ??= closeOnce());
  const closeOnce = async () => {
    events.abort();
    await eventStream?.catch(() => {});
    await stop().catch(() => {});
    await mock.close().catch(() => {});
    await Deno.remove(base, { recursive: true }).catch(() => {});
  };
  try {
    const isolated = await prepareOpencodeHome(base, { mockUrl: mock.baseUrl, toolCall: false });
    const env: Record<string, string> = {
      ...isolated,
      ...(options.plugins
        ? { OPENCODE_CONFIG_CONTENT: JSON.stringify({ plugin: options.plugins }) }
        : {}),
      ...(options.password ? { OPENCODE_SERVER_PASSWORD: options.password } : {}),
      ...options.env,
    };
    const serveArgs = ["serve", "--port", "0", "--hostname", "127.0.0.1", ...options.args ?? []];
    const t0 = performance.now();
    let pid: number;
    let paneId: string | undefined;
    let stdout: () => string;
    let stderr: () => string;

    if (options.tmux) {
      // Panes get the tmux server's global environment, not their creator's: give it the
      // isolation (toolchain.md: panes do not inherit the bridge's environment).
      for (const [k, v] of Object.entries(isolated)) {
        await options.tmux.tmux(["set-environment", "-g", k, v]);
      }
    }
    if (options.tmux && options.tmuxWindow !== false) {
      const tmux = options.tmux;
      const out = `${base}/serve.out`, err = `${base}/serve.err`;
      await Deno.writeTextFile(out, "");
      await Deno.writeTextFile(err, "");
      const info = await tmux.tmux([
        "new-window",
        "-d",
        "-P",
        "-F",
        "#{pane_id} #{pane_pid}",
        // "t:" is session t's next free index; a bare "t" can resolve to an existing window.
        "-t",
        "t:",
        "-c",
        project,
        ...Object.entries({ ...env, OC_OUT: out, OC_ERR: err }).flatMap(([k, v]) => [
          "-e",
          `${k}=${v}`,
        ]),
        "--",
        "/bin/sh",
        "-c",
        'exec "$0" "$@" >"$OC_OUT" 2>"$OC_ERR"',
        bin,
        ...serveArgs,
      ]);
      const [p, pp] = info.trim().split(" ");
      paneId = p;
      pid = Number(pp);
      const read = (path: string) => () => {
        try {
          return Deno.readTextFileSync(path);
        } catch {
          return "";
        }
      };
      stdout = read(out);
      stderr = read(err);
      stop = async () => {
        await stopProcess(pid, 5000);
        await tmux.run(["kill-pane", "-t", p]).catch(() => {});
      };
    } else {
      const child = new Deno.Command(bin, {
        args: serveArgs,
        cwd: project,
        env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", ...env, ...runTag() },
        clearEnv: true,
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
      }).spawn();
      pid = child.pid;
      let outText = "", errText = "";
      const collect = async (s: ReadableStream<Uint8Array>, add: (t: string) => void) => {
        for await (const chunk of s.pipeThrough(new TextDecoderStream())) add(chunk);
      };
      const readers = Promise.all([
        collect(child.stdout, (t) => (outText += t)),
        collect(child.stderr, (t) => (errText += t)),
      ]);
      stdout = () => outText;
      stderr = () => errText;
      stop = async () => {
        await stopProcess(pid, 5000);
        await child.status;
        await readers.catch(() => {});
      };
    }

    let url = "";
    const ready = await waitFor(clock, () => {
      const m = stdout().match(/opencode server listening on (http:\/\/[^\s]+)/);
      if (m) url = m[1].replace(/\/+$/, "");
      return m !== null || !processes.alive(pid);
    }, { deadline: clock.now() + (options.startTimeoutMs ?? 120_000), maxIntervalMs: 50 });
    if (!ready || !url) {
      throw new Error(
        `opencode serve did not get ready (${ready ? "it exited" : "timed out"})\n` +
          `stdout: ${stdout().slice(-2000)}\nstderr: ${stderr().slice(-2000)}`,
      );
    }
    const startMs = Math.round(performance.now() - t0);
    const headers: Record<string, string> = { "content-type": "application/json" };
    if (options.password) headers.authorization = `Basic ${btoa(`opencode:${options.password}`)}`;

    const request = (method: string, path: string, body?: unknown) =>
      fetch(`${url}${path}`, {
        method,
        headers,
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(60_000),
      });
    const json = async (method: string, path: string, body?: unknown) => {
      const res = await request(method, path, body);
      const text = await res.text();
      if (!res.ok) throw new Error(`${method} ${path}: HTTP ${res.status}: ${text.slice(0, 500)}`);
      return text ? JSON.parse(text) : null;
    };
    const status = () =>
      json("GET", "/session/status") as Promise<Record<string, { type: string }>>;
    const listeners: Array<(event: Record<string, unknown>) => void> = [];
    let connected: Promise<void> | null = null;
    const subscribe = (): Promise<void> => {
      let opened!: () => void;
      const ready = new Promise<void>((resolve) => (opened = resolve));
      eventStream = (async () => {
        const res = await fetch(`${url}/event`, { headers, signal: events.signal });
        if (!res.ok || !res.body) throw new Error(`GET /event: HTTP ${res.status}`);
        opened();
        let buf = "";
        for await (const chunk of res.body.pipeThrough(new TextDecoderStream())) {
          buf += chunk;
          let end;
          while ((end = buf.indexOf("\n\n")) >= 0) {
            const frame = buf.slice(0, end);
            buf = buf.slice(end + 2);
            if (!frame.startsWith("data: ")) continue;
            const event = JSON.parse(frame.slice(6));
            if (!String(event.type).startsWith("session.")) continue;
            for (const fn of listeners) fn(event);
          }
        }
      })();
      // A stream that fails before it opens rejects the subscription instead.
      return Promise.race([ready, eventStream.then(() => {})]);
    };

    return {
      url,
      pid,
      bin,
      project,
      dir: base,
      env,
      ...(paneId ? { paneId } : {}),
      startMs,
      mock,
      stdout,
      stderr,
      request,
      createSession: (body) => json("POST", "/session", body),
      async prompt(id, text = "hi") {
        const res = await request("POST", `/session/${id}/prompt_async`, {
          parts: [{ type: "text", text }],
        });
        await res.body?.cancel();
        if (res.status !== 204) throw new Error(`prompt_async ${id}: HTTP ${res.status}`);
      },
      abort: async (id) => void await json("POST", `/session/${id}/abort`),
      deleteSession: async (id) => void await json("DELETE", `/session/${id}`),
      status,
      async waitBusy(id, busy, ms = 60_000) {
        const ok = await waitFor(clock, async () => ((await status())[id] !== undefined) === busy, {
          deadline: clock.now() + ms,
          maxIntervalMs: 100,
        });
        if (!ok) throw new Error(`${id} did not become ${busy ? "busy" : "idle"} within ${ms} ms`);
      },
      children: () => childrenOf(pid),
      onEvent(fn) {
        listeners.push(fn);
        return (connected ??= subscribe());
      },
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}

/**
 * The direct children of a process (Linux `/proc`).
 *
 * @param pid The parent.
 * @returns Child pids.
 */
export function childrenOf(pid: number): number[] {
  const out: number[] = [];
  try {
    for (const task of Deno.readDirSync(`/proc/${pid}/task`)) {
      const text = Deno.readTextFileSync(`/proc/${pid}/task/${task.name}/children`);
      for (const p of text.trim().split(/\s+/)) if (p) out.push(Number(p));
    }
  } catch { /* gone */ }
  return out;
}

/**
 * A process's argv (Linux `/proc`), or null when it is gone.
 *
 * @param pid The process.
 * @returns Its arguments.
 */
export function cmdline(pid: number): string[] | null {
  try {
    return Deno.readTextFileSync(`/proc/${pid}/cmdline`).split("\0").filter((a) => a !== "");
  } catch {
    return null;
  }
}

/**
 * The `opencode attach` process of a pane: muxbridge's start command (`/bin/sh`, see
 * `lib/session/pane_program.ts`) is the pane's process and runs the attach as its child, so the
 * pane's pid is the shell and the attach one level down; a pane started otherwise runs it itself.
 *
 * @param panePid The pane's process (`#{pane_pid}`).
 * @returns The attach process, or null while there is none.
 */
export function attachUnder(panePid: number): number | null {
  for (const pid of [panePid, ...childrenOf(panePid)]) {
    if (cmdline(pid)?.[1] === "attach") return pid;
  }
  return null;
}
