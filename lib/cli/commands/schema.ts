/**
 * `muxbridge schema [config|protocol|<backend's schema>]`: the JSON Schema of the config file, of
 * the bridge's messages or of a schema a backend publishes (the pane-provider protocol),
 * generated from the zod schemas the code validates with.
 *
 * @module
 */

import { configJsonSchema } from "../../config/config.ts";
import { MuxError } from "../../sys/errors.ts";
import { protocolJsonSchema } from "../../bridge/protocol.ts";
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
  async run(inv, deps) {
    const which = inv.positionals[0] ?? "config";
    const schemas: Record<string, () => Promise<Record<string, unknown>>> = {
      config: () => Promise.resolve(configJsonSchema(deps.backends)),
      protocol: () => Promise.resolve(protocolJsonSchema()),
    };
    for (const b of deps.backends) Object.assign(schemas, b.schemas ?? {});
    if (!Object.hasOwn(schemas, which)) {
      const names = Object.keys(schemas);
      throw new MuxError(
        "usage",
        `Cannot print schema ${JSON.stringify(which)}: choose ${names.slice(0, -1).join(", ")} or ${
          names[names.length - 1]
        }`,
      );
    }
    const schema = await schemas[which]();
    return { json: schema, text: `${JSON.stringify(schema, null, 2)}\n` };
  },
};
