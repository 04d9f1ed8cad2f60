/**
 * Reclaims panes left behind by a bridge that is gone: a recorded pane whose owner process is
 * dead is closed when its session is deleted, idle, or on a server that does not answer, and
 * kept while the session is busy or the server refuses the credentials (then nothing can be
 * told). Panes of a live owner are never touched; `cli` panes only with `all`. Both
 * `muxbridge cleanup` and a starting bridge run it.
 *
 * Ownership needs a record: multiplexer marks (tmux pane options, kitty user vars) can be set by
 * any program that talks to the multiplexer, so a marked pane without a record is reported and
 * kept, never closed. And a record needs the live pane to be provably the one it names
 * (`pane_proof.ts`: the same multiplexer instance, the recorded program): a restarted server
 * hands out the same ids again. A pane that is not provably the recorded one is left alone and
 * its record retired (removed, logged with the reason); a record written before records named
 * their instance is retired the same way, the log saying so once per pass. The pane the caller
 * runs in is never closed. Credentials go only to the origin they were given for
 * (`CleanupDeps.grant`): a record naming another server is asked without them.
 *
 * @module
 */

import type { Backend } from "../backend/backend.ts";
import type { Clock } from "../sys/clock.ts";
import { closePane, interruptOf } from "./close_pane.ts";
import { toMuxError } from "../sys/errors.ts";
import type { Logger } from "../sys/log.ts";
import type { OpencodeClient } from "../opencode/client.ts";
import type { Credentials } from "../opencode/credentials.ts";
import { type CredentialGrant, credentialsFor } from "../opencode/origin.ts";
import type { PaneRecord, PaneStore } from "./pane_store.ts";
import { ownerAlive, type Processes } from "../sys/processes.ts";
import { isPending, type PendingRecord, resolveLostSpawn } from "./lost_spawns.ts";
import { currentInstance } from "../backend/instance.ts";
import { LEGACY_REASON, type PaneProof, provePane } from "./pane_proof.ts";

/** One pane cleanup looked at, and what it decided. */
export interface CleanupEntry {
  /** The pane. */
  paneId: string;
  /** Its backend. */
  backend: string;
  /** Its session. */
  sessionId: string;
  /** Why it was closed or kept. */
  reason: string;
}

/** What cleanup did. */
export interface CleanupReport {
  /** Panes closed (or, in a dry run, that would be). */
  closed: CleanupEntry[];
  /** Panes kept. */
  kept: CleanupEntry[];
  /**
   * Records retired: the live pane with the recorded id is not provably the recorded one (the
   * reason says why); the pane was left alone and the record removed (in a dry run, would be).
   */
  retired: CleanupEntry[];
  /**
   * Of the kept panes, those of a dead owner whose session is busy: a bridge takes them over
   * (`SessionLoop.adopt`) so they close when the session goes idle.
   */
  adoptable: Array<{ record: PaneRecord; parentId?: string }>;
}

/** What cleanup needs. */
export interface CleanupDeps {
  /** The record store. */
  store: PaneStore;
  /** Backends by name (only those usable here); a record of another backend is kept. */
  backends: Partial<Record<string, Backend>>;
  /** The process seam. */
  processes: Processes;
  /**
   * A server client for a recorded server URL (null: none can be built), with the credentials
   * cleanup decided to send (none for an origin other than the grant's).
   */
  client(serverUrl: string, auth: Credentials | undefined): OpencodeClient | null;
  /** The credentials and the one server origin they were given for. */
  grant?: CredentialGrant;
  /**
   * The credentials an OpenCode 2.x service's own private state file gives for exactly this
   * server's origin (a record of a 2.x pane names the service), for a record the grant does not
   * cover.
   */
  serviceAuth?(serverUrl: string): Credentials | undefined;
  /** The panes the caller itself runs in (by backend); never closed. */
  callerPanes?: ReadonlyArray<{ backend: string; paneId: string }>;
  /** The clock. */
  clock: Clock;
  /** Logs. */
  log: Logger;
  /** `close_grace_ms`. */
  graceMs: number;
  /** `survivor_grace_ms`. @default graceMs */
  survivorGraceMs?: number;
}

/** Options of {@linkcode runCleanup}. */
export interface CleanupOptions {
  /** Decide and report, close nothing. */
  dryRun: boolean;
  /** Include panes opened by `muxbridge spawn` (owner `cli`). */
  all: boolean;
  /** Never touch panes of this owner (the bridge running the cleanup). */
  self?: string;
  /** Told of each unreadable record (already moved aside); it is also logged. */
  onCorrupt?: (entry: { file: string; reason: string }) => void;
}

/**
 * How long a cleanup waits for the server's answer about one session. No answer means the pane is
 * closed as unreachable, so a slow server must not decide it: OpenCode 1.x's TUI server answered
 * nothing for over 2 s while a child streamed (a restarted bridge then closed the busy child's
 * pane instead of adopting it). A server that is gone refuses at once; only a hung one waits.
 */
