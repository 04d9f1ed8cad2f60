/**
 * Opening a child's pane, the I/O behind the machine's `await_ready` and `spawn` effects: wait
 * until the server knows the child, then spawn the pane with its pending record written first.
 * Each returns what happened as the event to feed back; nothing here decides what follows.
 *
 * @module
 */

import type { SpawnRequest } from "../backend/backend.ts";
import { lineById, type OpencodeLine } from "../opencode/line.ts";
import { V1 } from "../opencode/v1/line.ts";
import { waitUntilReady } from "../opencode/readiness.ts";
import { newSpawnToken } from "../backend/spawn_token.ts";
import { type MuxError, toMuxError } from "../sys/errors.ts";
import type { Processes } from "../sys/processes.ts";
import { validateDirectory } from "../sys/validate.ts";
import type { SkipReason } from "./events.ts";
import { type LostSpawn, spawnRecorded } from "./lost_spawns.ts";
import { type MachineEvent, type SessionRecord, viewOf } from "./machine/mod.ts";
import { attachingLine, holdArgv } from "./pane_program.ts";
import { paneStatus, recordStatus } from "./pane_status.ts";
import type { LoopEnv, PaneHandle } from "./session.ts";

/** Why a child cannot have a pane now, with a hint. */
export interface Skip {
  /** The skip reason. */
  skip: SkipReason;
  /** What a user can do about it. */
  hint: string;
}

/**
 * The directory a child's pane starts in and its server calls are scoped to: its own, else the
 * bridge's (`warn`: say so when its own is unusable).
 *
 * @param record The child.
 * @param env The loop's context and deps.
 * @param warn Log when the child's own directory cannot be used.
 * @returns An absolute, safe directory.
 */
export function directoryOf(record: SessionRecord, env: LoopEnv, warn = false): string {
  if (record.directory) {
    try {
      return validateDirectory(record.directory);
    } catch (err) {
      if (warn) {
        env.deps.log.warn(`${record.id}: ${(err as Error).message}; using ${env.ctx.directory}`);
      }
    }
  }
  return env.ctx.directory;
}

/**
 * The OpenCode line of the server a child's pane shows: as the plugin said, else as the client
 * found on its first answer (readiness comes first), else 1.x.
 *
 * @param env The loop's context and deps.
 * @returns The line.
 */
export function lineOfServer(env: LoopEnv): OpencodeLine {
  if (env.ctx.line !== undefined) return lineById(env.ctx.line);
  return env.client()?.line ?? V1;
}

/**
 * Builds the spawn request for a child, or the reason there can be none.
 *
 * @param record The child.
 * @param env The loop's context and deps.
 * @returns The request (its token is added by the spawn), or why the child gets no pane.
 */
export function paneRequest(
  record: SessionRecord,
  env: LoopEnv,
): Omit<SpawnRequest, "token"> | Skip {
  const { ctx } = env;
  if (!ctx.backend) {
    return {
      skip: ctx.noBackend?.reason ?? "no_backend",
      hint: ctx.noBackend?.hint ?? "Run OpenCode inside a supported multiplexer or set backend",
    };
  }
  if (!ctx.serverUrl) {
    return {
      skip: "server_unreachable",
      hint:
        "No server URL is known: run `muxbridge install` so the OpenCode plugin sends one in bridge.hello, or pass --url",
    };
  }
  const dir = directoryOf(record, env, true);
  const program = lineOfServer(env).pane({
    bin: env.config.opencode_bin,
    url: ctx.serverUrl,
    sessionId: record.id,
    dir,
    ...(ctx.auth ? { auth: ctx.auth } : {}),
    ownsTitle: ctx.backend.capabilities.title,
  });
  if (Object.keys(program.env).length > 0 && !ctx.backend.capabilities.env) {
    return {
      skip: "auth_unsupported",
      hint:
        `${ctx.backend.name} cannot pass the server password to a pane without exposing it: use a pane provider that promises \`env\`, or a built-in backend (each passes it privately)`,
    };
  }
  return {
    sessionId: record.id,
    title: record.title,
    argv: program.argv,
    cwd: dir,
    env: program.env,
    owner: env.deps.owner,
  };
}

/**
 * Waits until the server knows the child, so that its pane does not attach too early.
 *
 * @param record The child (awaiting).
 * @param env The loop's context and deps.
 * @param signal Ends the wait (a delete or shutdown).
 * @returns `ready` or `unready`, or null when the wait was ended (the machine moved on).
 */
export async function awaitReadiness(
  record: SessionRecord,
  env: LoopEnv,
  signal: AbortSignal,
): Promise<MachineEvent | null> {
  const pre = paneRequest(record, env);
  if ("skip" in pre) return { type: "unready", reason: pre.skip, hint: pre.hint };
  const client = env.client();
  if (!client) return { type: "ready" };
  const outcome = await waitUntilReady({
    client,
    sessionId: record.id,
    directory: pre.cwd,
    clock: env.deps.clock,
    timeoutMs: env.config.readiness_timeout_ms,
    signal,
    versions: env.versions,
  });
  if (signal.aborted) return null;
  if (outcome.ok) {
    env.deps.log.debug(`${record.id}: server knows the session after ${outcome.waitedMs} ms`);
    return { type: "ready" };
  }
  env.deps.log.warn(`${record.id}: no pane: ${outcome.message}`);
  return { type: "unready", reason: outcome.reason, hint: outcome.hint };
}

