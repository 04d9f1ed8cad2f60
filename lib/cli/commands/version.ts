/**
 * `muxbridge version`: the version, protocol and runtime.
 *
 * @module
 */

import { PROTOCOL_VERSION } from "../../bridge/protocol.ts";
import type { Command } from "./_command.ts";

/** The `version` command. */
export const versionCommand: Command = {
  name: "version",
  summary: "Print muxbridge's version",
  usage: "muxbridge version [--json]",
  help:
    "Prints `muxbridge X.Y.Z`; `--version` does the same.\n\nExample:\n  muxbridge version --json",
  flags: {},
  positionals: [0, 0],
  json: true,
  run(_inv, deps) {
    return Promise.resolve({
      json: {
        name: "muxbridge",
        version: deps.version,
        protocol: PROTOCOL_VERSION,
        runtime: deps.runtime,
      },
      text: `muxbridge ${deps.version}\n`,
    });
  },
};
