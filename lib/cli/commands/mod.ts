/**
 * Every command, loaded, in the order `--help` lists them: for the README generator and the
 * tests. The binary loads only the command it runs (`load.ts`, the one table of commands).
 *
 * @module
 */

import type { Command } from "./_command.ts";
import { loadCommands } from "./load.ts";

/** Every command. */
export const COMMANDS: readonly Command[] = await loadCommands([]);
