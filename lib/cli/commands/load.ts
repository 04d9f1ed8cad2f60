/**
 * The commands, loaded on demand: a run loads the module of the command it names and no other,
 * so `muxbridge bridge` does not hold the CLI-only commands (doctor, demo, schema, …) and what
 * they import in memory for its whole life (`bench/idle.ts` measures it).
 *
 * @module
 */

import type { Command } from "./_command.ts";

/**
 * Each command's module, in the order `--help` lists them: the one table of commands (a new
 * command is one line here; `mod.ts` loads them all for the README generator and the tests).
 */
export const COMMAND_LOADERS: Readonly<Record<string, () => Promise<Command>>> = {
  install: async () => (await import("./install.ts")).installCommand,
  uninstall: async () => (await import("./uninstall.ts")).uninstallCommand,
  bridge: async () => (await import("./bridge.ts")).bridgeCommand,
  detect: async () => (await import("./detect.ts")).detectCommand,
  spawn: async () => (await import("./spawn.ts")).spawnCommand,
  close: async () => (await import("./close.ts")).closeCommand,
  layout: async () => (await import("./layout.ts")).layoutCommand,
  list: async () => (await import("./list.ts")).listCommand,
  cleanup: async () => (await import("./cleanup.ts")).cleanupCommand,
  doctor: async () => (await import("./doctor.ts")).doctorCommand,
  schema: async () => (await import("./schema.ts")).schemaCommand,
  demo: async () => (await import("./demo.ts")).demoCommand,
  version: async () => (await import("./version.ts")).versionCommand,
};

/**
 * The commands an argv can run: those it names anywhere (the parser then picks the one in
 * command position), or all of them when it names none (`--help`, `--version`, a typo), so the
 * parser sees what it would with every command loaded.
 *
 * @param argv The arguments after the program name.
 * @returns The loaded commands, in `--help` order.
 *
 * @example
 * ```ts
 * import { loadCommands } from "./load.ts";
 * const commands = await loadCommands(["bridge", "--url", "http://127.0.0.1:4096"]);
 * commands.map((c) => c.name); // ["bridge"]
 * ```
 */
export async function loadCommands(argv: readonly string[]): Promise<Command[]> {
  const all = Object.keys(COMMAND_LOADERS);
  const named = all.filter((name) => argv.includes(name));
  return await Promise.all((named.length > 0 ? named : all).map((n) => COMMAND_LOADERS[n]()));
}
