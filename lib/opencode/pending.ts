/**
 * The requests a server has open for the user: its lists of pending permission requests and
 * questions, as plain data (each entry's session, id and kind; every other field ignored). They
 * correct a missed asked or answered event (`lib/session/machine/_attention.ts`).
 *
 * On the 1.x line (checked on OpenCode 1.18.33) they are `GET /permission` and `GET /question`,
 * bare arrays of the requests as the asked events carry them, scoped to a project directory
 * like every instance route. Other routes that look like lists (`/api/permission/request`,
 * `/api/session/:id/permission`) answered `[]` while a request was pending there: they are not
 * used (`docs/attention.md`).
 *
 * @module
 */

import { z } from "zod";

/** One request the server has open for the user. */
export interface ServerRequest {
  /** The session that asked (as the server wrote it; checked by whoever uses it). */
  readonly sessionId: string;
  /** The request's id. */
  readonly requestId: string;
  /** What it asks for. */
  readonly kind: "permission" | "question";
}

const EntrySchema = z.looseObject({ id: z.string(), sessionID: z.string() });

/**
 * The requests of one list, leniently: an entry without a string `id` and `sessionID` is
 * skipped.
 *
 * @param list The list as the server answered it.
 * @param kind What its requests ask for.
 * @returns The requests.
 *
 * @example
 * ```ts
 * import { requestsOf } from "./pending.ts";
 * requestsOf([{ id: "per_1", sessionID: "ses_c", permission: "bash" }, { id: 7 }], "permission");
 * // [{ sessionId: "ses_c", requestId: "per_1", kind: "permission" }]
 * ```
 */
export function requestsOf(
  list: readonly unknown[],
  kind: ServerRequest["kind"],
): ServerRequest[] {
  return list.flatMap((entry) => {
    const r = EntrySchema.safeParse(entry);
    return r.success ? [{ sessionId: r.data.sessionID, requestId: r.data.id, kind }] : [];
  });
}
