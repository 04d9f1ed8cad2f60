/**
 * The one pane model behind muxbridge's fake herdr: the fake CLI (`tests/fakes/bin/herdr`) and the
 * fake API socket server (`tests/fakes/herdr_socket.ts`) both answer through {@linkcode handle}
 * against the same JSON state file, under the same lock, so the CLI and the socket see the same
 * panes. herdr cannot be installed here; the shapes come from `docs/backends/herdr.md` ("§N";
 * herdr 0.8.2 source, sneat-dev/wb's live-captured 0.9.x fixtures) and herdr's
 * `src/api/schema/{panes,response}.rs` (read for the struct order of PaneInfo and the params).
 *
 * {@linkcode handle} answers in the socket's form: `{"id","result":{"type",…}}` or
 * `{"id","error":{"code","message"}}`, fields in struct order (the socket writes them so); the
 * CLI re-sorts keys at every level before printing, as the real CLI does (docs/backends/herdr.md
 * §6).
 *
 * A split pane runs the "user's shell": a `/bin/sh` that waits for a line on a FIFO and then runs
 * `<shell> -c <line>` in its place (state `shell`, default /bin/sh), in the pane's cwd with the
 * server's environment plus HERDR_* and the split's `env` (herdr-managed names cannot be
 * overridden). Typed text goes to the FIFO; `ctrl+c` is SIGINT to the pane's process group;
 * `pane.close` is SIGHUP, then SIGKILL. A pane whose process ended is gone (herdr closes it).
 *
 * @module
 */

import { runTag } from "../helpers/run_tag.ts";

/** A pane of the fake server. */
export interface FakePane {
  pane_id: string;
  workspace_id: string;
  tab_id: string;
  terminal_id?: string;
  cwd: string;
  focused: boolean;
  label?: string;
  /** The pane's shell (then its program: the shell `exec`s). */
  pid?: number;
  /** Its start time (field 22 of /proc/<pid>/stat), against pid reuse. */
  start?: string;
  fifo?: string;
  /** A pane the fake did not start (the caller's): alive without a pid. */
  static?: boolean;
  /** The pane split to make this one, and the direction. */
  anchor?: string;
  direction?: string;
  /** The agent reported on it (`pane.report_agent`), until released. */
  agent?: FakeAgent;
  /** Per report source, the highest `seq` taken (herdr's `hook_report_sequences`). */
  reportSeq?: Record<string, number>;
}

/** An agent reported on a pane. */
export interface FakeAgent {
  source: string;
  agent: string;
  state: "idle" | "working" | "blocked" | "unknown";
  message?: string;
  /** From `pane.report_agent_session` (or the report's own `agent_session_id`). */
  sessionId?: string;
}

/** The fake server's state file. */
export interface FakeHerdrState {
  /** What `herdr --version` prints (the CLI's version). */
  version?: string;
  /** The server's version, when it differs from the CLI's (the socket's `ping`). */
  serverVersion?: string;
  /** The server's protocol, when it differs from its version's. */
  serverProtocol?: number;
  dir: string;
  socket: string;
  running: boolean;
  shell?: string;
  binPath?: string;
  serverEnv?: Record<string, string>;
  started?: number[];
  terminals?: number;
  workspaces: Record<string, { nextPane: number }>;
  panes: FakePane[];
  /**
   * A fault of the socket server: `MODE[:METHOD]`, MODE one of `hang` (never answers), `crash`
   * (half a line, then the connection drops), `garbage` (a line that is not JSON), `close`
   * (closes without a byte), `wrong-id` (a valid reply to another request).
   */
  socketFault?: string;
  /**
   * A herdr from before the agent reports (`pane.report_agent`, `release_agent`,
   * `report_agent_session` arrived in 0.3.0 to 0.6.7): the server cannot read those requests and
   * the CLI does not know the subcommands.
   */
  noAgentReports?: boolean;
}

/** One request: what a socket line or a CLI command asks. */
export interface WireRequest {
  id: string;
  method: string;
  params: Record<string, unknown>;
}

/** One answer, in the socket's struct order. */
export type WireReply =
  | { id: string; result: Record<string, unknown> }
  | { id: string; error: { code: string; message: string } };

