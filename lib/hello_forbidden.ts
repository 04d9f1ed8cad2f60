/**
 * What a `bridge.hello` may not configure. The hello's `config` carries plugin options, and a
 * project's `opencode.json` (in a repository someone else wrote) can set those: so it may tune
 * how panes behave, but not name a program to run, a file to write, or a socket that receives
 * pane commands and the server's credentials. Those belong in the user's config file,
 * environment or flags.
 *
 * @module
 */

import { MuxError } from "./sys/errors.ts";

/**
 * Keys a `bridge.hello` may not set, with why: programs muxbridge runs, files it writes, and
 * sockets that receive pane commands (and their credentials). A hello carries plugin options,
 * which a project's `opencode.json` can set; these belong in the user's config file or
 * environment. Any key named `bin` or `command` in a section is a program too.
 */
export const HELLO_FORBIDDEN: Readonly<Record<string, string>> = {
  opencode_bin: "names a program to run",
  state_dir: "names where pane records are written and read",
  log_file: "names a file to write",
  "tmux.socket_path": "names a socket that receives pane commands and credentials",
  "kitty.listen_on": "names a socket that receives pane commands and credentials",
  "herdr.socket_path": "names a socket that receives pane commands and credentials",
  "cmux.socket_path": "names a socket that receives pane commands and credentials",
  "wezterm.socket_path": "names a socket that receives pane commands and credentials",
};

/**
 * Refuses a `bridge.hello` config layer that sets a key of {@linkcode HELLO_FORBIDDEN} (or any
 * section's `bin` or `command`).
 *
 * @param data The hello's `config`, before schema validation.
 * @throws {MuxError} `invalid_config`, naming the key and why.
 *
 * @example
 * ```ts
 * import { refuseHelloKeys } from "./hello_forbidden.ts";
 * refuseHelloKeys({ layout: "tiled" }); // fine
 * ```
 */
export function refuseHelloKeys(data: unknown): void {
  if (typeof data !== "object" || data === null || Array.isArray(data)) return;
  const keys: string[] = [];
  for (const [key, value] of Object.entries(data)) {
    keys.push(key);
    if (typeof value === "object" && value !== null && !Array.isArray(value)) {
      for (const sub of Object.keys(value)) keys.push(`${key}.${sub}`);
    }
  }
  for (const key of keys) {
    const leaf = key.slice(key.lastIndexOf(".") + 1);
    const why = HELLO_FORBIDDEN[key] ??
      (key.includes(".") && (leaf === "bin" || leaf === "command")
        ? "names a program to run"
        : undefined);
    if (why) {
      throw new MuxError(
        "invalid_config",
        `Cannot use the config from bridge.hello: key ${JSON.stringify(key)} ${why}`,
        { hint: "Set it in the config file or the environment; bridge.hello cannot" },
      );
    }
  }
}
