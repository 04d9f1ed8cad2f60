/**
 * Credentials for a pane program without putting them on any argv or typing them: a file in a
 * private directory (muxbridge's state directory, checked 0700 and owned by this user, parents
 * included: `private_fs.ts`), created 0600 with `O_EXCL|O_NOFOLLOW`, that the pane's explicit
 * `/bin/sh` reads, removes and only then `exec`s the program. The program gets the variables in
 * its environment; the file lives only until the pane starts (or until muxbridge closes a pane
 * that never did, or, after a crash, until a later spawn sweeps it: {@linkcode STALE_MS}).
 *
 * One mechanism for every backend that cannot set a pane's environment without argv: zellij
 * and cmux (no per-pane environment at all), herdr and kitty (whose environment flag is argv of
 * a client process, readable by every user of the machine in `/proc/<pid>/cmdline`), WezTerm.
 *
 * @module
 */

import { randomBytes } from "node:crypto";
import {
  closeSync,
  constants,
  lstatSync,
  openSync,
  readdirSync,
  rmSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import { MuxError } from "./errors.ts";
import { quote, shellCommand } from "./shell_quote.ts";
import { validateEnv } from "./validate.ts";

/** A written credentials file. */
export interface CredentialsFile {
  /** The file (mode 0600, in a private directory). */
  file: string;
}

/** What a credentials file is named: 24 random hex digits and `.env`. */
const NAME = /^[0-9a-f]{24}\.env$/;

/**
 * How old a credentials file must be before a spawn removes it as a leftover: a pane starts in
 * seconds, and the bridge removes the file of a pane it closes; only a crash leaves one behind.
 */
export const STALE_MS = 60 * 60 * 1000;

/**
 * The file's text: one `NAME='value'; export NAME` line per variable.
 *
 * @throws {MuxError} `invalid_argument` for a name that is not a shell variable name, or a value
 *   holding NUL.
 */
function credentialsFileText(env: Readonly<Record<string, string>>): string {
  validateEnv(env);
  return Object.entries(env).map(([name, value]) => `${name}=${quote(value)}; export ${name}\n`)
    .join("");
}

/** Removes credentials files older than {@linkcode STALE_MS} (never throws). */
function sweep(dir: string, now: number): void {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    if (!NAME.test(name)) continue;
    try {
      const st = lstatSync(join(dir, name));
      if (st.isFile() && now - st.mtimeMs > STALE_MS) unlinkSync(join(dir, name));
    } catch { /* gone meanwhile */ }
  }
}

/**
 * Writes the variables to a new file (mode 0600, a name that never existed) in `dir`, which
 * must be a private directory of this user (the caller checked it), after removing the
 * leftovers of crashed runs there.
 *
 * @param dir The private directory.
 * @param env Variables.
 * @param now The current time, for the sweep. @default `Date.now()`
 * @returns The file.
 * @throws {MuxError} `invalid_argument` (see {@linkcode credentialsFileText}) or
 *   `command_failed` when it cannot be written.
 *
 * @example
 * ```ts
 * import { writeCredentialsFile } from "./credentials_file.ts";
 * const dir = Deno.makeTempDirSync(); // 0700
 * const { file } = writeCredentialsFile(dir, { OPENCODE_SERVER_PASSWORD: "s3cret" });
 * ```
 */
export function writeCredentialsFile(
  dir: string,
  env: Readonly<Record<string, string>>,
  now: number = Date.now(),
): CredentialsFile {
  const text = credentialsFileText(env);
  sweep(dir, now);
  const file = join(dir, `${randomBytes(12).toString("hex")}.env`);
  let fd: number | undefined;
  try {
    const { O_WRONLY, O_CREAT, O_EXCL } = constants;
    fd = openSync(file, O_WRONLY | O_CREAT | O_EXCL | (constants.O_NOFOLLOW ?? 0), 0o600);
    writeSync(fd, text);
    closeSync(fd);
    return { file };
  } catch (err) {
    if (fd !== undefined) {
      closeSync(fd);
      removeCredentialsFile({ file });
    }
    throw new MuxError("command_failed", `Cannot write a pane's credentials file: ${err}`, {
      cause: err,
      hint: `Check that the state directory "${dir}" is writable (MUXBRIDGE_STATE_DIR)`,
    });
  }
}

/**
 * Removes a credentials file; never throws (the pane may have removed it).
 *
 * @param credentials The file.
 */
export function removeCredentialsFile(credentials: CredentialsFile): void {
  try {
    rmSync(credentials.file, { force: true });
  } catch { /* best effort: it is 0600 in a private directory */ }
}

/**
 * The POSIX commands that load a credentials file into the shell's environment and remove it:
 * `. '<file>'; rm -f -- '<file>'`. A missing file stops a non-interactive `/bin/sh` (`.` is a
 * special built-in), so no program starts without its credentials.
 *
 * @param credentials The file.
 * @returns The commands (no trailing separator).
 */
export function loadCredentials(credentials: CredentialsFile): string {
  return `. ${quote(credentials.file)}; rm -f -- ${quote(credentials.file)}`;
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
 * sourceAndExec(["opencode", "attach"], { file: "/s/credentials/0a.env" });
 * // ". '/s/credentials/0a.env'; rm -f -- '/s/credentials/0a.env'; exec 'opencode' 'attach'"
 * ```
 */
export function sourceAndExec(argv: readonly string[], credentials?: CredentialsFile): string {
  return `${credentials ? `${loadCredentials(credentials)}; ` : ""}exec ${shellCommand(argv)}`;
}

/**
 * The argv that runs `argv` with the credentials in its environment, for a multiplexer that
 * starts a pane's program by argv: `/bin/sh -c '. "$0"; rm -f -- "$0"; exec "$@"' <file>
 * <argv…>`. Nothing is parsed by the shell: the file and the program arrive as positional
 * parameters, and `exec` replaces the shell with the program. The script holds no single quote
 * and no backslash, so it survives being typed, POSIX-quoted, into any interactive shell (cmux).
 *
 * @param argv The program and its arguments.
 * @param credentials The credentials file; undefined: `argv` unchanged.
 * @returns The argv to start.
 *
 * @example
 * ```ts
 * import { credentialsArgv } from "./credentials_file.ts";
 * credentialsArgv(["opencode", "attach"], { file: "/s/credentials/0a.env" });
 * // ["/bin/sh", "-c", '. "$0"; rm -f -- "$0"; exec "$@"', "/s/credentials/0a.env", "opencode", "attach"]
 * ```
 */
export function credentialsArgv(
  argv: readonly string[],
  credentials: CredentialsFile | undefined,
): string[] {
  if (!credentials) return [...argv];
  return ["/bin/sh", "-c", '. "$0"; rm -f -- "$0"; exec "$@"', credentials.file, ...argv];
}
