/**
 * Private to the herdr backend: ending a pane — Ctrl+C to its program, or closing the pane (and
 * removing its credentials file, if its shell has not read it).
 *
 * @module
 */

import type { CredentialsFile } from "../../lib/sys/credentials_file.ts";
import type { PaneId } from "../../lib/sys/validate.ts";
import type { HerdrApi } from "./_api.ts";
import { herdrPaneId } from "./_parse.ts";
import { forgetEnvFile } from "./_spawn.ts";

/**
 * Sends Ctrl+C to the pane's program.
 *
 * @param api herdr's operations.
 * @param paneId The pane.
 * @param signal Aborts the call.
 * @throws {MuxError} `pane_not_found` for an unknown pane; what herdr answered.
 */
export async function interruptPane(
  api: HerdrApi,
  paneId: PaneId,
  signal?: AbortSignal,
): Promise<void> {
  const id = herdrPaneId(paneId);
  // Silent on success (docs/backends/herdr.md §7); an unknown pane is a pane_not_found error
  // line.
  await api.sendKeys(id, ["ctrl+c"], signal);
}

/**
 * Closes the pane, its credentials file removed first.
 *
 * @param api herdr's operations.
 * @param envFiles The backend's credentials files by pane.
 * @param paneId The pane.
 * @param signal Aborts the call.
 * @throws {MuxError} `pane_not_found` for an unknown pane; what herdr answered.
 */
export async function killPane(
  api: HerdrApi,
  envFiles: Map<string, CredentialsFile>,
  paneId: PaneId,
  signal?: AbortSignal,
): Promise<void> {
  const id = herdrPaneId(paneId);
  forgetEnvFile(envFiles, id);
  await api.close(id, signal);
}
