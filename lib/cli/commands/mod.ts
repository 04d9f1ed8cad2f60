/**
 * The command table, in the order `--help` lists it.
 *
 * @module
 */

import type { Command } from "./_command.ts";
import { bridgeCommand } from "./bridge.ts";
import { cleanupCommand } from "./cleanup.ts";
import { closeCommand } from "./close.ts";
import { demoCommand } from "./demo.ts";
import { detectCommand } from "./detect.ts";
import { doctorCommand } from "./doctor.ts";
import { installCommand } from "./install.ts";
import { layoutCommand } from "./layout.ts";
import { listCommand } from "./list.ts";
import { schemaCommand } from "./schema.ts";
import { spawnCommand } from "./spawn.ts";
import { uninstallCommand } from "./uninstall.ts";
import { versionCommand } from "./version.ts";

/** Every command. */
export const COMMANDS: readonly Command[] = [
  installCommand,
  uninstallCommand,
  bridgeCommand,
  detectCommand,
  spawnCommand,
  closeCommand,
  layoutCommand,
  listCommand,
  cleanupCommand,
  doctorCommand,
  schemaCommand,
  demoCommand,
  versionCommand,
];
