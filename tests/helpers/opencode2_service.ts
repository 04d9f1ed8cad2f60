/**
 * The per-user service of a real OpenCode 2.x (`opencode serve --service`) for tests, in a home
 * of `opencode2_home.ts`: started with `opencode service start` on the home's own port, and
 * always stopped again.
 *
 * A 2.x service outlives the command that started it (it runs in its own session), and a
 * running 2.x TUI starts it again by itself when it goes away (seen with 2.1.2: within seconds
 * of `opencode service stop`). So {@linkcode Opencode2Service.stop} stops the TUIs' service
 * however many times it was restarted: it runs `opencode service stop` with the home's
 * environment, then waits for every service process of this home to be gone: every pid the
 * state file named, and every `serve --service` process whose environment names this home's
 * config folder. Whatever outlives the grace gets SIGKILL (its process group: the service leads
 * its own). Stop the home's TUIs first, or one may start the service again.
 *
 * Requests carry Basic auth (user `opencode`, the password from the state file) and a
 * timeout. {@linkcode Opencode2Service.onEvent} follows `GET /api/event` (every directory).
 *
 * @module
 */

import { readdirSync, readFileSync } from "node:fs";
import { createRealClock, waitFor } from "../../lib/sys/clock.ts";
import { createProcesses, processEnviron } from "../../lib/sys/processes.ts";
import { type Opencode2Home, readServiceState, type ServiceState } from "./opencode2_home.ts";
import { runTag } from "./run_tag.ts";

const clock = createRealClock();
const processes = createProcesses();

/** A 2.x session as `GET /api/session/{id}` returns it (the fields tests use). */
export interface Session2 {
  /** `ses_…`. */
  id: string;
  /** The parent, for a child. */
  parentID?: string;
  /** The title (a child's is the `subagent` tool's `description`). */
  title: string;
  /** `succeeded`, `failed` or `interrupted` once a run ended. */
  outcome?: string;
  /** Where it runs. */
  location: { directory: string };
}

/** One event of `GET /api/event` (`{id, created, type, location?, data}`). */
export interface Event2 {
  /** `session.created`, `session.execution.started`, … */
  type: string;
  /** The event's payload. */
  data: Record<string, unknown>;
  /** The directory, when the event has one. */
  location?: { directory: string };
  [key: string]: unknown;
}

/** A running 2.x service. */
export interface Opencode2Service {
  /** The home it serves. */
  home: Opencode2Home;
  /** Its registration when it started (url, pid, password). */
  state: ServiceState;
  /** `http://127.0.0.1:<port>`, without a trailing slash. */
  url: string;
  /** Sends a request with Basic auth (15 s timeout); the caller reads or cancels the body. */
  request(method: string, path: string, body?: unknown): Promise<Response>;
  /** Sends a request and parses the JSON answer; throws on a non-2xx status. */
  json(method: string, path: string, body?: unknown): Promise<unknown>;
  /** `GET /api/session/{id}`, or null on 404 (deleted or unknown). */
  session(id: string): Promise<Session2 | null>;
  /** `GET /api/session?parentID=`: a session's children. */
  children(parentID: string): Promise<Session2[]>;
  /** `GET /api/session/active`: running sessions, every directory (idle ones are absent). */
  active(): Promise<Record<string, { type: string }>>;
  /** `GET /api/plugin` without the builtin ones: each plugin's id, load status, TUI part. */
  plugins(): Promise<Plugin2[]>;
  /** Creates a root session (`POST /api/session`) in `directory` (default: the project). */
  createSession(options?: { directory?: string; title?: string }): Promise<Session2>;
  /** Sends a prompt (`POST /api/session/{id}/prompt`). */
  prompt(id: string, text: string): Promise<void>;
  /**
   * Calls `fn` with every later event of `GET /api/event`. The stream starts with the first
   * call and ends with {@linkcode Opencode2Service.stop} (or when the service goes away).
   * @returns Once the stream is connected.
   */
  onEvent(fn: (event: Event2) => void): Promise<void>;
  /** Every service pid of this home seen so far (the first, and any restarted one). */
  pids(): number[];
  /** Stops the service (see the module doc); idempotent. */
  stop(): Promise<void>;
}

/** A plugin as {@linkcode Opencode2Service.plugins} lists it. */
export interface Plugin2 {
  id?: string;
  /** `active` or `failed` once loaded. */
  status?: string;
  /** Whether it has a TUI entry. */
  tui?: boolean;
}

