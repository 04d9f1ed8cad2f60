/**
 * `muxbridge list`: the panes muxbridge owns, from its durable records.
 *
 * @module
 */

import { isPending } from "../../session/lost_spawns.ts";
import type { Command } from "./_command.ts";
import { loadConfig, paneStore } from "./_context.ts";

/** The `list` command. */
export const listCommand: Command = {
  name: "list",
  summary: "List the panes muxbridge owns",
  usage: "muxbridge list [--json]",
  help:
    "Reads the records under the state directory ($MUXBRIDGE_STATE_DIR, else $XDG_STATE_HOME/muxbridge).\n\nExample:\n  muxbridge list --json",
  flags: {},
  positionals: [0, 0],
  json: true,
  run(inv, deps) {
    const config = loadConfig(inv.global, deps);
    const { records, corrupt } = paneStore(config, deps).list();
    for (const c of corrupt) deps.log.warn(`set aside unreadable record ${c.file}: ${c.reason}`);
    // A pending record is a spawn without a pane (yet): `cleanup` resolves it.
    const rows = records.filter((r) => !isPending(r)).map((r) => ({
      sessionId: r.sessionId,
      paneId: r.paneId,
      backend: r.backend,
      title: r.title,
      openedAt: r.openedAt,
      owner: r.owner,
      ...(r.stuck ? { stuck: true } : {}),
    }));
    const text = rows.length === 0
      ? "no owned panes\n"
      : rows.map((r) =>
        `${r.backend}\t${r.paneId}\t${r.sessionId}\t${r.owner}\t${r.openedAt}\t${
          JSON.stringify(r.title)
        }${r.stuck ? "\tSTUCK" : ""}`
      ).join("\n") + "\n";
    return Promise.resolve({ json: rows, text });
  },
};
