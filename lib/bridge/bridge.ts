/**
 * Bridge mode: NDJSON events in, NDJSON protocol lines out, the session loop in between.
 *
 * `ready` is written before stdin is read; every unusable line gets exactly one `error` line and
 * the bridge goes on; `bye` is always the last line, after owned panes are closed, whether input
 * ended, `bridge.shutdown` arrived or a signal came. Right after `ready` the bridge reclaims panes
 * that a bridge which is gone left behind (`pane.closed` with reason `orphan`), alongside reading
 * input.
 *
 * @module
 */

import type { Credentials } from "../opencode/credentials.ts";
import { type LineId, lineOf } from "../opencode/line.ts";
import { type CredentialGrant, credentialsFor } from "../opencode/origin.ts";
import { type HeldCredentials, helloCredentials, startCredentials } from "./_credentials.ts";
import type { Backend } from "../backend/backend.ts";
import type { CleanupReport } from "../session/cleanup.ts";
import type { Config } from "../config/config.ts";
import { toMuxError } from "../sys/errors.ts";
import { readLineBatches } from "../sys/line_reader.ts";
import type { Logger } from "../sys/log.ts";
import {
  type Hello,
  type Inbound,
  MAX_LINE_BYTES,
  type OutMessage,
  parseLine,
  PROTOCOL_VERSION,
} from "./protocol.ts";
import type { Selection } from "../backend/select.ts";
import { type LoopContext, SessionLoop, type SessionLoopDeps } from "../session/loop.ts";
import type { BridgeIO } from "../sys/stdio.ts";
import { normalizeServerUrl, validateDirectory } from "../sys/validate.ts";

export type { BridgeIO } from "../sys/stdio.ts";

/** Where the bridge starts from, before any `bridge.hello`. */
export interface BridgeStart {
  /** `--url`, if given. */
  url?: string;
  /** `--dir`, else the current directory. */
  directory: string;
  /**
   * Credentials from the environment (`OPENCODE_SERVER_USERNAME`/`PASSWORD`). They belong to
   * `url`'s server; without `url`, to the server the first `bridge.hello` names.
   */
  auth?: { username: string; password: string };
}

/** What the bridge is built from. */
export interface BridgeDeps {
  /** I/O. */
  io: BridgeIO;
  /** Logs (stderr or a file, never stdout). */
  log: Logger;
  /** muxbridge's version. */
  version: string;
  /** The starting point. */
  start: BridgeStart;
  /** Resolves the config with a hello's `config` layer on top (undefined: none). */
  resolveConfig(helloConfig?: unknown): Config;
  /** Chooses and probes the backend for a config. */
  select(config: Config): Promise<Selection>;
  /**
   * Credentials the bridge finds itself for a server of this line when a hello brings none: for
   * 2.x, `OPENCODE_PASSWORD` (or `OPENCODE_SERVER_PASSWORD`) from the environment, else the
   * service's own state file (the returned object follows the service's restarts). Absent:
   * nothing is found.
   */
  discover?(url: string, line: LineId): Credentials | undefined;
  /** Builds the loop's dependencies for a config (store, clock, processes, owner…). */
  loopDeps(config: Config, emit: (message: OutMessage) => void): SessionLoopDeps;
  /**
   * Reclaims panes of dead owners on this backend (`runCleanup` with this bridge as `self`);
   * absent: no start-up cleanup. The credentials may go only to the grant's origin.
   */
  reclaim?(
    backend: Backend,
    grant: CredentialGrant | undefined,
    onCorrupt: (entry: { file: string; reason: string }) => void,
  ): Promise<CleanupReport>;
}

/** Bridge state between lines (the loop context is `loop.context`). */
interface BridgeState {
  config: Config;
  selection: Selection;
  loop: SessionLoop;
  /** The credentials held and the server origin each may go to. */
  credentials: HeldCredentials;
}

/**
 * Runs bridge mode until input ends, `bridge.shutdown` arrives or a signal comes.
 *
 * @param deps I/O, logging, config and backend selection.
 * @returns The exit code (0 after `bye`).
 */
