/**
 * `muxbridge schema [config|protocol|provider]`: the JSON Schema of the config file, of the
 * bridge's messages or of the pane-provider protocol, generated from the zod schemas the code
 * validates with.
 *
 * @module
 */

import { configJsonSchema } from "../../config.ts";
import { MuxError } from "../../sys/errors.ts";
import { protocolJsonSchema } from "../../bridge/protocol.ts";
import { providerJsonSchema } from "../../../backends/provider/protocol.ts";
import type { Command } from "./_command.ts";

/** The `schema` command. */
export const schemaCommand: Command = {
  name: "schema",
  summary: "Print the JSON Schema of the config file, the bridge protocol or the provider protocol",
  usage: "muxbridge schema [config|protocol|provider]",
  help:
    "Prints JSON Schema (draft 2020-12). Default: config. provider: the pane-provider protocol (docs/provider-protocol.md).\n\nExample:\n  muxbridge schema protocol > protocol.schema.json",
  flags: {},
  positionals: [0, 1],
  json: true,
  run(inv) {
    const which = inv.positionals[0] ?? "config";
    const schemas: Record<string, () => Record<string, unknown>> = {
      config: configJsonSchema,
      protocol: protocolJsonSchema,
      provider: providerJsonSchema,
    };
    if (!Object.hasOwn(schemas, which)) {
      throw new MuxError(
        "usage",
        `Cannot print schema ${JSON.stringify(which)}: choose config, protocol or provider`,
      );
    }
    const schema = schemas[which]();
    return Promise.resolve({ json: schema, text: `${JSON.stringify(schema, null, 2)}\n` });
  },
};
