/**
 * Shared by the backends that hand a pane its credentials through a file
 * (`lib/sys/credentials_file.ts`): where that file goes. It is the `credentials` folder of
 * muxbridge's state directory (`state_dir`, `$MUXBRIDGE_STATE_DIR`, `$XDG_STATE_HOME/muxbridge`
 * or `~/.local/state/muxbridge`), which is checked before every write: owned by this user,
 * nobody else can write to it or to a parent it hangs from (`lib/sys/private_fs.ts`). So no
 * other user can read the file, replace it or move its folder away between the write and the
 * pane's read, whatever `TMPDIR` is.
 *
 * @module
 */

import { stateDir } from "../config/config.ts";
import {
  type CredentialsFile,
  removeCredentialsFile,
  writeCredentialsFile,
} from "../sys/credentials_file.ts";
import { ensurePrivateDir, ensurePrivateSubdir } from "../sys/private_fs.ts";
import type { BackendDeps } from "./backend.ts";

/** The state directory's folder for credentials files. */
export const CREDENTIALS_DIR = "credentials";

/**
 * Writes a pane's variables to a new private file, when there are any.
 *
 * @param deps The backend's deps (config `state_dir` and the environment find the directory).
 * @param env The pane's variables (`SpawnRequest.env`).
 * @returns The file, or undefined when `env` is empty.
 * @throws {MuxError} `invalid_config` when the state directory is not private (what is wrong
 *   and how to fix it), `invalid_argument` for a variable no environment can carry,
 *   `command_failed` when the file cannot be written.
 */
export function writePaneCredentials(
  deps: Pick<BackendDeps, "config" | "env">,
  env: Readonly<Record<string, string>>,
): CredentialsFile | undefined {
  if (Object.keys(env).length === 0) return undefined;
  const root = ensurePrivateDir(stateDir(deps.config, deps.env));
  return writeCredentialsFile(ensurePrivateSubdir(root, CREDENTIALS_DIR), env);
}

/** The credentials files of the panes one backend opened, until each pane is closed. */
export interface PaneCredentials {
  /**
   * Writes a new pane's file ({@linkcode writePaneCredentials}).
   *
   * @param env The pane's variables.
   * @returns The file, or undefined when `env` is empty.
   */
  write(env: Readonly<Record<string, string>>): CredentialsFile | undefined;
  /**
   * Keeps a file until its pane closes (the pane's start script removes it first, normally).
   *
   * @param paneId The pane.
   * @param file The file, if any.
   */
  keep(paneId: string, file: CredentialsFile | undefined): void;
  /**
   * Removes a pane's file, if its start script has not (the pane never started); never throws.
   *
   * @param paneId The pane.
   */
  forget(paneId: string): void;
}

/**
 * The credentials files of one backend's panes.
 *
 * @param deps The backend's deps.
 * @returns The files, none yet.
 *
 * @example
 * ```ts
 * import type { BackendDeps } from "./backend.ts";
 * import { createPaneCredentials } from "./_pane_credentials.ts";
 *
 * function spawnWith(deps: BackendDeps, env: Record<string, string>) {
 *   const credentials = createPaneCredentials(deps);
 *   const file = credentials.write(env); // before the pane is opened
 *   credentials.keep("terminal_3", file); // once the pane exists
 *   credentials.forget("terminal_3"); // when the pane is closed
 * }
 * ```
 */
export function createPaneCredentials(deps: Pick<BackendDeps, "config" | "env">): PaneCredentials {
  const files = new Map<string, CredentialsFile>();
  return {
    write: (env) => writePaneCredentials(deps, env),
    keep(paneId, file) {
      if (file) files.set(paneId, file);
    },
    forget(paneId) {
      const file = files.get(paneId);
      if (!file) return;
      files.delete(paneId);
      removeCredentialsFile(file);
    },
  };
}
