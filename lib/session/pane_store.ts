/**
 * Durable records of the panes muxbridge owns, one file per pane under the state directory, so
 * concurrent bridges never overwrite each other's records and a `kill -9` loses nothing already
 * written (write to a temporary file, rename). `list` and `cleanup` read them; a corrupt file is
 * reported and moved aside, never fatal.
 *
 * No fsync: a record only has to outlive the bridge process, and the kernel keeps a written file
 * when its writer dies; what an fsync adds is surviving an OS crash or power loss, which ends every
 * pane a record could name (the multiplexer's server with them). It cost 5–20 ms per pane on a
 * shared VM, serialised in the spawn queue (`bench/burst.ts`: a burst of 50 spent most of its time
 * in it).
 *
 * @module
 */

import { Buffer } from "node:buffer";
import { createHash } from "node:crypto";
import {
  closeSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeSync,
} from "node:fs";
import process from "node:process";
import { z } from "zod";
import { BACKEND_NAMES } from "../identity.ts";

/**
 * One owned pane, as recorded.
 *
 * @internal
 */
export const PaneRecordSchema = z.strictObject({
  sessionId: z.string(),
  paneId: z.string(),
  backend: z.enum(BACKEND_NAMES),
  title: z.string(),
  openedAt: z.string(),
  owner: z.string().describe('"cli", or "<pid>:<start>" of the bridge that opened it'),
  server: z.string().optional(),
  directory: z.string().optional(),
  pid: z.number().int().optional(),
  pidStart: z.string().optional().describe(
    "Start stamp of pid when the pane opened; a pid whose stamp differs is never signalled",
  ),
  stuck: z.boolean().optional().describe("Every close attempt failed"),
});

/**
 * One owned pane.
 *
 * @internal
 */
export type PaneRecord = z.output<typeof PaneRecordSchema>;

/** What {@linkcode PaneStore.list} found. */
export interface PaneListing {
  /** The readable records. */
  records: PaneRecord[];
  /** Files that could not be read, each moved aside, with the reason. */
  corrupt: Array<{ file: string; reason: string }>;
}

/** The record store. */
export interface PaneStore {
  /** Where the records live. */
  readonly dir: string;
  /** Writes (or replaces) a record durably. */
  put(record: PaneRecord): void;
  /** Removes a record; a missing one is fine. */
  remove(backend: string, paneId: string): void;
  /** Reads every record. */
  list(): PaneListing;
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
 * A store over `<dir>/panes/`.
 *
 * @param dir The state directory.
 * @returns The store.
 *
 * @example
 * ```ts ignore
 * const store = createPaneStore("/tmp/state");
 * store.put({ sessionId: "ses_1", paneId: "%3", backend: "tmux", title: "t", openedAt: new Date().toISOString(), owner: "cli" });
 * store.list().records.length; // 1
 * ```
 */
export function createPaneStore(dir: string): PaneStore {
  const panes = `${dir}/panes`;
  const ensure = () => mkdirSync(panes, { recursive: true, mode: 0o700 });
  return {
    dir,
    put(record) {
      ensure();
      const target = `${panes}/${fileName(record.backend, record.paneId)}`;
      const tmp = `${target}.${process.pid}.tmp`;
      const fd = openSync(tmp, "w", 0o600);
      try {
        writeSync(fd, JSON.stringify(record));
      } finally {
        closeSync(fd);
      }
      renameSync(tmp, target);
    },
    remove(backend, paneId) {
      rmSync(`${panes}/${fileName(backend, paneId)}`, { force: true });
    },
    list() {
      const listing: PaneListing = { records: [], corrupt: [] };
      let names: string[];
      try {
        names = readdirSync(panes);
      } catch {
        return listing;
      }
      for (const name of names.sort()) {
        if (!name.endsWith(".json")) continue;
        const path = `${panes}/${name}`;
        let reason: string;
        try {
          const parsed = PaneRecordSchema.safeParse(JSON.parse(readFileSync(path, "utf8")));
          if (parsed.success) {
            listing.records.push(parsed.data);
            continue;
          }
          reason = "not a pane record";
        } catch (err) {
          if ((err as { code?: string }).code === "ENOENT") continue; // removed meanwhile
          reason = err instanceof SyntaxError ? "not valid JSON" : (err as Error).message;
        }
        try {
          mkdirSync(`${dir}/corrupt`, { recursive: true });
          renameSync(path, `${dir}/corrupt/${name}`);
        } catch { /* reported either way */ }
        listing.corrupt.push({ file: path, reason });
      }
      return listing;
    },
  };
}
