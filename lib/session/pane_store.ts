/**
 * Durable records of the panes muxbridge owns, one file per pane under the state directory, so
 * concurrent bridges never overwrite each other's records and a `kill -9` loses nothing already
 * written (write to a fresh temporary file, rename). `list` and `cleanup` read them; a corrupt
 * file is reported and moved aside, never fatal.
 *
 * The state directory is private (`lib/sys/private_fs.ts`): created 0700, refused when another
 * user owns it or can write to it; records are opened without following symbolic links, only
 * regular files of this user are read, and every field is validated before anything acts on it
 * (a record names a pane to close, a pid to signal and a server to call).
 *
 * No fsync: a record only has to outlive the bridge process, and the kernel keeps a written file
 * when its writer dies; what an fsync adds is surviving an OS crash or power loss, which ends every
 * pane a record could name (the multiplexer's server with them). It cost 5–20 ms per pane on a
 * shared VM, serialised in the spawn queue (`bench/burst.ts`: a burst of 50 spent most of its time
 * in it). The write is otherwise the private one (`O_EXCL|O_NOFOLLOW`, 0600, rename).
 *
 * @module
 */

import { Buffer } from "node:buffer";
import { createHash } from "node:crypto";
import { readdirSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { BACKEND_NAME } from "../backend/backend.ts";
import {
  ensurePrivateDir,
  ensurePrivateSubdir,
  readPrivateFile,
  writePrivateFile,
} from "../sys/private_fs.ts";
import {
  hasUnsafeChars,
  isPaneId,
  isSessionId,
  MAX_DIRECTORY,
  type PaneId,
  type SessionId,
  validateServerUrlText,
} from "../sys/validate.ts";
import { SPAWN_TOKEN } from "../backend/spawn_token.ts";
// The states a record may show are the ones a pane shows: one list.
import { PANE_STATES } from "../backend/pane_status.ts";

/** The largest record file read; a record is a few hundred bytes. */
const MAX_RECORD_BYTES = 64 * 1024;

const safeText = (max: number) =>
  z.string().max(max).refine((v) => !hasUnsafeChars(v), "holds control or format characters");

/**
 * The child's live state in a pane's record (written at most once a second per pane, with the
 * pane's title): what `list` shows.
 *
 * @internal
 */
export const PaneStatusSchema = z.strictObject({
  state: z.enum(PANE_STATES),
  since: z.iso.datetime().describe("When the child entered this state"),
  attempt: z.number().int().min(0).max(1_000_000).optional().describe(
    "For retry: the attempt (0: not known)",
  ),
  waitingFor: z.enum(["permission", "question"]).optional().describe(
    "For waiting: what the child asks the user for",
  ),
  exitCode: z.number().int().min(1).max(255).optional().describe(
    "For failed: the exit code of the pane's program",
  ),
});

/**
 * The multiplexer instance a pane was opened on (`lib/backend/instance.ts`): a pane id means
 * something only together with it.
 *
 * @internal
 */
export const InstanceSchema = z.strictObject({
  address: z.string().min(1).max(1024).refine((v) => !hasUnsafeChars(v), "holds control characters")
    .describe("Where it is reached: socket, listen address, session"),
  pid: z.number().int().min(1).max(2 ** 22).optional().describe("Its server's pid"),
  pidStart: z.string().regex(/^\d{1,20}$/).optional().describe("That pid's start stamp"),
  startedAt: z.tuple([
    z.number().int().min(0).max(2 ** 40),
    z.number().int().min(0).max(2 ** 40),
  ]).optional().describe("When its server started: earliest and latest second since the epoch"),
  stamp: safeText(256).optional().describe("What else tells it from a later one (opaque)"),
});

/**
 * One owned pane, as recorded. Every field is checked: the pane id is safe to hand to a
 * multiplexer, the pid is one muxbridge could signal, the server an http(s) URL without
 * credentials. With `state: "pending"` it is a spawn in flight (written before the spawn runs,
 * so a pane the multiplexer makes is muxbridge's even when the spawn's answer is lost): its
 * `paneId` is `pending:<token>` until the pane is known, and the pane, if any, carries `token`
 * (see `lib/session/lost_spawns.ts`). Its ids come out typed ({@linkcode SessionId},
 * {@linkcode PaneId}): a record read back is where they enter, checked once.
 *
 * @internal
 */
export const PaneRecordSchema = z.strictObject({
  sessionId: z.custom<SessionId>((v) => typeof v === "string" && isSessionId(v), {
    error: "not a session id",
  }),
  paneId: z.custom<PaneId>((v) => typeof v === "string" && isPaneId(v), {
    error: "not a pane id",
  }),
  backend: z.string().regex(BACKEND_NAME),
  title: safeText(256),
  openedAt: z.iso.datetime(),
  owner: z.string().regex(/^(?:cli|\d{1,10}:(?:\d{1,20}|\?))$/).describe(
    '"cli", or "<pid>:<start>" of the bridge that opened it',
  ),
  server: z.string().max(2048).refine(
    validateServerUrlText,
    "not an http(s) URL without credentials",
  )
    .optional(),
  directory: safeText(MAX_DIRECTORY).refine((v) => v.startsWith("/") || /^[A-Za-z]:[\\/]/.test(v))
    .optional(),
  pid: z.number().int().min(2).max(2 ** 22).optional(),
  opencode: z.union([z.literal(1), z.literal(2)]).optional().describe(
    "The OpenCode line of the server the pane shows (absent: 1.x): how a close interrupts its program",
  ),
  pidStart: z.string().regex(/^\d{1,20}$/).optional().describe(
    "Start stamp of pid when the pane opened; a pid whose stamp differs is never signalled",
  ),
  instance: InstanceSchema.optional().describe(
    "The multiplexer instance the pane was opened on; absent in records written before muxbridge recorded instances, which are retired, never acted on",
  ),
  stuck: z.boolean().optional().describe("Every close attempt failed"),
  state: z.literal("pending").optional().describe(
    "A spawn in flight or whose answer was lost; absent: the pane is open",
  ),
  token: z.string().regex(SPAWN_TOKEN).optional().describe(
    "The spawn token the pane carries (its program's failed exit is reported under it)",
  ),
  status: PaneStatusSchema.optional().describe("What the child is doing, as its pane shows it"),
}).refine(
  (r) => r.state !== "pending" || (r.token !== undefined && r.paneId === `pending:${r.token}`),
  { message: 'A pending record has a token and the pane id "pending:<token>"' },
);

/**
 * One owned pane, as read back: its ids typed.
 *
 * @internal
 */
export type PaneRecord = z.output<typeof PaneRecordSchema>;

/**
 * A record as {@linkcode PaneStore.put} takes it: ids as plain text, since `put` checks every
 * field anyway.
 *
 * @internal
 */
export type PaneRecordInput = Omit<PaneRecord, "sessionId" | "paneId"> & {
  sessionId: string;
  paneId: string;
};

/** What {@linkcode PaneStore.list} found. */
export interface PaneListing {
  /** The readable records. */
  records: PaneRecord[];
  /**
   * Files that could not be used, each moved aside, with the reason (corrupt, or refused: a
   * symbolic link, not a regular file, another user's).
   */
  corrupt: Array<{ file: string; reason: string }>;
}

/** The record store. */
export interface PaneStore {
  /** Where the records live. */
  readonly dir: string;
  /**
   * Writes (or replaces) a record durably.
   *
   * @throws {MuxError} `invalid_config` when the state directory became unsafe.
   * @throws {z.ZodError} when the record is malformed (a bug of the caller).
   */
  put(record: PaneRecordInput): void;
  /** Removes a record; a missing one is fine. */
  remove(backend: string, paneId: string): void;
  /** Reads every record. */
  list(): PaneListing;
  /**
   * The file the start command of the pane spawned with `token` writes its program's exit code
   * to when the program fails (see `pane_program.ts`); its private directory is made here.
   *
   * @throws {MuxError} `invalid_config` when the state directory became unsafe.
   */
  exitFile(token: string): string;
  /** The failed exits reported so far, by spawn token (one directory listing). */
  exits(): Map<string, number>;
  /** Forgets a token's report; a missing one is fine. */
  removeExit(token: string): void;
}

function fileName(backend: string, paneId: string): string {
  const encoded = Buffer.from(paneId).toString("base64url");
  // Long ids would exceed NAME_MAX (255): hash them; the record inside keeps the real id.
  const name = encoded.length <= 160
    ? encoded
    : `h-${createHash("sha256").update(paneId).digest("hex")}`;
  return `${backend}.${name}.json`;
}

/**
 * A store over `<dir>/panes/`. The directory is created 0700 (or checked) at once.
 *
 * @param dir The state directory.
 * @returns The store.
 * @throws {MuxError} `invalid_config` (exit 3) when the state directory is another user's,
 *   writable by others, or cannot be created; the message names the path and the fix.
 *
 * @example
 * ```ts
 * import { createPaneStore } from "./pane_store.ts";
 * const store = createPaneStore("/tmp/muxbridge-example-state");
 * store.put({
 *   sessionId: "ses_1",
 *   paneId: "%3",
 *   backend: "tmux",
 *   title: "t",
 *   openedAt: new Date().toISOString(),
 *   owner: "cli",
 * });
 * store.list().records.length; // 1
 * ```
 */
export function createPaneStore(dir: string): PaneStore {
  const root = ensurePrivateDir(dir);
  // Checked again before each use: a long-running bridge must not follow a swapped directory.
  const panes = () => ensurePrivateSubdir(root, "panes");
  const exits = () => ensurePrivateSubdir(root, "exits");
  return {
    dir,
    put(record) {
      const checked = PaneRecordSchema.parse(record);
      writePrivateFile(
        join(panes(), fileName(checked.backend, checked.paneId)),
        JSON.stringify(checked),
        { sync: false },
      );
    },
    remove(backend, paneId) {
      rmSync(join(panes(), fileName(backend, paneId)), { force: true });
    },
    list() {
      const listing: PaneListing = { records: [], corrupt: [] };
      const where = panes();
      for (const name of readdirSync(where).sort()) {
        if (!name.endsWith(".json")) continue; // temporary files of a writer (or a dead one)
        const path = join(where, name);
        const read = readPrivateFile(path, MAX_RECORD_BYTES);
        if (!read.ok && read.gone) continue; // removed meanwhile
        const reason = read.ok ? recordProblem(read.text, listing) : `refused: ${read.reason}`;
        if (reason === null) continue;
        try {
          // The move renames the entry itself (a symbolic link stays a link, never followed)
          // into a private directory checked the same way.
          renameSync(path, join(ensurePrivateSubdir(root, "corrupt"), name));
        } catch { /* reported either way */ }
        listing.corrupt.push({ file: path, reason });
      }
      return listing;
    },
    exitFile(token) {
      if (!SPAWN_TOKEN.test(token)) throw new RangeError(`Cannot use spawn token "${token}"`);
      return join(exits(), token);
    },
    exits() {
      const found = new Map<string, number>();
      const where = exits();
      for (const name of readdirSync(where)) {
        if (!SPAWN_TOKEN.test(name)) continue;
        const read = readPrivateFile(join(where, name), 16);
        const code = read.ok ? exitCodeOf(read.text) : null;
        if (code !== null) found.set(name, code);
        // What no start command of ours writes is removed (it would be read again and again).
        else if (!(!read.ok && read.gone)) rmSync(join(where, name), { force: true });
      }
      return found;
    },
    removeExit(token) {
      if (SPAWN_TOKEN.test(token)) rmSync(join(exits(), token), { force: true });
    },
  };
}

/** An exit code as a start command writes it (`1`..`255` and a newline), or null. */
function exitCodeOf(text: string): number | null {
  const m = /^(\d{1,3})\n?$/.exec(text);
  const code = m ? Number(m[1]) : NaN;
  return code >= 1 && code <= 255 ? code : null;
}

/** Parses a record's text into the listing; returns why it is unusable, or null. */
function recordProblem(text: string, listing: PaneListing): string | null {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return "not valid JSON";
  }
  const parsed = PaneRecordSchema.safeParse(json);
  if (!parsed.success) return "not a pane record";
  listing.records.push(parsed.data);
  return null;
}