export async function runBridge(deps: BridgeDeps): Promise<number> {
  const { io, log } = deps;
  const emit = (message: OutMessage) => io.write(`${JSON.stringify(message)}\n`);
  let ignored = 0;

  const config = deps.resolveConfig();
  const selection = await deps.select(config);
  const server = startServer(deps.start, log);
  const held = startCredentials(server.url, deps.start.auth);
  const ctx = contextFor(
    selection,
    server.url,
    deps.start.directory,
    credentialsFor(server.url, held.grant),
    { scope: "server" },
  );
  const state: BridgeState = {
    config,
    selection,
    loop: new SessionLoop(deps.loopDeps(config, emit), ctx),
    credentials: held,
  };
  let stopping = false;
  let stop!: (why: string) => void;
  const stopped = new Promise<string>((resolve) => (stop = resolve));
  // Handlers first, then `ready`: a client may signal as soon as it reads `ready`, and a signal
  // landing before the handler exists kills the process without `bye` (observed: SIGHUP right
  // after `ready` killed ~2 of 3 such processes under Deno and under Bun).
  const unsubscribe = io.onSignal((signal) => stop(signal));
  emitReady(emit, deps.version, selection);
  // `ready` is always first: a start URL the caller did not check is reported after it.
  if (server.error) {
    emit({ type: "error", code: "invalid_config", message: server.error, line: null });
  }
  const reclaiming = reclaim(deps, selection, held.grant, emit, () => state.loop);

  const reading = (async () => {
    // Lines come in batches (one per input chunk): the hot path for noise is a plain loop.
    for await (const batch of readLineBatches(io.input, MAX_LINE_BYTES)) {
      for (const item of batch) {
        if (stopping) return "stopping";
        if (item.kind === "too_long") {
          emit({
            type: "error",
            code: "line_too_long",
            message:
              `Cannot use line: ${item.bytes} bytes is over the ${MAX_LINE_BYTES}-byte limit`,
            line: item.lineNo,
          });
          continue;
        }
        if (item.kind === "bad_utf8") {
          emit({
            type: "error",
            code: "invalid_utf8",
            message: "Cannot use line: not valid UTF-8",
            line: item.lineNo,
          });
          continue;
        }
        if (isBlank(item.line)) continue;
        const inbound = parseLine(item.line);
        if (inbound.kind === "ignored") {
          ignored++;
          continue;
        }
        if (inbound.kind === "shutdown") return "bridge.shutdown";
        await handle(deps, state, inbound, item.lineNo, emit);
      }
    }
    return "end of input";
  })();

  const why = await Promise.race([reading, stopped]);
  stopping = true;
  unsubscribe();
  log.info(`shutting down (${why}); ${ignored} events of other types ignored`);
  await reclaiming;
  let closed = 0;
  try {
    closed = await state.loop.shutdown(state.config.close_on_exit);
  } catch (err) {
    log.error(`shutdown failed: ${(err as Error).stack ?? err}`);
  }
  if (state.selection.ok) await state.selection.backend.dispose?.();
  emit({ type: "bye", closed });
  await io.flush();
  return 0;
}

/** Start-up cleanup; never throws, reports each reclaimed pane and each unreadable record. */
async function reclaim(
  deps: BridgeDeps,
  selection: Selection,
  grant: CredentialGrant | undefined,
  emit: (m: OutMessage) => void,
  loop: () => SessionLoop,
): Promise<void> {
  if (!deps.reclaim || !selection.ok) return;
  try {
    const report = await deps.reclaim(selection.backend, grant, (c) =>
      emit({
        type: "error",
        code: "state_corrupt",
        message: `Cannot read pane record ${c.file} (${c.reason}); it was moved aside`,
        line: null,
      }));
    for (const entry of report.closed) {
      deps.log.info(
        `reclaimed ${entry.backend} pane ${entry.paneId} (${entry.sessionId}): ${entry.reason}`,
      );
      // A record whose pane had already vanished closes nothing: no pane.closed for it.
      if (entry.reason === "already gone") continue;
      emit({
        type: "pane.closed",
        sessionID: entry.sessionId,
        paneId: entry.paneId,
        reason: "orphan",
      });
    }
    // A busy session's pane stays; this bridge takes it over so its idle closes it and its next
    // busy does not open a second one.
    for (const { record, parentId } of report.adoptable) {
      if (loop().adopt(record, parentId)) {
        deps.log.info(
          `adopted ${record.backend} pane ${record.paneId} (${record.sessionId}): session busy`,
        );
      }
    }
    for (const entry of report.kept) {
      deps.log.debug(
        `kept ${entry.backend} pane ${entry.paneId} (${entry.sessionId}): ${entry.reason}`,
      );
    }
  } catch (err) {
    deps.log.error(`start-up cleanup failed: ${(err as Error).stack ?? err}`);
  }
}

/** An empty or all-whitespace line (checked without allocating for the usual `{…` line). */
function isBlank(line: string): boolean {
  if (line.length === 0) return true;
  const c = line.charCodeAt(0);
  return c <= 32 || c === 0xa0 || c === 0xfeff || c >= 0x1680 ? line.trim() === "" : false;
}