/** Variables herdr sets in every pane (docs/backends/herdr.md §4): `env` cannot override them. */
export const MANAGED = [
  "HERDR_ENV",
  "HERDR_SOCKET_PATH",
  "HERDR_BIN_PATH",
  "HERDR_WORKSPACE_ID",
  "HERDR_TAB_ID",
  "HERDR_PANE_ID",
];

const ALPHABET = "123456789ABCDEFGHJKMNPQRSTVWXYZ0";

/** Keys herdr accepts (docs/backends/herdr.md §8); all are checked before any byte is written. */
export const KEY =
  /^(enter|Enter|tab|esc|escape|backspace|up|down|left|right|minus|plus|shift\+tab|f([1-9]|1[0-2])|ctrl\+[a-z]|C-[a-z]|.)$/;

/** Bijective base 32 (docs/backends/herdr.md §3): 1..9, A…, 32 → 0, 33 → 11. */
export function b32(n: number): string {
  let s = "";
  while (n > 0) {
    let r = n % 32;
    if (r === 0) {
      r = 32;
      n = n / 32 - 1;
    } else n = Math.floor(n / 32);
    s = ALPHABET[r - 1] + s;
  }
  return s;
}

/** The protocol of a herdr release (docs/backends/herdr.md §2). */
export function protocolOf(version: string): number {
  const [maj, min, patch] = version.split(/[.-]/).map(Number);
  if (maj === 0 && min < 8) return 17;
  if (maj === 0 && min === 8) return patch >= 2 ? 20 : 19;
  return 22;
}

/** JSON with keys sorted at every level, as the CLI re-serialises through serde_json::Value. */
export function sorted(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sorted);
  if (value && typeof value === "object") {
    const o = value as Record<string, unknown>;
    return Object.fromEntries(Object.keys(o).sort().map((k) => [k, sorted(o[k])]));
  }
  return value;
}

function procStat(pid: number): string[] | undefined {
  try {
    const text = Deno.readTextFileSync(`/proc/${pid}/stat`);
    return text.slice(text.lastIndexOf(")") + 2).split(" ");
  } catch {
    return undefined;
  }
}

function alive(pane: FakePane): boolean {
  if (!pane.pid) return pane.static === true;
  const f = procStat(pane.pid);
  return !!f && f[0] !== "Z" && f[0] !== "X" && f[19] === pane.start;
}

function signalGroup(pid: number | undefined, sig: Deno.Signal): void {
  if (!pid) return;
  try {
    Deno.kill(-pid, sig);
  } catch { /* gone */ }
}

/**
 * Runs `fn` on the state under the state file's lock, then writes the state back.
 *
 * @param statePath The state file.
 * @param fn Reads and changes the state.
 * @returns What `fn` returned.
 */
export async function withState<T>(
  statePath: string,
  fn: (state: FakeHerdrState) => Promise<T> | T,
): Promise<T> {
  const lock = await Deno.open(`${statePath}.lock`, { create: true, write: true });
  await lock.lock(true);
  try {
    const state = JSON.parse(await Deno.readTextFile(statePath)) as FakeHerdrState;
    const result = await fn(state);
    await Deno.writeTextFile(`${statePath}.tmp`, JSON.stringify(state, null, 1));
    await Deno.rename(`${statePath}.tmp`, statePath);
    return result;
  } finally {
    lock.unlock();
    lock.close();
  }
}

/** PaneInfo in struct order (`src/api/schema/panes.rs`): empty optional fields left out. */
export function paneInfo(p: FakePane): Record<string, unknown> {
  return {
    pane_id: p.pane_id,
    terminal_id: p.terminal_id ?? "term_0",
    workspace_id: p.workspace_id,
    tab_id: p.tab_id,
    focused: p.focused,
    cwd: p.cwd,
    ...(p.label === undefined ? {} : { label: p.label }),
    ...(p.agent === undefined ? {} : { agent: p.agent.agent }),
    agent_status: p.agent?.state ?? "unknown",
    scroll: { offset_from_bottom: 0, max_offset_from_bottom: 0, viewport_rows: 40 },
    revision: 0,
  };
}

