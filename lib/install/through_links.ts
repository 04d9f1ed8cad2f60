/**
 * Where install writes a file that may be a symbolic link (dotfiles setups link
 * `opencode.json`): through the link to its target, which must be a regular file of the user's
 * in a folder the user can write; else the plan is refused, naming the link and the target,
 * before anything is written. Shared by the config edits (`install.ts`) and the 1.x files
 * (`install_v1.ts`).
 *
 * @module
 */

import { MuxError } from "../sys/errors.ts";
import type { Files } from "./files.ts";

/**
 * Where a planned write of `path` goes: `path`, or the file a symbolic link there points to (the
 * link stays a link).
 *
 * @param files The file seam.
 * @param path The file to write.
 * @param action What the write is, for the error (`write`, `edit OpenCode's config`).
 * @param hint What to do when it is refused.
 * @returns The path to write and a note for the plan's line (empty without a link).
 * @throws {MuxError} `not_owned` when the link dangles, loops or ends at something that is not a
 *   regular file of the user's in a folder the user can write.
 */
export function throughLinks(
  files: Files,
  path: string,
  action: string,
  hint: string,
): { target: string; note: string } {
  const t = files.writeTarget(path);
  if (t.refused !== undefined) {
    throw new MuxError("not_owned", `Cannot ${action} "${path}": ${t.refused}`, { hint });
  }
  return {
    target: t.path,
    note: t.linked
      ? ` (written to ${t.path}, which the symbolic link points to; the link stays)`
      : "",
  };
}

/** What to do about a link install will not write through, for its own files. */
export const OWN_LINK_HINT =
  "Remove the link (install writes this file itself), or point it at a file of yours, then run install again";
