/**
 * What a `bridge.hello` may not configure. The hello's `config` carries plugin options, and a
 * project's `opencode.json` (in a repository someone else wrote) can set those: so it may tune
 * how panes behave, but not name a program to run, a file to write, or a socket, server or
 * session that receives pane commands and the server's credentials. Those belong in the user's
 * config file, environment or flags.
 *
 * @module
 */

import { MuxError } from "../sys/errors.ts";

/** What a config key names that a `bridge.hello` may not set. */
export type ExternalKind = "program" | "file" | "socket" | "session";

/** Why a key of each {@linkcode ExternalKind} is refused. */
const WHY: Readonly<Record<ExternalKind, string>> = {
  program: "names a program to run",
  file: "names a file to write",
  socket: "names a socket that receives pane commands and credentials",
  session:
    "chooses the multiplexer session (or server) that receives pane commands and credentials",
};

/**
 * muxbridge's own keys a `bridge.hello` may not set, with why: the programs panes and
 * attention run, where pane records and logs are written. A backend's section declares its own
 * (`ConfigSection.external` of `lib/config/section.ts`); any key named `bin` or `command` in a section is
 * a program too, declared or not.
 */
export const HELLO_FORBIDDEN: Readonly<Record<string, string>> = {
  opencode_bin: WHY.program,
  attention_command: WHY.program,
  state_dir: "names where pane records are written and read",
  log_file: WHY.file,
};

/** A backend's section as this check reads it: its name and its external keys. */
export interface ExternalKeys {
  /** The section's key (the backend's name). */
  readonly name: string;
  /** The section's keys that name a program, a file, a socket or a session. */
  readonly config: { readonly external: Readonly<Record<string, ExternalKind>> };
}

/**
 * Refuses a `bridge.hello` config layer that sets a key of {@linkcode HELLO_FORBIDDEN}, a key a
 * backend's section declares external, or any section's `bin` or `command`.
 *
 * @param data The hello's `config`, before schema validation.
 * @param backends The backends whose sections declare external keys. @default none
 * @throws {MuxError} `invalid_config`, naming the key and why.
 *
 * @example
 * ```ts
 * import { refuseHelloKeys } from "./hello_forbidden.ts";
 * refuseHelloKeys({ layout: "tiled" }); // fine
 * ```
 */
export function refuseHelloKeys(data: unknown, backends: readonly ExternalKeys[] = []): void {
  if (typeof data !== "object" || data === null || Array.isArray(data)) return;
  const forbidden: Record<string, string> = { ...HELLO_FORBIDDEN };
  for (const b of backends) {
    for (const [key, kind] of Object.entries(b.config.external)) {
      forbidden[`${b.name}.${key}`] = WHY[kind];
    }
  }
  const keys: string[] = [];
  for (const [key, value] of Object.entries(data)) {
    keys.push(key);
    if (typeof value === "object" && value !== null && !Array.isArray(value)) {
      for (const sub of Object.keys(value)) keys.push(`${key}.${sub}`);
    }
  }
  for (const key of keys) {
    const leaf = key.slice(key.lastIndexOf(".") + 1);
    const why = (Object.hasOwn(forbidden, key) ? forbidden[key] : undefined) ??
      (key.includes(".") && (leaf === "bin" || leaf === "command") ? WHY.program : undefined);
    if (why) {
      throw new MuxError(
        "invalid_config",
        `Cannot use the config from bridge.hello: key ${JSON.stringify(key)} ${why}`,
        { hint: "Set it in the config file or the environment; bridge.hello cannot" },
      );
    }
  }
}