/** Options of {@linkcode startOpencode2Service}. */
export interface Opencode2ServiceOptions {
  /** More variables for the service (they reach its plugins' `process.env`). */
  env?: Record<string, string>;
  /** The most time for the service to answer `GET /api/info`. @default 60000 */
  startTimeoutMs?: number;
}

/**
 * Runs `opencode …args` with exactly the home's environment (plus `env` and the run tag),
 * bounded by `timeoutMs`.
 *
 * @param home The home.
 * @param args The arguments.
 * @param options Extra variables, working directory, the bound.
 * @returns Exit code, stdout and stderr.
 */
export async function runOpencode2(
  home: Opencode2Home,
  args: string[],
  options: { env?: Record<string, string>; cwd?: string; timeoutMs?: number } = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = await new Deno.Command(home.bin, {
    args,
    cwd: options.cwd ?? home.project,
    env: { ...home.env, ...options.env, ...runTag() },
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(options.timeoutMs ?? 30_000),
  }).output();
  const text = new TextDecoder();
  return { code: out.code, stdout: text.decode(out.stdout), stderr: text.decode(out.stderr) };
}

/**
 * The service processes of a home now: `serve --service` processes whose environment names the
 * home's config folder (`XDG_CONFIG_HOME`), which no other home shares.
 *
 * @param home The home.
 * @returns Their pids (Linux `/proc`; empty elsewhere).
 */
export function servicePidsOf(home: Opencode2Home): number[] {
  const out: number[] = [];
  let names: string[];
  try {
    names = readdirSync("/proc");
  } catch {
    return out;
  }
  for (const name of names) {
    const pid = Number(name);
    if (!Number.isInteger(pid) || pid <= 1) continue;
    let argv: string[];
    try {
      argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
    } catch {
      continue;
    }
    if (!argv.includes("serve") || !argv.includes("--service")) continue;
    if (processEnviron(pid)?.XDG_CONFIG_HOME !== home.env.XDG_CONFIG_HOME) continue;
    if (processes.alive(pid)) out.push(pid);
  }
  return out;
}

/** Whether a process leads its process group (`/proc/<pid>/stat` field 5). */
function leadsGroup(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[2] === String(pid);
  } catch {
    return false;
  }
}

/**
 * Starts the home's service (`opencode service start`) and waits until it answers
 * `GET /api/info` with the home's version.
 *
 * @param home The home ({@linkcode prepareOpencode2Home}).
 * @param options Extra environment, the start bound.
 * @returns The service; always `await stop()` (after stopping the home's TUIs).
 * @throws {Error} When it does not come up in time (after stopping whatever did start).
 */