/** Drops panes whose process ended (herdr closes a pane whose shell exited). */
export function refresh(state: FakeHerdrState): void {
  state.panes = state.panes.filter(alive);
}

/** The pong `ping` answers: the server's version and protocol. */
export function pong(state: FakeHerdrState): Record<string, unknown> {
  const version = state.serverVersion ?? state.version ?? "0.9.1";
  return {
    type: "pong",
    version,
    protocol: state.serverProtocol ?? protocolOf(version),
    capabilities: { live_handoff: true, detached_server_daemon: true },
  };
}

const SHELL_SCRIPT = [
  // Ctrl+C at the prompt does not end a shell; a handler (not an ignore) is reset by exec.
  "trap ':' INT",
  // Read-write: never blocks, never sees end of file.
  'exec 3<>"$1"',
  'while :; do if IFS= read -r line <&3; then exec "$2" -c "$line" 3<&-; fi; done',
].join("\n");

async function startShell(
  state: FakeHerdrState,
  pane: FakePane,
  extraEnv: Record<string, string>,
): Promise<void> {
  const fifo = `${state.dir}/pane-${pane.pane_id.replace(":", "-")}.fifo`;
  const mk = await new Deno.Command("mkfifo", { args: [fifo] }).output();
  if (!mk.success) throw new Error(`mkfifo ${fifo} failed`);
  const paneEnv: Record<string, string> = {
    ...(state.serverEnv ?? {}),
    ...extraEnv,
    HERDR_ENV: "1",
    HERDR_SOCKET_PATH: state.socket,
    HERDR_BIN_PATH: state.binPath ?? "/usr/local/bin/herdr",
    HERDR_WORKSPACE_ID: pane.workspace_id,
    HERDR_TAB_ID: pane.tab_id,
    HERDR_PANE_ID: pane.pane_id,
  };
  const child = new Deno.Command("/bin/sh", {
    args: ["-c", SHELL_SCRIPT, "herdr-fake-shell", fifo, state.shell ?? "/bin/sh"],
    cwd: pane.cwd,
    env: { ...paneEnv, ...runTag() },
    clearEnv: true,
    stdin: "null",
    stdout: "null",
    stderr: "null",
    detached: true,
  }).spawn();
  child.unref();
  pane.pid = child.pid;
  pane.start = procStat(child.pid)?.[19];
  pane.fifo = fifo;
  (state.started ??= []).push(child.pid);
}

async function typeText(pane: FakePane, text: string): Promise<void> {
  if (!pane.fifo || text === "") return;
  // Opening for writing waits until the pane's shell holds the FIFO (bytes queue like typeahead).
  await Deno.writeTextFile(pane.fifo, text, { append: true });
}

/** A request whose params do not deserialize (serde's message, docs/backends/herdr.md §6). */
class BadRequest extends Error {}

function field(params: Record<string, unknown>, name: string): string {
  const v = params[name];
  if (typeof v !== "string") throw new BadRequest(`missing field \`${name}\``);
  return v;
}

function optional(params: Record<string, unknown>, name: string): string | undefined {
  const v = params[name];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "string") {
    throw new BadRequest(`invalid type for \`${name}\`, expected a string`);
  }
  return v;
}

function keysOf(params: Record<string, unknown>, required: boolean): string[] {
  const v = params.keys;
  if (v === undefined && !required) return [];
  if (!Array.isArray(v) || v.some((k) => typeof k !== "string")) {
    throw new BadRequest("missing field `keys`");
  }
  return v as string[];
}

/**
 * Answers one request against the state (the caller holds the lock and has refreshed it).
 *
 * @param state The state, changed in place.
 * @param req The request.
 * @returns The answer, in struct order.
 */
