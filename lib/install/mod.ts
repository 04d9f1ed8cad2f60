/**
 * `muxbridge install` and `uninstall` as plans: which OpenCode lines this user has
 * (`detect.ts`), where OpenCode loads plugins for this user (`locations.ts`), what to write, edit
 * and remove to put the plugins this binary carries there (`install.ts`, with the 1.x file in
 * `install_v1.ts` and the 2.x folder in `install_v2.ts`; `plugin_source.ts` carries them,
 * `plugin_files.ts` knows muxbridge's own files), editing a user's JSONC config without touching
 * bytes it does not need to change (`jsonc.ts`), the file seam (`files.ts`) and how this binary
 * runs itself (`self_command.ts`, `find_on_path.ts`).
 *
 * May import: `lib/sys/` only; the CLI commands run its plans. `tests/import_direction_test.ts` keeps it so.
 *
 * @module
 */

export { applyPlan, type Plan, planInstall, planUninstall } from "./install.ts";
export { opencodeLocations } from "./locations.ts";
