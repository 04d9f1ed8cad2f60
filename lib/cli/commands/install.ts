/**
 * `muxbridge install`: puts the OpenCode plugin this binary carries into OpenCode's global
 * plugin folder and records this binary's command beside it.
 *
 * @module
 */

import { detectedTitles } from "../../backend/hints.ts";
import { findOnPath } from "../../install/find_on_path.ts";
import { applyPlan, planInstall } from "../../install/install.ts";
import { opencodeLocations } from "../../install/locations.ts";
import { PLUGIN_SOURCE } from "../../install/plugin_source.ts";
import type { Command } from "./_command.ts";
import { installSeams, planResult } from "./_install_report.ts";

/** The `install` command. */
export const installCommand: Command = {
  name: "install",
  summary: "Put the OpenCode plugin where OpenCode loads it, recording this binary",
  usage: "muxbridge install [--dry-run] [--json]",
  help: [
    "Writes the plugin this binary carries to OpenCode's global plugin folder",
    "($OPENCODE_CONFIG_DIR/plugin/, else $XDG_CONFIG_HOME/opencode/plugin/, else",
    "~/.config/opencode/plugin/) as muxbridge.ts, and this binary's command beside it as",
    "muxbridge.json, so the plugin finds muxbridge even when OpenCode's PATH lacks it. Your",
    "opencode.json is not rewritten: the only edit install ever makes is to remove an older",
    "muxbridge entry from its plugin list (keeping every other byte). Running it again changes",
    "nothing; an older muxbridge plugin is replaced, not doubled. Then start OpenCode inside",
    "your multiplexer: plain `opencode` gets panes.",
    "",
    "Exit codes: 0 installed (or already in place); 1 a file could not be written, or a file",
    "that is not muxbridge's is in the way; 2 usage; 3 OpenCode's config is not valid",
    "JSON/JSONC (nothing is written), or HOME is not set.",
    "",
    "Example:",
    "  muxbridge install --dry-run",
  ].join("\n"),
  flags: {
    "dry-run": { type: "boolean", help: "Show what would change; change nothing" },
  },
  positionals: [0, 0],
  json: true,
  run(inv, deps) {
    const { files, self } = installSeams(deps);
    const dryRun = inv.values["dry-run"] === true;
    const plan = planInstall({
      files,
      env: deps.env,
      self,
      version: deps.version,
      source: PLUGIN_SOURCE,
    });
    if (!dryRun) applyPlan(files, plan);
    if (findOnPath("opencode", deps.env("PATH"), files) === null) {
      deps.log.warn(
        "opencode is not on PATH: install OpenCode (npm install -g opencode-ai); the plugin " +
          "waits in its folder until then",
      );
    }
    const where = opencodeLocations(deps.env).pluginDir;
    const footer = dryRun
      ? ["(dry run: nothing was changed)"]
      : plan.changed.length === 0
      ? [`muxbridge ${deps.version} is already installed for OpenCode in ${where}`]
      : [
        `installed muxbridge ${deps.version} for OpenCode in ${where}`,
        `next: start OpenCode inside ${detectedTitles(deps.backends)} as usual: opencode`,
        "check the whole chain any time: muxbridge doctor",
      ];
    return Promise.resolve(planResult(plan, dryRun, footer));
  },
};
