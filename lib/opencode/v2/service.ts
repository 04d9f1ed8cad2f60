/**
 * The password of an OpenCode 2.x service, found the way 2.x's own clients find it. The per-user
 * background service records itself in `$XDG_STATE_HOME/opencode/service.json` (other release
 * channels: `service-<channel>.json`), mode 0600: `{id, version, url, pid, password}`. A TUI that
 * connects to the service reads its URL and password there; so does muxbridge, for the server a
 * 2.x plugin names, when no password is in the environment (`OPENCODE_PASSWORD`,
 * `OPENCODE_SERVER_PASSWORD`).
 *
 * The file is trusted only as a private file of this user (a regular file it owns, not a link,
 * no group or other access), and a password is used only for the server whose origin the file
 * names. A service that restarts writes a new pid and password: {@linkcode ServiceCredentials}
 * re-reads the file when it changes, so a bridge follows the restart.
 *
 * @module
 */

import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { readPrivateFile } from "../../sys/private_fs.ts";
import type { Credentials } from "../credentials.ts";
import { originOf } from "../origin.ts";

/** The largest service file read; it is a few hundred bytes. */
const MAX_BYTES = 64 * 1024;

const ServiceSchema = z.looseObject({
  url: z.string().max(2048),
  password: z.string().min(1).max(4096),
  pid: z.number().int().optional(),
  version: z.string().optional(),
});

/** One service file, as read. */
export interface ServiceRecord {
  /** The file. */
  file: string;
  /** The service's URL. */
  url: string;
  /** Its password. */
  password: string;
  /** Its pid, when recorded. */
  pid?: number;
  /** Its version, when recorded. */
  version?: string;
}

/**
 * The folder 2.x keeps its service files in: `$XDG_STATE_HOME/opencode`, else
 * `~/.local/state/opencode`.
 *
 * @param env The environment lookup.
 * @returns The folder, or null without a home.
 *
 * @example
 * ```ts
 * import { serviceDir } from "./service.ts";
 * serviceDir((n) => ({ XDG_STATE_HOME: "/s" } as Record<string, string>)[n]); // "/s/opencode"
 * ```
 */
export function serviceDir(env: (name: string) => string | undefined): string | null {
  const state = env("XDG_STATE_HOME");
  if (state) return join(state, "opencode");
  const home = env("HOME");
  return home ? join(home, ".local", "state", "opencode") : null;
}

/**
 * Every readable service file in `dir` (`service.json`, `service-<channel>.json`); files that
 * are not private to this user are skipped, and `skipped` hears why.
 *
 * @param dir The folder ({@linkcode serviceDir}).
 * @param skipped Told of each file refused.
 * @returns The records found.
 */
export function readServices(
  dir: string,
  skipped: (file: string, why: string) => void = () => {},
): ServiceRecord[] {
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => /^service(?:-[\w.-]{1,64})?\.json$/.test(n)).sort();
  } catch {
    return [];
  }
  const out: ServiceRecord[] = [];
  for (const name of names) {
    const file = join(dir, name);
    const read = readPrivateFile(file, MAX_BYTES);
    if (!read.ok) {
      if (!read.gone) skipped(file, read.reason);
      continue;
    }
    try {
      // No group or other access: a password others can read or change is not one we send.
      if ((statSync(file).mode & 0o077) !== 0) {
        skipped(file, "other users can access it");
        continue;
      }
      const parsed = ServiceSchema.safeParse(JSON.parse(read.text));
      if (!parsed.success) {
        skipped(file, "it is not a service record");
        continue;
      }
      const { url, password, pid, version } = parsed.data;
      out.push({
        file,
        url,
        password,
        ...(pid === undefined ? {} : { pid }),
        ...(version === undefined ? {} : { version }),
      });
    } catch {
      skipped(file, "it is not JSON");
    }
  }
  return out;
}

/**
 * The credentials of the service at `url`, from its service file.
 *
 * @param url The server URL the plugin named.
 * @param dir The folder of service files.
 * @param skipped Told of each file refused.
 * @returns User `opencode` and the password, or undefined when no private service file names
 *   that origin.
 */
export function serviceCredentials(
  url: string,
  dir: string,
  skipped?: (file: string, why: string) => void,
): Credentials | undefined {
  const origin = originOf(url);
  if (origin === null) return undefined;
  const found = readServices(dir, skipped).find((s) => originOf(s.url) === origin);
  return found ? { username: "opencode", password: found.password } : undefined;
}

/**
 * A service's credentials that follow its restarts: {@linkcode ServiceCredentials.current}
 * re-reads the service files only when one of them changed (size or modification time), so it
 * may be asked at every request.
 */
export class ServiceCredentials {
  readonly #url: string;
  readonly #dir: string;
  #stamp = "";
  #credentials: Credentials | undefined;

  /**
   * Follows the service at `url` through the service files in `dir`.
   *
   * @param url The server URL the credentials are for.
   * @param dir The folder of service files ({@linkcode serviceDir}).
   */
  constructor(url: string, dir: string) {
    this.#url = url;
    this.#dir = dir;
  }

  /**
   * The credentials now.
   *
   * @returns The current password of the service at the URL, or undefined.
   */
  current(): Credentials | undefined {
    const stamp = this.#stampNow();
    if (stamp !== this.#stamp) {
      this.#stamp = stamp;
      this.#credentials = serviceCredentials(this.#url, this.#dir);
    }
    return this.#credentials;
  }

  #stampNow(): string {
    try {
      return readdirSync(this.#dir).filter((n) => n.startsWith("service") && n.endsWith(".json"))
        .sort().map((n) => {
          const st = statSync(join(this.#dir, n));
          return `${n}:${st.size}:${st.mtimeMs}:${st.ino}`;
        }).join("|");
    } catch {
      return "";
    }
  }
}
