/**
 * Credentials for a pane program without putting them on any argv: a private file (a fresh
 * 0700 directory, the file 0600) that the pane's explicit `/bin/sh -c` command sources, removes
 * and then `exec`s the program, so the program gets them in its environment and the file lives
 * only until the pane starts. For backends whose environment flag is itself argv of a client
 * process (`herdr pane split --env`, `kitty @ launch --env`), readable by every user of the
 * machine in `/proc/<pid>/cmdline` while it runs (contract: never on argv).
 *
 * @module
 */

import { validateEnv } from "./validate.ts";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MuxError } from "./errors.ts";
import { quote, shellCommand } from "./shell_quote.ts";

/** A written credentials file. */
export interface CredentialsFile {
  /** The file (mode 0600). */
  file: string;
  /** Its directory (mode 0700, only this file in it). */
  dir: string;
}

/**
 * The file's text: one `NAME='value'; export NAME` line per variable.
 *
 * @param env Variables.
 * @returns The text `/bin/sh` sources.
 * @throws {MuxError} `invalid_argument` for a name that is not a shell variable name, or a value
 *   holding NUL.
 */
function credentialsFileText(env: Readonly<Record<string, string>>): string {
  validateEnv(env);
  return Object.entries(env).map(([name, value]) => `${name}=${quote(value)}; export ${name}\n`)
    .join("");
}

/**
 * Writes the variables to a new file in a new private directory under the system's temporary
 * directory (`mkdtemp` makes it 0700; the file is created 0600 and never existed before).
 *
 * @param env Variables.
 * @returns The file and its directory.
 * @throws {MuxError} `invalid_argument` (see {@linkcode credentialsFileText}) or
 *   `command_failed` when it cannot be written.
 */
export function writeCredentialsFile(env: Readonly<Record<string, string>>): CredentialsFile {
  const text = credentialsFileText(env);
  let dir: string | undefined;
  try {
    dir = mkdtempSync(join(tmpdir(), "muxbridge-env-"));
    const file = join(dir, "env");
    writeFileSync(file, text, { mode: 0o600, flag: "wx" });
    return { file, dir };
  } catch (err) {
    if (dir) removeCredentialsFile({ file: join(dir, "env"), dir });
    throw new MuxError("command_failed", `Cannot write the pane's credentials file: ${err}`, {
      cause: err,
      hint: "Check that the temporary directory (TMPDIR) is writable",
    });
  }
}

/**
 * Removes a credentials file and its directory; never throws (the pane may have removed them).
 *
 * @param credentials The file.
 */
export function removeCredentialsFile(credentials: CredentialsFile): void {
  try {
    rmSync(credentials.dir, { recursive: true, force: true });
  } catch { /* best effort: it is 0600 in a 0700 directory */ }
}

/**
 * The POSIX command that loads the credentials (if any), removes their file, then `exec`s argv.
 * Every value is quoted once by `lib/sys/shell_quote.ts`.
 *
 * @param argv The program and its arguments.
 * @param credentials The credentials file, if any.
 * @returns The command for `/bin/sh -c`.
 *
 * @example
 * ```ts
 * import { sourceAndExec } from "./credentials_file.ts";
 * sourceAndExec(["opencode", "attach"], { file: "/tmp/d/env", dir: "/tmp/d" });
 * // ". '/tmp/d/env'; rm -rf -- '/tmp/d'; exec 'opencode' 'attach'"
 * ```
 */
export function sourceAndExec(argv: readonly string[], credentials?: CredentialsFile): string {
  const load = credentials
    ? `. ${quote(credentials.file)}; rm -rf -- ${quote(credentials.dir)}; `
    : "";
  return `${load}exec ${shellCommand(argv)}`;
}
