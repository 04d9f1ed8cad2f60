/**
 * `muxbridge install`: finds which OpenCode lines this user has and puts the plugin each needs
 * where it loads it (1.x: one file in `plugin/`; 2.x: a folder in `plugins/`), recording this
 * binary's command beside each.
 *
 * @module
 */

import { detectedTitles } from "../../backend/hints.ts";
import { detectOpencode, type OpencodeLine } from "../../install/detect.ts";
import { applyPlan, planInstall } from "../../install/install.ts";
import { opencodeLocations } from "../../install/locations.ts";
import { PLUGIN_V1, PLUGIN_V2_FILES } from "../../install/plugin_source.ts";
import type { Command } from "./_command.ts";
import { installSeams, planResult } from "./_install_report.ts";

/** The `install` command. */
export const installCommand: Command = {
  name: "install",
  summary: "Put the OpenCode plugin where OpenCode (1.x, 2.x) loads it, recording this binary",
  usage: "muxbridge install [--dry-run] [--json]",
  help: [
    "Finds which OpenCode lines you have (1.x: `opencode --version` prints 1.x.y; 2.x: it",
    "prints `opencode v2.x.y`, or 2.x's service has run) and installs what each needs into",
    "OpenCode's global config folder ($OPENCODE_CONFIG_DIR, else $XDG_CONFIG_HOME/opencode,",
    "else ~/.config/opencode): for 1.x the file plugin/muxbridge.js, for 2.x the folder",
    "plugins/muxbridge (a link to muxbridge/<version>-<hash>/, swapped in one step); both when",
    "both are found, or none is. Each gets this binary's command beside it (muxbridge.json), so",
    "the plugin finds muxbridge even when OpenCode's PATH lacks it. Run from a package",
    "manager's folder (npx, bunx, npm -g), the binary is first copied to muxbridge/bin/ under",
    "$XDG_DATA_HOME (else ~/.local/share) and the copy recorded: those folders are pruned or",
    "replaced. Your opencode.json is not",
    "rewritten: the only edit install ever makes is to remove an older muxbridge entry from its",
    "plugin list (keeping every other byte). Running it again changes nothing; an older",
    "muxbridge plugin is replaced, not doubled. Then start OpenCode inside your multiplexer:",
    "plain `opencode` gets panes.",
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
  async run(inv, deps) {
    const { files, self } = installSeams(deps);
    const dryRun = inv.values["dry-run"] === true;
    const found = await detectOpencode({ run: deps.run, env: deps.env, files });
    const lines: readonly OpencodeLine[] = found.lines.length ? found.lines : ["1.x", "2.x"];
    const plan = planInstall({
      files,
      env: deps.env,
      self,
      version: deps.version,
      carried: { v1: PLUGIN_V1, v2: PLUGIN_V2_FILES },
      lines,
    });
    if (!dryRun) applyPlan(files, plan);
    if (found.lines.length === 0) {
      deps.log.warn(
        "no OpenCode found (neither `opencode --version` on PATH nor OpenCode 2.x's service): " +
          `${dryRun ? "would install" : "installed"} for both lines, 1.x and 2.x; each plugin ` +
          "waits in its folder until then",
      );
    }
    const where = opencodeLocations(deps.env).configDir;
    const named = `OpenCode ${lines.join(" and ")}`;
    const seen = found.evidence.map((e) => `found: ${e.detail}`);
    const footer = [
      ...seen,
      ...(dryRun
        ? ["(dry run: nothing was changed)"]
        : plan.changed.length === 0
        ? [`muxbridge ${deps.version} is already installed for ${named} in ${where}`]
        : [
          `installed muxbridge ${deps.version} for ${named} in ${where}`,
          `next: start OpenCode inside ${detectedTitles(deps.backends)} as usual: opencode`,
          "check the whole chain any time: muxbridge doctor",
        ]),
    ];
    const result = planResult(plan, dryRun, footer);
    const opencode = { lines, found: found.evidence };
    return { ...result, json: { ...(result.json as object), opencode } };
  },
};
