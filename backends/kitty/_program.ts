/**
 * Private to the kitty backend: the remote-control program as last read, whose version gates
 * the newer flags (user variables, `--next-to`) and the ownership marks.
 *
 * @module
 */

import semver from "semver";
import type { KittyCommand, KittyProgram } from "./_command.ts";

/** The program, and the version it was last read with. */
export interface ProgramState {
  /** Finds the program and reads its version (once, see {@linkcode KittyCommand.program}). */
  read(signal?: AbortSignal): Promise<KittyProgram>;
  /** Whether the version last read is at least `version` (false before the first read). */
  atLeast(version: string): boolean;
}

/**
 * Creates the program state of a kitty backend.
 *
 * @param kitty The backend's command runner.
 * @returns The state, with no version read yet.
 */
export function createProgramState(kitty: KittyCommand): ProgramState {
  let version: string | undefined;
  return {
    async read(signal) {
      const found = await kitty.program(signal);
      version = found.version;
      return found;
    },
    atLeast: (v) => version !== undefined && semver.gte(version, v),
  };
}
