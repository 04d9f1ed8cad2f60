/**
 * Private to the herdr backend: a pane's title and the child's state. herdr has no command list:
 * the title is the pane's label, then the state goes out as an agent report (`_agent.ts`,
 * docs/backends/herdr.md §16).
 *
 * @module
 */

import type { PaneStatus } from "../../lib/backend/pane_status.ts";
import { cleanTitle, type PaneId, validateText } from "../../lib/sys/validate.ts";
import type { AgentReporter } from "./_agent.ts";
import type { HerdrApi } from "./_api.ts";
import { herdrPaneId } from "./_parse.ts";

/**
 * Sets the pane's label. herdr shows it in its own UI: the title never reaches the terminal as an
 * escape sequence. It is one argv element that must not start with "-" (herdr would read
 * `--clear`, `--help` or `--session` there) and holds no control characters.
 *
 * @param api herdr's operations.
 * @param paneId The pane.
 * @param title The title; cleaned, and an empty one clears the label.
 * @param signal Aborts the call.
 * @throws {MuxError} `invalid_argument` for a pane id or title herdr could misread; what herdr
 *   answered.
 */
export async function setPaneTitle(
  api: HerdrApi,
  paneId: PaneId,
  title: string,
  signal?: AbortSignal,
): Promise<void> {
  const id = herdrPaneId(paneId);
  const clean = cleanTitle(title);
  const label = clean === "" ? null : validateText("pane title", clean);
  await api.rename(id, label, signal);
}

/**
 * Shows the child's state: the label, then the agent report.
 *
 * @param api herdr's operations.
 * @param agents The backend's agent reporter.
 * @param paneId The pane.
 * @param status The child's title and state.
 * @param signal Aborts the calls.
 * @throws {MuxError} As {@linkcode setPaneTitle}; what herdr answered to the report.
 */
export async function setPaneStatus(
  api: HerdrApi,
  agents: AgentReporter,
  paneId: PaneId,
  status: PaneStatus,
  signal?: AbortSignal,
): Promise<void> {
  await setPaneTitle(api, paneId, status.title, signal);
  await agents.report(herdrPaneId(paneId), status, signal);
}
