/**
 * How muxbridge knows its own files in OpenCode's folders: a plugin file of any muxbridge
 * version (the bundles `muxbridge install` writes now, and the single `muxbridge.ts` older
 * versions wrote), the version it names, and the sidecar `muxbridge.json` that records the
 * command the plugin runs.
 *
 * @module
 */

/** What `install` records beside a plugin (`muxbridge.json`). */
export interface Sidecar {
  /** The command that runs muxbridge (argv prefix). */
  command: string[];
  /** The muxbridge version that installed the plugin. */
  version: string;
  /** Whether install created the plugin folder (uninstall then removes it when empty). */
  createdDir?: boolean;
}

/** The first line of every bundle muxbridge carries (`scripts/gen_plugin_source.ts`). */
const BUNDLE_HEADER = /^\/\/ muxbridge OpenCode plugin (\S+) \(/;

/**
 * Whether a file's text is a muxbridge plugin file (any version, either OpenCode line).
 *
 * @param text The file's text.
 * @returns Whether it is muxbridge's.
 *
 * @example
 * ```ts
 * import { isMuxbridgePlugin } from "./plugin_files.ts";
 * isMuxbridgePlugin("// muxbridge OpenCode plugin 0.1.0 (OpenCode 1.x, muxbridge.js)\n"); // true
 * isMuxbridgePlugin("export default {}\n"); // false
 * ```
 */
export function isMuxbridgePlugin(text: string): boolean {
  if (BUNDLE_HEADER.test(text)) return true;
  // muxbridge 0.1's single file, `plugin/muxbridge.ts`.
  return text.includes("The muxbridge OpenCode plugin") && text.includes("MuxbridgePlugin");
}

/**
 * The version a plugin file was released with, if it says.
 *
 * @param text The plugin's text.
 * @returns `X.Y.Z`, or undefined.
 */
export function pluginVersion(text: string): string | undefined {
  return BUNDLE_HEADER.exec(text)?.[1] ?? /const PLUGIN_VERSION = "([^"]+)"/.exec(text)?.[1];
}

/**
 * Reads the sidecar `install` wrote; null when absent or not muxbridge's.
 *
 * @param text The sidecar's text, or null.
 * @returns The recorded command and version.
 */
export function readSidecar(text: string | null): Sidecar | null {
  if (text === null) return null;
  try {
    const data = JSON.parse(text);
    if (
      !Array.isArray(data?.command) || data.command.length === 0 ||
      !data.command.every((a: unknown) => typeof a === "string" && a !== "") ||
      typeof data.version !== "string"
    ) return null;
    return {
      command: data.command,
      version: data.version,
      ...(data.createdDir === true ? { createdDir: true } : {}),
    };
  } catch {
    return null;
  }
}

/**
 * The sidecar's text.
 *
 * @param sidecar What to record.
 * @returns Pretty JSON with a final newline.
 */
export function sidecarText(sidecar: Sidecar): string {
  const { command, version, createdDir } = sidecar;
  return `${
    JSON.stringify({ command, version, ...(createdDir ? { createdDir } : {}) }, null, 2)
  }\n`;
}