function emitReady(emit: (m: OutMessage) => void, version: string, selection: Selection): void {
  emit(
    selection.ok
      ? { type: "ready", protocol: PROTOCOL_VERSION, version, backend: selection.backend.name }
      : {
        type: "ready",
        protocol: PROTOCOL_VERSION,
        version,
        backend: null,
        reason: `${selection.message}. ${selection.hint}`,
      },
  );
}

/** The starting server URL, normalised (null: none, or unusable: `error` says why). */
function startServer(
  start: BridgeStart,
  log: Logger,
): { url: string | null; error?: string } {
  if (start.url) {
    try {
      return { url: normalizeServerUrl(start.url).url };
    } catch (err) {
      log.error((err as Error).message);
      return { url: null, error: (err as Error).message };
    }
  }
  return { url: null };
}

/** The loop context for a selection and an already normalised server URL. */
function contextFor(
  selection: Selection,
  serverUrl: string | null,
  directory: string,
  auth: Credentials | undefined,
  served: { scope: "server" | "tui"; line?: LineId },
): LoopContext {
  const ctx: LoopContext = selection.ok
    ? { backend: selection.backend, serverUrl, directory, scope: served.scope }
    : {
      backend: null,
      noBackend: { reason: selection.reason, hint: `${selection.message}. ${selection.hint}` },
      serverUrl,
      directory,
      scope: served.scope,
    };
  if (served.line !== undefined) ctx.line = served.line;
  if (auth) ctx.auth = auth;
  return ctx;
}

async function handle(
  deps: BridgeDeps,
  state: BridgeState,
  inbound: Exclude<Inbound, { kind: "ignored" | "shutdown" }>,
  line: number,
  emit: (m: OutMessage) => void,
): Promise<void> {
  switch (inbound.kind) {
    case "invalid":
      if (inbound.skip) {
        const { sessionID, hint } = inbound.skip;
        emit({ type: "pane.skipped", sessionID, reason: "invalid_id", hint });
      }
      emit({ type: "error", code: inbound.code, message: inbound.message, line });
      return;
    case "ping":
      emit({ type: "pong", id: inbound.id });
      return;
    case "hello":
      return await hello(deps, state, inbound.hello, line, emit);
    default:
      try {
        state.loop.handle(inbound);
      } catch (err) {
        deps.log.error(`internal error on line ${line}: ${(err as Error).stack ?? err}`);
        emit({ type: "error", code: "internal", message: toMuxError(err).message, line });
      }
  }
}

async function hello(
  deps: BridgeDeps,
  state: BridgeState,
  msg: Hello,
  line: number,
  emit: (m: OutMessage) => void,
): Promise<void> {
  let config: Config;
  let url: string;
  try {
    config = msg.config === undefined ? state.config : deps.resolveConfig(msg.config);
    url = normalizeServerUrl(msg.serverUrl).url;
    validateDirectory(msg.directory);
  } catch (err) {
    const e = toMuxError(err);
    emit({
      type: "error",
      code: e.code === "invalid_config" ? "invalid_config" : "invalid_message",
      message: e.message,
      line,
    });
    return;
  }
  const before = {
    backend: state.selection.ok ? state.selection.backend.name : null,
    url: state.loop.context.serverUrl,
  };
  const reselect = msg.config !== undefined || !state.selection.ok;
  if (reselect) {
    const selection = await deps.select(config);
    if (
      state.selection.ok && (!selection.ok || selection.backend !== state.selection.backend)
    ) {
      // Open panes keep their own backend handle; only new panes use the new one.
      deps.log.info(`backend changed by bridge.hello`);
    }
    state.selection = selection;
  }
  // The OpenCode the plugin runs in names the server's line (else the client finds it out).
  const verdict = lineOf(msg.opencode);
  if (verdict.supported === false) deps.log.warn(`bridge.hello: ${verdict.hint}`);
  const lineId = verdict.supported ? verdict.line.id : undefined;
  const discovered = msg.auth || lineId === undefined ? undefined : deps.discover?.(url, lineId);
  state.credentials = helloCredentials(state.credentials, msg.auth, url, deps.log, discovered);
  const auth = credentialsFor(url, state.credentials.grant);
  const ctx = contextFor(state.selection, url, msg.directory, auth, {
    scope: msg.scope ?? "server",
    ...(lineId === undefined ? {} : { line: lineId }),
  });
  // The new config applies in full, each key from its next use (`lib/session/loop_config.ts`).
  state.loop.setContext(ctx, config);
  state.config = config;
  const after = {
    backend: state.selection.ok ? state.selection.backend.name : null,
    url: ctx.serverUrl,
  };
  if (after.backend !== before.backend || after.url !== before.url) {
    emitReady(emit, deps.version, state.selection);
  }
}
