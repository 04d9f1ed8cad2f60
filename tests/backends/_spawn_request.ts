/**
 * The spawn request the backend tests (herdr, zellij, tmux status) open their panes with, so
 * that every one of them asserts against the same title, argv, directory and owner.
 *
 * @module
 */

import type { SpawnRequest } from "../../lib/backend/backend.ts";
import { validateSessionId } from "../../lib/sys/validate.ts";

/**
 * A spawn request for child `ses_abc` ("fix the bug", `opencode attach … --dir /w`, owner
 * `4242:1`, no extra environment).
 *
 * @param extra Fields to replace.
 * @returns The request.
 */
export const request = (extra: Partial<SpawnRequest> = {}): SpawnRequest => ({
  sessionId: validateSessionId("ses_abc"),
  title: "fix the bug",
  argv: ["opencode", "attach", "http://127.0.0.1:4096", "--session", "ses_abc", "--dir", "/w"],
  cwd: "/w",
  env: {},
  owner: "4242:1",
  ...extra,
});