export async function handle(state: FakeHerdrState, req: WireRequest): Promise<WireReply> {
  const { id, params } = req;
  const ok = (result: Record<string, unknown>): WireReply => ({ id, result });
  const fail = (code: string, message: string): WireReply => ({ id, error: { code, message } });
  const find = (paneId: string) => state.panes.find((p) => p.pane_id === paneId);
  const notFound = (paneId: string) => fail("pane_not_found", `pane ${paneId} not found`);
  try {
    switch (req.method) {
      case "ping":
        return ok(pong(state));
      case "pane.split": {
        const direction = params.direction;
        if (direction !== "right" && direction !== "down") {
          throw new BadRequest(`unknown variant \`${String(direction)}\`, expected right or down`);
        }
        const target = optional(params, "target_pane_id");
        const anchor = target === undefined
          ? state.panes.find((p) => p.focused)
          : state.panes.find((p) => p.pane_id === target);
        if (!anchor) return fail("pane_not_found", "pane not found");
        const env = (params.env ?? {}) as Record<string, unknown>;
        for (const [k, v] of Object.entries(env)) {
          if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(k) || typeof v !== "string") {
            return fail("invalid_env", `invalid env assignment: ${k}`);
          }
        }
        const ws = state.workspaces[anchor.workspace_id];
        const focus = params.focus === true;
        const pane: FakePane = {
          pane_id: `${anchor.workspace_id}:p${b32(ws.nextPane++)}`,
          workspace_id: anchor.workspace_id,
          tab_id: anchor.tab_id,
          terminal_id: `term_${
            Date.now().toString(16)
          }${(state.terminals = (state.terminals ?? 0) + 1)}`,
          cwd: optional(params, "cwd") ?? anchor.cwd,
          focused: focus,
          direction,
          anchor: anchor.pane_id,
        };
        try {
          if (!Deno.statSync(pane.cwd).isDirectory) throw new Error("not a directory");
        } catch (e) {
          return fail("pane_split_failed", `failed to spawn pane: ${(e as Error).message}`);
        }
        const extra = Object.fromEntries(
          Object.entries(env as Record<string, string>).filter(([k]) => !MANAGED.includes(k)),
        );
        await startShell(state, pane, extra);
        if (focus) { for (const p of state.panes) p.focused = false; }
        state.panes.push(pane);
        return ok({ type: "pane_info", pane: paneInfo(pane) });
      }
      case "pane.get": {
        const paneId = field(params, "pane_id");
        const p = find(paneId);
        return p ? ok({ type: "pane_info", pane: paneInfo(p) }) : notFound(paneId);
      }
      case "pane.list": {
        const ws = optional(params, "workspace_id");
        if (ws !== undefined && !state.workspaces[ws]) {
          return fail("workspace_not_found", `workspace ${ws} not found`);
        }
        const panes = state.panes.filter((p) => ws === undefined || p.workspace_id === ws);
        return ok({ type: "pane_list", panes: panes.map(paneInfo) });
      }
      case "pane.rename": {
        const paneId = field(params, "pane_id");
        const label = optional(params, "label");
        const p = find(paneId);
        if (!p) return notFound(paneId);
        if (label === undefined) delete p.label;
        else p.label = label;
        return ok({ type: "pane_info", pane: paneInfo(p) });
      }
      case "pane.send_text":
      case "pane.send_keys":
      case "pane.send_input": {
        const paneId = field(params, "pane_id");
        const text = req.method === "pane.send_keys" ? "" : optional(params, "text") ?? "";
        if (req.method === "pane.send_text") field(params, "text");
        const keys = req.method === "pane.send_text"
          ? []
          : keysOf(params, req.method === "pane.send_keys");
        const p = find(paneId);
        if (!p) return notFound(paneId);
        const bad = keys.find((k) => !KEY.test(k));
        if (bad !== undefined) return fail("invalid_key", `unsupported key ${bad}`);
        let typed = text;
        for (const k of keys) {
          if (k === "enter" || k === "Enter") typed += "\n";
          else if (k === "ctrl+c" || k === "C-c") {
            await typeText(p, typed);
            typed = "";
            signalGroup(p.pid, "SIGINT");
          }
        }
        await typeText(p, typed);
        return ok({ type: "ok" });
      }
      case "pane.close": {
        const paneId = field(params, "pane_id");
        const p = find(paneId);
        if (!p) return notFound(paneId);
        state.panes = state.panes.filter((x) => x !== p);
        if (p.pid && alive(p)) {
          signalGroup(p.pid, "SIGHUP");
          const deadline = Date.now() + 100;
          while (alive(p) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
          signalGroup(p.pid, "SIGKILL");
        }
        return ok({ type: "ok" });
      }
      case "pane.process_info": {
        const paneId = optional(params, "pane_id") ??
          state.panes.find((p) => p.focused)?.pane_id ?? "";
        const p = find(paneId);
        if (!p) return notFound(paneId);
        return ok({
          type: "pane_process_info",
          process_info: {
            pane_id: p.pane_id,
            ...(p.pid ? { shell_pid: p.pid, foreground_process_group_id: p.pid } : {}),
          },
        });
      }
      case "pane.report_agent":
      case "pane.report_agent_session":
      case "pane.release_agent": {
        if (state.noAgentReports) throw new BadRequest(unknownVariant(req.method));
        return agentReport(req.method, params, find, notFound, fail, ok);
      }
      default:
        throw new BadRequest(unknownVariant(req.method));
    }
  } catch (e) {
    // serde could not read the request: the server answers before it knows the request's id
    // (`src/api/server.rs`: `ErrorResponse { id: String::new(), … }`).
    if (e instanceof BadRequest) {
      return {
        id: "",
        error: { code: "invalid_request", message: `invalid request: ${e.message}` },
      };
    }
    throw e;
  }
}