export async function startOpencode2Service(
  home: Opencode2Home,
  options: Opencode2ServiceOptions = {},
): Promise<Opencode2Service> {
  const seen = new Set<number>();
  const events = new AbortController();
  const streams: Promise<void>[] = [];
  const note = () => {
    const pid = readServiceState(home.stateFile)?.pid;
    if (pid !== undefined) seen.add(pid);
    for (const p of servicePidsOf(home)) seen.add(p);
  };
  let stopping: Promise<void> | null = null;
  const stop = () => (stopping ??= stopOnce());
  const stopOnce = async () => {
    events.abort();
    await Promise.allSettled(streams);
    note();
    await runOpencode2(home, ["service", "stop"], { env: options.env, timeoutMs: 30_000 })
      .catch(() => {});
    note();
    const gone = () => [...seen].every((pid) => !processes.alive(pid));
    if (!await waitFor(clock, gone, { deadline: clock.now() + 10_000, maxIntervalMs: 100 })) {
      for (const pid of seen) {
        if (!processes.alive(pid)) continue;
        // The service leads its own process group: its helpers go with it.
        processes.signal(pid, "SIGKILL", leadsGroup(pid));
      }
      await waitFor(clock, gone, { deadline: clock.now() + 5000, maxIntervalMs: 50 });
    }
    const left = [...seen, ...servicePidsOf(home)].filter((pid) => processes.alive(pid));
    if (left.length > 0) throw new Error(`OpenCode 2.x service still running: ${left.join(" ")}`);
  };

  try {
    const started = await runOpencode2(home, ["service", "start"], {
      env: options.env,
      timeoutMs: options.startTimeoutMs ?? 60_000,
    });
    note();
    if (started.code !== 0) {
      throw new Error(`opencode service start exited ${started.code}: ${started.stderr}`);
    }
    let state: ServiceState | null = null;
    const up = await waitFor(clock, async () => {
      state = readServiceState(home.stateFile);
      if (!state) return false;
      seen.add(state.pid);
      const res = await fetch(`${state.url}/api/info`, {
        headers: { authorization: `Basic ${btoa(`opencode:${state.password}`)}` },
        signal: AbortSignal.timeout(5000),
      }).catch(() => null);
      const info = res?.ok ? await res.json().catch(() => null) : await res?.body?.cancel();
      return (info as { version?: string } | null)?.version !== undefined;
    }, { deadline: clock.now() + (options.startTimeoutMs ?? 60_000), maxIntervalMs: 200 });
    if (!up || !state) {
      throw new Error(
        `the OpenCode 2.x service did not come up\nservice start: ${started.stdout}${started.stderr}`,
      );
    }
    const s: ServiceState = state;
    const url = s.url.replace(/\/+$/, "");
    const headers = {
      authorization: `Basic ${btoa(`opencode:${s.password}`)}`,
      "content-type": "application/json",
    };
    const request = (method: string, path: string, body?: unknown) =>
      fetch(`${url}${path}`, {
        method,
        headers,
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(15_000),
      });
    const json = async (method: string, path: string, body?: unknown) => {
      const res = await request(method, path, body);
      const text = await res.text();
      if (!res.ok) throw new Error(`${method} ${path}: HTTP ${res.status}: ${text.slice(0, 500)}`);
      return text ? JSON.parse(text) : null;
    };
    const data = async <T>(method: string, path: string, body?: unknown) =>
      ((await json(method, path, body)) as { data: T }).data;
    const listeners: Array<(event: Event2) => void> = [];
    let connected: Promise<void> | null = null;
    const subscribe = (): Promise<void> => {
      let opened!: () => void;
      const ready = new Promise<void>((resolve) => (opened = resolve));
      const stream = (async () => {
        const res = await fetch(`${url}/api/event`, { headers, signal: events.signal });
        if (!res.ok || !res.body) throw new Error(`GET /api/event: HTTP ${res.status}`);
        opened();
        let buf = "";
        for await (const chunk of res.body.pipeThrough(new TextDecoderStream())) {
          buf += chunk;
          let end;
          while ((end = buf.indexOf("\n\n")) >= 0) {
            const frame = buf.slice(0, end);
            buf = buf.slice(end + 2);
            // `data: {…}` frames; `: heartbeat` comments are skipped.
            if (!frame.startsWith("data: ")) continue;
            const event = JSON.parse(frame.slice(6)) as Event2;
            for (const fn of listeners) fn(event);
          }
        }
      })().catch((err) => {
        if (!events.signal.aborted) throw err;
      });
      streams.push(stream);
      return Promise.race([ready, stream.then(() => {})]);
    };

    return {
      home,
      state: s,
      url,
      request,
      json,
      async session(id) {
        const res = await request("GET", `/api/session/${encodeURIComponent(id)}`);
        if (res.status === 404) {
          await res.body?.cancel();
          return null;
        }
        const text = await res.text();
        if (!res.ok) throw new Error(`GET /api/session/${id}: HTTP ${res.status}: ${text}`);
        return (JSON.parse(text) as { data: Session2 }).data;
      },
      children: (parentID) =>
        data<Session2[]>("GET", `/api/session?parentID=${encodeURIComponent(parentID)}`),
      active: () => data<Record<string, { type: string }>>("GET", "/api/session/active"),
      plugins: async () =>
        (await data<
          Array<{
            id?: string;
            source?: { type?: string };
            features?: { tui?: boolean };
            state?: { status?: string };
          }>
        >("GET", "/api/plugin") ?? [])
          .filter((p) => p.source?.type !== "builtin")
          .map((p) => ({ id: p.id, status: p.state?.status, tui: p.features?.tui })),
      createSession: (o = {}) =>
        data<Session2>("POST", "/api/session", {
          location: { directory: o.directory ?? home.project },
          ...(o.title ? { title: o.title } : {}),
        }),
      prompt: async (id, text) =>
        void await json("POST", `/api/session/${encodeURIComponent(id)}/prompt`, { text }),
      onEvent(fn) {
        listeners.push(fn);
        return (connected ??= subscribe());
      },
      pids: () => (note(), [...seen]),
      stop,
    };
  } catch (err) {
    await stop().catch(() => {});
    throw err;
  }
}
