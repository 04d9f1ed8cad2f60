/**
 * Private to backends: the one place a backend makes a {@linkcode PaneId}, from what its
 * multiplexer printed or from an id handed to it, checked once against its own id form.
 *
 * @module
 */

import { MuxError } from "../sys/errors.ts";
import { type PaneId, validatePaneId } from "../sys/validate.ts";

/**
 * Makes a pane id in the backend's own form: a safe pane id (`validatePaneId`: no flag, no
 * control character, only characters pane ids use) that matches the form, so that no id can
 * name another object or read as a flag. A backend's parsers make every id they read this way,
 * and its operations check an id they are handed the same way (an id of another backend's form
 * is refused, not sent).
 *
 * @param text The id.
 * @param form The backend's id form.
 * @param hint What the form looks like, for the error.
 * @returns The pane id.
 * @throws {MuxError} `invalid_argument`.
 *
 * @example
 * ```ts
 * import { checkPaneId } from "./_pane_id.ts";
 * checkPaneId("%3", /^%\d+$/, 'A tmux pane id is "%" followed by digits'); // "%3" as a PaneId
 * ```
 */
export function checkPaneId(text: string, form: RegExp, hint: string): PaneId {
  const id = validatePaneId(text);
  if (!form.test(id)) {
    throw new MuxError("invalid_argument", `Cannot use pane id ${JSON.stringify(id)}`, { hint });
  }
  return id;
}