function unknownVariant(method: string): string {
  return `unknown variant \`${method}\`, expected one of \`ping\`, \`pane.split\`, … at line 1`;
}

const AGENT_STATES = ["idle", "working", "blocked", "unknown"];

/**
 * `pane.report_agent`, `pane.report_agent_session` and `pane.release_agent` as herdr 0.8.2's
 * handlers answer them (`src/app/api/panes.rs`: an unknown pane is `pane_not_found`, an agent
 * label that is empty once trimmed `invalid_agent`, anything else ok) and as its pane state keeps
 * them (`src/terminal/state.rs` `accept_hook_report`: per source, a report with a `seq` at or below
 * the last one taken is ignored, and one without `seq` only counts while no `seq` was taken).
 */
function agentReport(
  method: string,
  params: Record<string, unknown>,
  find: (paneId: string) => FakePane | undefined,
  notFound: (paneId: string) => WireReply,
  fail: (code: string, message: string) => WireReply,
  ok: (result: Record<string, unknown>) => WireReply,
): WireReply {
  const paneId = field(params, "pane_id");
  const source = field(params, "source");
  const agent = field(params, "agent");
  const state = method === "pane.report_agent" ? field(params, "state") : undefined;
  if (state !== undefined && !AGENT_STATES.includes(state)) {
    throw new BadRequest(
      `unknown variant \`${state}\`, expected one of idle, working, blocked, unknown`,
    );
  }
  const seq = params.seq;
  if (seq !== undefined && (typeof seq !== "number" || !Number.isSafeInteger(seq) || seq < 0)) {
    throw new BadRequest("invalid type for `seq`, expected u64");
  }
  const p = find(paneId);
  if (!p) return notFound(paneId);
  if (agent.trim() === "") return fail("invalid_agent", "agent label must not be empty");
  const last = p.reportSeq?.[source];
  const taken = seq === undefined ? last === undefined : last === undefined || seq > last;
  if (!taken) return ok({ type: "ok" });
  if (seq !== undefined) (p.reportSeq ??= {})[source] = seq;
  const sessionId = optional(params, "agent_session_id");
  if (method === "pane.report_agent") {
    const message = optional(params, "message");
    p.agent = {
      source,
      agent: agent.trim(),
      state: state as FakeAgent["state"],
      ...(message === undefined ? {} : { message }),
      ...(sessionId ?? p.agent?.sessionId ? { sessionId: sessionId ?? p.agent?.sessionId } : {}),
    };
  } else if (method === "pane.report_agent_session") {
    if (p.agent && p.agent.source === source && sessionId !== undefined) {
      p.agent.sessionId = sessionId;
    }
  } else if (p.agent?.source === source && p.agent.agent === agent.trim()) {
    delete p.agent;
  }
  return ok({ type: "ok" });
}