const VERDICT_TIMEOUT_MS = 10_000;

type Verdict = { close: boolean; reason: string; busy?: { parentId?: string } };

async function sessionVerdict(
  record: Pick<PaneRecord, "sessionId" | "server" | "directory">,
  deps: CleanupDeps,
): Promise<Verdict> {
  if (!record.server) return { close: true, reason: "owner gone, no server recorded" };
  const auth = credentialsFor(record.server, deps.grant) ?? deps.serviceAuth?.(record.server);
  const client = deps.client(record.server, auth);
  if (!client) return { close: true, reason: "owner gone, server unusable" };
  // The status map and the lookup are per project directory (docs/opencode.md).
  const call = {
    ...(record.directory ? { directory: record.directory } : {}),
    timeoutMs: VERDICT_TIMEOUT_MS,
  };
  try {
    const session = await client.session(record.sessionId, call);
    if (session === null) return { close: true, reason: "session deleted" };
    const status = (await client.statusMap(call)).get(record.sessionId);
    return status !== undefined && status.status !== "idle"
      ? {
        close: false,
        reason: "session busy",
        busy: session.parentID ? { parentId: session.parentID } : {},
      }
      : { close: true, reason: "session idle" };
  } catch (err) {
    const e = toMuxError(err);
    // A server that answers but refuses the credentials may well run the session: keep it.
    if (e.code === "auth_failed") {
      return {
        close: false,
        reason: auth || !deps.grant
          ? "auth_failed: the server refused the credentials; session state unknown"
          : `auth_failed: the server asks for credentials, which are only sent to ${deps.grant.origin}; session state unknown`,
      };
    }
    return { close: true, reason: `server unreachable (${e.code})` };
  }
}

/**
 * Runs a cleanup pass.
 *
 * @param deps Store, backends, processes, server clients.
 * @param options Dry run, all, self.
 * @returns What was closed and kept, each with its reason.
 */
