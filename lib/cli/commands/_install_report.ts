/**
 * What `install` and `uninstall` share: their deps check and how a plan is printed.
 *
 * @module
 */

import type { Files } from "../../install/files.ts";
import type { Change, Plan } from "../../install/install.ts";
import type { CliDeps, CommandResult } from "./_command.ts";

/**
 * The file seam and self command, which `main.ts` always provides.
 *
 * @param deps The CLI deps.
 * @returns The file seam and the command that runs this muxbridge.
 * @throws {TypeError} When the entry point did not provide them (a bug).
 */
export function installSeams(deps: CliDeps): { files: Files; self: readonly string[] } {
  if (!deps.files || !deps.self) throw new TypeError("install needs deps.files and deps.self");
  return { files: deps.files, self: deps.self };
}

const PAST: Record<Change["action"], string> = {
  write: "wrote",
  replace: "replaced",
  edit: "edited",
  remove: "removed",
  keep: "kept",
};
const FUTURE: Record<Change["action"], string> = {
  write: "would write",
  replace: "would replace",
  edit: "would edit",
  remove: "would remove",
  keep: "would keep",
};

/**
 * A plan as the command's result: `{"changed":[…],"unchanged":[…]}` and one line per item.
 *
 * @param plan The plan (applied, unless `dryRun`).
 * @param dryRun Whether it was only planned.
 * @param footer Lines after the list.
 * @returns The result.
 */
export function planResult(plan: Plan, dryRun: boolean, footer: string[]): CommandResult {
  const verbs = dryRun ? FUTURE : PAST;
  const lines = [
    ...plan.changed.map((c) => `${verbs[c.action]} ${c.path} (${c.what})`),
    ...plan.unchanged.map((c) => `unchanged ${c.path} (${c.what})`),
    ...footer,
  ];
  const strip = ({ path, action, what }: Change) => ({ path, action, what });
  return {
    json: {
      changed: plan.changed.map(strip),
      unchanged: plan.unchanged.map(strip),
      ...(dryRun ? { dryRun: true } : {}),
    },
    text: `${lines.join("\n")}\n`,
  };
}
