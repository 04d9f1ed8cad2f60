/**
 * `muxbridge schema [config|protocol]`: the JSON Schema of the config file or of the bridge's
 * messages, generated from the zod schemas the code validates with.
 *
 * @module
 */

import { configJsonSchema } from "../../config.ts";
import { MuxError } from "../../sys/errors.ts";
import { protocolJsonSchema } from "../../bridge/protocol.ts";
import type { Command } from "./_command.ts";

/** The `schema` command. */
export const schemaCommand: Command = {
  name: "schema",
  summary: "Print the JSON Schema of the config file or the bridge protocol",
  usage: "muxbridge schema [config|protocol]",
  help:
    "Prints JSON Schema (draft 2020-12). Default: config.\n\nExample:\n  muxbridge schema protocol > protocol.schema.json",
  flags: {},
  positionals: [0, 1],
  json: true,
  run(inv) {
    const which = inv.positionals[0] ?? "config";
    if (which !== "config" && which !== "protocol") {
      throw new MuxError(
        "usage",
        `Cannot print schema ${JSON.stringify(which)}: choose config or protocol`,
      );
    }
    const schema = which === "config" ? configJsonSchema() : protocolJsonSchema();
    return Promise.resolve({ json: schema, text: `${JSON.stringify(schema, null, 2)}\n` });
  },
};
