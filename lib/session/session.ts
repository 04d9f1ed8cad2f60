/**
 * One child session at run time — the machine's record and what the loop holds for it — and
 * what the loop runs with: its context (backend, server, directory) and its dependencies.
 *
 * @module
 */

import type { Backend } from "../backend/backend.ts";
import type { Config } from "../config/config.ts";
import type { Credentials } from "../opencode/credentials.ts";
import type { LineId } from "../opencode/line.ts";
import type { OpencodeClient } from "../opencode/client.ts";
import type { Clock, TimerId } from "../sys/clock.ts";
import type { Runner } from "../sys/exec.ts";
import type { Logger } from "../sys/log.ts";
import type { Processes } from "../sys/processes.ts";
import type { PaneMessage, SkipReason } from "./events.ts";
import type { LostSpawn } from "./lost_spawns.ts";
import type { PaneBell } from "./pane_bell.ts";
import type { SessionRecord } from "./machine/mod.ts";
import type { PaneRecord, PaneStore } from "./pane_store.ts";
import type { Claims } from "./views.ts";

/** The pane a session holds: the backend that opened it and its durable record. */
export interface PaneHandle {
  /** The backend that opened (or adopted) it; a later `bridge.hello` does not change it. */
  readonly backend: Backend;
  /**
   * The record the store holds for it, with the pane program's pid and start stamp (kept only
   * while the program ran when the pane opened, so a reused pid is never signalled), its spawn
   * token (its program's failed exit is reported under it) and the status last shown.
   */
  readonly record: PaneRecord;
}

/** One child session: the machine's record and its runtime attachments. */
export interface Session {
  /** The machine's record (pure data; only transitions replace it). */
  record: SessionRecord;
  /** The session's timer (an idle close due, a close retry, the end of a failed pane's hold). */
  timer: TimerId | null;
  /** The status timer: the pane's next view waits for it (the rate limit). */
  statusTimer: TimerId | null;
  /** Its pane, while it has one. */
  pane: PaneHandle | null;
  /** Ends the readiness wait in flight. */
  readiness: AbortController | null;
  /** Its failed spawns that may still make a pane. */
  lostSpawns: LostSpawn[];
}

/**
 * A session with nothing attached yet.
 *
 * @param record The machine's record.
 * @returns The session.
 */
export function newSession(record: SessionRecord): Session {
  return { record, timer: null, statusTimer: null, pane: null, readiness: null, lostSpawns: [] };
}

/** Where panes go and what they attach to; replaced by a `bridge.hello`. */
export interface LoopContext {
  /** The backend, or null when none is usable. */
  backend: Backend | null;
  /** Why there is no backend (for `pane.skipped`). */
  noBackend?: { reason: SkipReason; hint: string };
  /** The OpenCode server URL (normalised), or null when none was given. */
  serverUrl: string | null;
  /** The bridge's directory: the fallback for a child without one. */
  directory: string;
  /** Credentials for the server; they reach panes only through the backend's environment. */
  auth?: Credentials;
  /** The server's OpenCode line when the plugin said it; otherwise the client finds it out. */
  line?: LineId;
  /**
   * Which children are this bridge's: `server`, every child on the server (OpenCode 1.x: the
   * server is the TUI's own); `tui`, only children of sessions the plugin's TUI showed
   * (`bridge.view`; OpenCode 2.x: one service serves every TUI of the user).
   */
  scope?: "server" | "tui";
}

/** What the loop is built from. */
export interface SessionLoopDeps {
  /** The clock. */
  clock: Clock;
  /** Logs. */
  log: Logger;
  /** Writes one report. */
  emit: (message: PaneMessage) => void;
  /** The resolved config (a `bridge.hello` may replace it: `SessionLoop.setContext`). */
  config: Config;
  /** Durable pane records. */
  store: PaneStore;
  /** The process seam (surviving pane programs). */
  processes: Processes;
  /** The owner stamp written into marks and records. */
  owner: string;
  /**
   * Builds a client for the OpenCode server. With it the loop waits for readiness before a pane
   * attaches, polls `/session/status` while children are tracked, and rechecks a child before an
   * idle close; without it (tests, the demo) none of these happen.
   */
  server?: (url: string, auth?: Credentials, line?: LineId) => OpencodeClient;
  /**
   * Claims shared by the bridges of one user: which bridge's TUI showed a parent session last
   * (`scope: "tui"`). Without it a bridge counts only its own views.
   */
  claims?: Claims;
  /** Runs `attention_command` (the exec seam); without it the command never runs. */
  run?: Runner;
  /** Rings a pane's terminal bell (`attention_bell`); without it no bell rings. */
  bell?: PaneBell;
}

/** What the effect runners work with: the loop's deps, its current context, config and client. */
export interface LoopEnv {
  /** The loop's dependencies. */
  readonly deps: SessionLoopDeps;
  /** The current context. */
  readonly ctx: LoopContext;
  /** The current config. */
  readonly config: Config;
  /** The client of the current server, or null without a server URL or client factory. */
  client(): OpencodeClient | null;
  /** Server versions already read, by server URL (see `waitUntilReady`). */
  readonly versions: Map<string, string | null>;
}