/** What {@linkcode openPane} gives back. */
export interface Opened {
  /** `spawned` or `spawn_failed`. */
  event: MachineEvent;
  /** The pane, when it opened. */
  pane?: PaneHandle;
  /** A failed spawn whose pane may still show up. */
  lost?: LostSpawn;
}

/**
 * Spawns a child's pane, its pending record written first (`spawnRecorded`). The pane opens
 * with its title and live-state marker as they are now, and runs the attach command inside the
 * start command that names the child until the attach command draws and holds the pane on a
 * failure (`pane_program.ts`), whose exit file is named by the spawn token.
 *
 * @param record The child (opening).
 * @param env The loop's context and deps.
 * @returns The event, with the pane or the lost spawn to attach to the session.
 */
export async function openPane(record: SessionRecord, env: LoopEnv): Promise<Opened> {
  const req = paneRequest(record, env);
  if ("skip" in req) {
    const skip = { reason: req.skip, hint: req.hint };
    return { event: { type: "spawn_failed", code: req.skip, message: req.hint, skip } };
  }
  const { deps, ctx } = env;
  const backend = ctx.backend!;
  const openedAt = () => new Date(deps.clock.now()).toISOString();
  const line = lineOfServer(env);
  const fields = {
    sessionId: record.id,
    title: record.title,
    owner: deps.owner,
    ...(ctx.serverUrl ? { server: ctx.serverUrl } : {}),
    directory: req.cwd,
    // 1.x records leave it out, as every record before 2.x support did.
    ...(line.id === 1 ? {} : { opencode: line.id }),
  };
  const view = viewOf(record, { statusInTitle: env.config.status_in_title });
  const token = newSpawnToken();
  let exitFile: string | undefined;
  try {
    exitFile = deps.store.exitFile(token);
  } catch (err) {
    deps.log.warn(
      `${record.id}: a failure of its pane will not be seen: ${(err as Error).message}`,
    );
  }
  const program = holdArgv(req.argv, {
    holdMs: env.config.failed_pane_hold_ms,
    slackMs: env.config.poll_interval_ms,
    ...(exitFile === undefined ? {} : { exitFile }),
    ownsTitle: backend.capabilities.title,
    banner: attachingLine(record.title, record.id, ctx.serverUrl!),
  });
  const spawned = await spawnRecorded(
    backend,
    { ...req, argv: program, title: view.title, status: paneStatus(view, record.id) },
    { ...fields, openedAt: openedAt() },
    {
      store: deps.store,
      clock: deps.clock,
      processes: deps.processes,
      graceMs: env.config.close_grace_ms,
      survivorGraceMs: env.config.survivor_grace_ms,
      log: deps.log,
    },
    token,
  );
  if (!spawned.ok) {
    const e = toMuxError(spawned.error);
    deps.log.warn(`${record.id}: cannot open pane: ${e.message}`);
    const { outcome, pending } = spawned;
    // The multiplexer may still make the pane: the watch looks again, and so does `bye`.
    const lost = outcome.kind === "unresolved" || (outcome.kind === "none" && outcome.kept);
    const skip = skipFor(e);
    return {
      event: {
        type: "spawn_failed",
        code: e.code,
        message: e.message,
        ...(skip ? { skip: { reason: skip, hint: e.hint ?? e.message } } : {}),
        ...(lost ? { lost: true } : {}),
      },
      ...(lost ? { lost: { backend, record: pending } } : {}),
    };
  }
  const { pane, pending, instance } = spawned;
  const { paneId } = pane;
  return {
    event: {
      type: "spawned",
      paneId,
      backend: backend.name,
      pending: pending.paneId,
      view,
      ...(pane.arranged ? { arranged: true } : {}),
    },
    pane: {
      backend,
      record: {
        ...fields,
        paneId,
        backend: backend.name,
        openedAt: openedAt(),
        token,
        ...(instance ? { instance } : {}),
        status: recordStatus(view),
        ...programOf(deps.processes, pane.pid),
      },
    },
  };
}

/** A new pane's program, kept only with evidence it is the pane's (it still runs). */
function programOf(processes: Processes, pid: number | undefined): {
  pid?: number;
  pidStart?: string;
} {
  // A program that already ended leaves a pid the system may hand out again: drop it.
  if (pid === undefined || !processes.alive(pid)) return {};
  const start = processes.startTime(pid);
  return start === undefined ? { pid } : { pid, pidStart: start };
}

/** The skip reason an open failure maps to, when the child simply cannot have a pane now. */
function skipFor(err: MuxError): SkipReason | undefined {
  switch (err.code) {
    case "no_space":
    case "auth_unsupported":
    case "unsupported_version":
    case "backend_unreachable":
      return err.code;
    case "no_backend":
    case "binary_not_found":
      return "no_backend";
    case "invalid_argument":
      return "invalid_id";
    default:
      return undefined;
  }
}
