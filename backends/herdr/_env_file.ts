/**
 * Private to the herdr backend: the private file that carries a pane's credentials (see
 * `_launch.ts` for why they cannot go on herdr's argv).
 *
 * @module
 */

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MuxError } from "../../lib/errors.ts";
import { envFileText } from "./_launch.ts";

/** A written credentials file. */
export interface EnvFile {
  /** The file (mode 0600). */
  file: string;
  /** Its directory (mode 0700, only this file in it). */
  dir: string;
}

/**
 * Writes the variables to a new file in a new private directory under the system's temporary
 * directory (`mkdtemp` makes it 0700; the file is created 0600 and never existed before).
 *
 * @param env Checked variables.
 * @returns The file and its directory.
 * @throws {MuxError} `command_failed` when it cannot be written.
 */
export function writeEnvFile(env: Readonly<Record<string, string>>): EnvFile {
  let dir: string | undefined;
  try {
    dir = mkdtempSync(join(tmpdir(), "muxbridge-env-"));
    const file = join(dir, "env");
    writeFileSync(file, envFileText(env), { mode: 0o600, flag: "wx" });
    return { file, dir };
  } catch (err) {
    if (dir) removeEnvFile({ file: join(dir, "env"), dir });
    throw new MuxError("command_failed", `Cannot write the pane's credentials file: ${err}`, {
      cause: err,
      hint: "Check that the temporary directory (TMPDIR) is writable",
    });
  }
}

/**
 * Removes a credentials file and its directory; never throws (the pane may have removed them).
 *
 * @param envFile The file.
 */
export function removeEnvFile(envFile: EnvFile): void {
  try {
    rmSync(envFile.dir, { recursive: true, force: true });
  } catch { /* best effort: it is 0600 in a 0700 directory */ }
}