export async function runCleanup(
  deps: CleanupDeps,
  options: CleanupOptions,
): Promise<CleanupReport> {
  const report: CleanupReport = { closed: [], kept: [], retired: [], adoptable: [] };
  const { records, corrupt } = deps.store.list();
  for (const c of corrupt) {
    deps.log.warn(`set aside unreadable record ${c.file}: ${c.reason}`);
    options.onCorrupt?.(c);
  }
  const seen = new Set<string>();

  // A record goes with its program's failure report, if any.
  const forget = (record: PaneRecord) => {
    deps.store.remove(record.backend, record.paneId);
    if (record.token !== undefined) deps.store.removeExit(record.token);
  };
  // One reading of each backend's instance per pass, however many records name it.
  const instances = new Map<Backend, ReturnType<typeof currentInstance>>();
  const instanceOf = (backend: Backend) => {
    let read = instances.get(backend);
    if (!read) instances.set(backend, read = currentInstance(backend, deps.processes));
    return read;
  };
  const legacy: CleanupEntry[] = [];
  const retire = (record: PaneRecord, proof: Extract<PaneProof, { proven: false }>) => {
    const entry = {
      paneId: record.paneId,
      backend: record.backend,
      sessionId: record.sessionId,
      reason: proof.reason,
    };
    if (!options.dryRun) forget(record);
    report.retired.push(entry);
    if (proof.legacy) legacy.push(entry);
    else {
      deps.log.warn(
        `left ${entry.backend} pane ${entry.paneId} alone and ${
          options.dryRun ? "would retire" : "retired"
        } its record (${entry.sessionId}): ${entry.reason}`,
      );
    }
  };
  const decide = async (record: PaneRecord) => {
    const entry = { paneId: record.paneId, backend: record.backend, sessionId: record.sessionId };
    const owner = record.owner;
    const keep = (reason: string) => report.kept.push({ ...entry, reason });
    if (
      deps.callerPanes?.some((p) => p.backend === entry.backend && p.paneId === entry.paneId)
    ) {
      deps.log.warn(
        `kept ${entry.backend} pane ${entry.paneId}: a record names the pane muxbridge runs in`,
      );
      return keep("the pane muxbridge runs in");
    }
    if (owner === options.self) return keep("owned by this bridge");
    if (owner === "cli" && !options.all) return keep("opened by `muxbridge spawn`; use --all");
    if (owner !== "cli" && ownerAlive(deps.processes, owner)) return keep("owner running");
    const backend = deps.backends[entry.backend];
    if (!backend) return keep(`${entry.backend} not available here`);
    let info;
    try {
      info = await backend.inspect(entry.paneId);
    } catch (err) {
      return keep(`cannot inspect: ${toMuxError(err).message}`);
    }
    const close = () =>
      closePane(backend, entry.paneId, {
        graceMs: deps.graceMs,
        ...(deps.survivorGraceMs === undefined ? {} : { survivorGraceMs: deps.survivorGraceMs }),
        clock: deps.clock,
        processes: deps.processes,
        pid: record.pid,
        pidStart: record.pidStart,
        token: record.token,
        interrupt: interruptOf(record),
      });
    if (info === null) {
      if (!options.dryRun) {
        // The pane went away (closed by hand?) but its program may have survived it.
        try {
          await close();
        } catch (err) {
          return keep(`program survived its pane: ${toMuxError(err).message}`);
        }
        forget(record);
      }
      report.closed.push({ ...entry, reason: "already gone" });
      return;
    }
    // The id exists; whether it is still the pane this record names is another question.
    let proof: PaneProof;
    try {
      proof = await provePane(backend, record, info, {
        processes: deps.processes,
        instance: () => instanceOf(backend),
      });
    } catch (err) {
      return keep(`cannot tell whether the pane is the recorded one: ${toMuxError(err).message}`);
    }
    if (!proof.proven) return retire(record, proof);
    const verdict = await sessionVerdict(record, deps);
    if (!verdict.close) {
      if (verdict.busy) report.adoptable.push({ record, ...verdict.busy });
      return keep(verdict.reason);
    }
    if (!options.dryRun) {
      try {
        await close();
        forget(record);
      } catch (err) {
        return keep(`close failed: ${toMuxError(err).message}`);
      }
    }
    report.closed.push({ ...entry, reason: verdict.reason });
  };

  for (const record of records) {
    if (isPending(record)) {
      await resolvePending(record, deps, options, report);
      continue;
    }
    seen.add(`${record.backend}\0${record.paneId}`);
    await decide(record);
  }
  if (legacy.length > 0) {
    deps.log.warn(
      `left ${legacy.length} pane(s) alone and ${
        options.dryRun ? "would retire" : "retired"
      } their records (${
        legacy.map((e) => `${e.backend} ${e.paneId}`).join(", ")
      }): ${LEGACY_REASON}`,
    );
  }
  // Panes that carry marks but no record: marks are hints anyone on the multiplexer can set,
  // never proof of ownership. Reported, never closed.
  for (const backend of Object.values(deps.backends)) {
    if (!backend?.capabilities.marks) continue;
    let marked;
    try {
      marked = await backend.listOwned();
    } catch (err) {
      deps.log.warn(`cannot list ${backend.name} panes: ${toMuxError(err).message}`);
      continue;
    }
    for (const pane of marked) {
      if (seen.has(`${backend.name}\0${pane.paneId}`) || !pane.sessionId) continue;
      report.kept.push({
        paneId: pane.paneId,
        backend: backend.name,
        sessionId: pane.sessionId,
        reason: "marked but not recorded: marks alone never make a pane muxbridge's",
      });
    }
  }
  return report;
}

/**
 * A pending record (a spawn that never finished) of an owner that is gone: the pane it may have
 * made is found by its token and closed, and the record removed (see `lost_spawns.ts`). A live
 * owner's spawn is still in flight and left alone.
 */
async function resolvePending(
  record: PendingRecord,
  deps: CleanupDeps,
  options: CleanupOptions,
  report: CleanupReport,
): Promise<void> {
  const entry = { paneId: record.paneId, backend: record.backend, sessionId: record.sessionId };
  const keep = (reason: string) => void report.kept.push({ ...entry, reason });
  if (record.owner === options.self) return keep("a spawn of this bridge");
  if (record.owner === "cli" && !options.all) return keep("a `muxbridge spawn`; use --all");
  if (record.owner !== "cli" && ownerAlive(deps.processes, record.owner)) {
    return keep("spawn in progress");
  }
  const backend = deps.backends[record.backend];
  if (!backend) return keep(`${record.backend} not available here`);
  const reason = "left by a spawn whose answer was lost";
  if (options.dryRun) {
    try {
      for (const pane of await backend.findSpawned(record.token)) {
        report.closed.push({ ...entry, paneId: pane.paneId, reason });
      }
    } catch (err) {
      keep(`cannot look for the pane: ${toMuxError(err).message}`);
    }
    return;
  }
  const outcome = await resolveLostSpawn(backend, record, {
    store: deps.store,
    clock: deps.clock,
    processes: deps.processes,
    graceMs: deps.graceMs,
    ...(deps.survivorGraceMs === undefined ? {} : { survivorGraceMs: deps.survivorGraceMs }),
    log: deps.log,
  }, true);
  if (outcome.kind === "unresolved") return keep(outcome.reason);
  if (outcome.kind === "closed") {
    for (const paneId of outcome.panes) report.closed.push({ ...entry, paneId, reason });
  }
}
