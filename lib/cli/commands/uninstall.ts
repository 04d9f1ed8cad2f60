/**
 * `muxbridge uninstall`: removes exactly what `muxbridge install` wrote.
 *
 * @module
 */

import { applyPlan, planUninstall } from "../../install/install.ts";
import type { Command } from "./_command.ts";
import { installSeams, planResult } from "./_install_report.ts";

/** The `uninstall` command. */
export const uninstallCommand: Command = {
  name: "uninstall",
  summary: "Remove what `muxbridge install` wrote for OpenCode (1.x and 2.x)",
  usage: "muxbridge uninstall [--dry-run] [--json]",
  help: [
    "Removes what install wrote into OpenCode's global config folder, for both lines: for 1.x",
    "plugin/muxbridge.js (or an older muxbridge.ts) and muxbridge.json; for 2.x the link",
    "plugins/muxbridge and the folders it pointed to in muxbridge/; and each folder install",
    "created, when nothing else is in it; and the copy of the binary install made when it ran",
    "from a package manager's folder (muxbridge/bin/ under $XDG_DATA_HOME, else ~/.local/share).",
    "Nothing else is touched: a plugin entry you added to opencode.json by hand is reported and",
    "left alone. Running it again changes nothing.",
    "",
    "Exit codes: 0 removed (or nothing to remove); 1 a file could not be removed; 2 usage;",
    "3 HOME is not set.",
    "",
    "Example:",
    "  muxbridge uninstall --dry-run --json",
  ].join("\n"),
  flags: {
    "dry-run": { type: "boolean", help: "Show what would be removed; remove nothing" },
  },
  positionals: [0, 0],
  json: true,
  run(inv, deps) {
    const { files } = installSeams(deps);
    const dryRun = inv.values["dry-run"] === true;
    const plan = planUninstall({ files, env: deps.env });
    if (!dryRun) applyPlan(files, plan);
    const footer = dryRun
      ? ["(dry run: nothing was changed)"]
      : plan.changed.length === 0
      ? ["muxbridge is not installed for OpenCode (nothing changed)"]
      : ["uninstalled: OpenCode no longer loads muxbridge (restart running OpenCodes)"];
    return Promise.resolve(planResult(plan, dryRun, footer));
  },
};
