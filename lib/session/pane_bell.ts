/**
 * A child's pane rings its terminal bell: muxbridge writes BEL to the terminal its own start
 * command runs on, so the multiplexer sees the bell as the pane's output and marks it the way
 * its user configured (tmux's window bell flag and `bell-action`, kitty's and WezTerm's bell,
 * herdr's …), on every backend, with no command of the multiplexer's.
 *
 * Aimed provably at the pane: the process must be this user's, its argv the start command with
 * the pane's exit file (`isHoldProgram`: a private path named by the pane's random spawn token,
 * given to that pane alone), and the terminal the one that process controls and its standard
 * streams name, this user's character device. Anything less rings nothing. The recorded pid is
 * tried first; a backend that tells no pid is searched for the start command (`/proc`).
 *
 * @module
 */

import { controllingTerminal, processArgv, processesWhere, writeTerminal } from "../sys/tty.ts";
import { isHoldProgram } from "./pane_program.ts";

/** What a ring did. */
export type BellOutcome = "rung" | "no_program" | "not_written";

/** Rings a pane's bell. */
export interface PaneBell {
  /**
   * Rings the bell of the pane whose start command reports to `exitFile`.
   *
   * @param pane The pane's exit file, and its program's pid when the backend told it.
   * @returns `rung`; `no_program` when no start command of that pane runs (or `/proc` cannot
   *   tell); `not_written` when its terminal did not take the byte.
   */
  ring(pane: { readonly exitFile: string; readonly pid?: number }): BellOutcome;
}

/** The BEL character. */
const BEL = "\u0007";

/**
 * The real bell, over `/proc` and the pane's terminal device.
 *
 * @returns The bell.
 *
 * @example
 * ```ts
 * import { createPaneBell } from "./pane_bell.ts";
 * const bell = createPaneBell();
 * bell.ring({ exitFile: "/home/me/.local/state/muxbridge/exits/0123abcd" }); // "no_program"
 * ```
 */
export function createPaneBell(): PaneBell {
  return {
    ring({ exitFile, pid }) {
      const ours = (p: number) => {
        const argv = processArgv(p);
        return argv !== undefined && isHoldProgram(argv, exitFile);
      };
      const found = pid !== undefined && ours(pid)
        ? [pid]
        : processesWhere((argv) => isHoldProgram(argv, exitFile));
      // One start command per pane: two would be no proof of which pane is meant.
      if (found.length !== 1) return "no_program";
      const terminal = controllingTerminal(found[0]);
      // Still that start command once its terminal is known (not a pid reused meanwhile).
      if (terminal === undefined || !ours(found[0])) return "no_program";
      return writeTerminal(terminal, BEL) ? "rung" : "not_written";
    },
  };
}
