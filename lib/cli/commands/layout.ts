/**
 * `muxbridge layout`: applies a layout to the panes muxbridge owns, where the backend can.
 *
 * @module
 */

import { type LayoutName, LAYOUTS } from "../../config/config.ts";
import { MuxError } from "../../sys/errors.ts";
import type { PaneId } from "../../sys/validate.ts";
import type { Command } from "./_command.ts";
import { loadConfig, openBackend, paneStore } from "./_context.ts";

/** The `layout` command. */
export const layoutCommand: Command = {
  name: "layout",
  summary: "Arrange muxbridge's panes",
  usage: `muxbridge layout NAME [--main-size N] [--json]   (NAME: ${LAYOUTS.join("|")})`,
  help: [
    "Applies the layout to the window of muxbridge's panes. It never reshapes panes muxbridge",
    "does not own: where the user's own panes share the window, the backend says so and skips.",
    "",
    "Example:",
    "  muxbridge layout main-vertical --main-size 50",
  ].join("\n"),
  flags: {
    "main-size": {
      type: "string",
      help: "Percent for the main pane, 20-80 (default main_pane_size)",
    },
  },
  positionals: [1, 1],
  json: true,
  async run(inv, deps) {
    const name = inv.positionals[0];
    if (!(LAYOUTS as readonly string[]).includes(name)) {
      throw new MuxError(
        "usage",
        `Cannot apply layout ${JSON.stringify(name)}: choose one of ${LAYOUTS.join(", ")}`,
      );
    }
    const rawSize = inv.values["main-size"];
    let mainSize: number | undefined;
    if (typeof rawSize === "string") {
      mainSize = Number(rawSize);
      if (!/^\d+$/.test(rawSize) || mainSize < 20 || mainSize > 80) {
        throw new MuxError(
          "usage",
          `Cannot use --main-size ${JSON.stringify(rawSize)}: give a whole number from 20 to 80`,
        );
      }
    }
    const config = loadConfig(inv.global, deps);
    const backend = await openBackend(config, deps);
    const owned = paneStore(config, deps).list().records
      .filter((r) => r.backend === backend.name)
      .sort((a, b) => a.openedAt.localeCompare(b.openedAt));
    const panes: PaneId[] = [];
    for (const r of owned) if (await backend.inspect(r.paneId, deps.signal)) panes.push(r.paneId);
    const result = panes.length === 0
      ? { applied: false, detail: "muxbridge owns no open pane" }
      : await backend.applyLayout({
        layout: name as LayoutName,
        mainPaneSize: mainSize ?? config.main_pane_size,
        panes,
      }, deps.signal);
    await backend.dispose?.();
    return {
      json: { backend: backend.name, layout: name, applied: result.applied, detail: result.detail },
      text: `${result.applied ? "applied" : "not applied"}: ${result.detail}\n`,
    };
  },
};
