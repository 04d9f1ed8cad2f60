/**
 * The command that runs this very muxbridge, as `install` records it for the plugin: the
 * compiled binary's absolute path, or the runtime plus the entry point when it runs from source
 * (`deno run … main.ts`, `bun main.ts`).
 *
 * @module
 */

import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** What the entry point knows about how it runs. */
export interface SelfInfo {
  /** The running executable (`process.execPath` / `Deno.execPath()`). */
  execPath: string;
  /** The entry module's URL (`import.meta.url` of main.ts). */
  mainUrl: string;
  /** The runtime running it. */
  runtime: "deno" | "bun" | "node";
  /** Whether a file exists (to name deno.json when it sits beside the entry). */
  exists(path: string): boolean;
}

/**
 * The argv prefix that runs this muxbridge from anywhere.
 *
 * @param info How it runs.
 * @returns `[binary]` when compiled, else the runtime, its flags and the entry point.
 *
 * @example A compiled binary
 * ```ts
 * import { selfCommand } from "./self_command.ts";
 * selfCommand({
 *   execPath: "/home/me/.local/bin/muxbridge",
 *   mainUrl: "file:///$bunfs/root/muxbridge",
 *   runtime: "bun",
 *   exists: () => false,
 * });
 * // ["/home/me/.local/bin/muxbridge"]
 * ```
 */
export function selfCommand(info: SelfInfo): string[] {
  // Bun's compiled binaries run their modules from /$bunfs/; `deno compile` from a temporary
  // deno-compile-* folder. Either way the executable is muxbridge itself.
  if (!info.mainUrl.startsWith("file:") || /\/\$bunfs\/|\/deno-compile-/.test(info.mainUrl)) {
    return [info.execPath];
  }
  const main = fileURLToPath(info.mainUrl);
  if (info.runtime === "deno") {
    // deno.json maps the bare imports (zod, semver) and node_modules; Deno looks for it from
    // the working directory, which for the bridge is OpenCode's project: name it.
    const config = join(dirname(main), "deno.json");
    return [
      info.execPath,
      "run",
      "--allow-all",
      ...(info.exists(config) ? ["--config", config] : []),
      main,
    ];
  }
  return [info.execPath, main];
}
