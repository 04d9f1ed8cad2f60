/**
 * Private to backends: the check of a pane id against a backend's own id form.
 *
 * @module
 */

import { MuxError } from "../sys/errors.ts";
import { validateTarget } from "../validate.ts";

/**
 * Checks a pane id before it reaches argv: a safe target (`validateTarget`) in the backend's own
 * id form, so that no id can name another object or read as a flag.
 *
 * @param paneId The pane id.
 * @param form The backend's id form.
 * @param hint What the form looks like, for the error.
 * @returns The pane id.
 * @throws {MuxError} `invalid_argument`.
 */
export function checkPaneId(paneId: string, form: RegExp, hint: string): string {
  validateTarget("pane id", paneId);
  if (!form.test(paneId)) {
    throw new MuxError("invalid_argument", `Cannot use pane id ${JSON.stringify(paneId)}`, {
      hint,
    });
  }
  return paneId;
}
