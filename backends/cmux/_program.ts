/**
 * Private to the cmux backend: the cmux program as found, its version gated and the optional
 * flags of its `new-split`, read once per backend.
 *
 * @module
 */

import { keepSuccess } from "../../lib/backend/_keep_success.ts";
import { gateVersion } from "../../lib/backend/_version_gate.ts";
import { type CmuxCommand, cmuxError } from "./_command.ts";
import { parseSplitHelp, type SplitFeatures } from "./_parse.ts";
import { CMUX_GATE } from "./_traits.ts";

/** The cmux program as found. */
export interface CmuxProgram {
  /** The version, semver. */
  version: string;
  /** The version line as printed. */
  text: string;
  /** Which optional `new-split` flags it has. */
  features: SplitFeatures;
}

/**
 * Creates the version gate of a cmux backend, which also reads `new-split --help` for its
 * optional flags.
 *
 * @param cmux The backend's command runner.
 * @returns The gate: run once per backend (a failure is retried next time).
 */
export function createProgram(cmux: CmuxCommand): (signal?: AbortSignal) => Promise<CmuxProgram> {
  const readVersion = async (signal?: AbortSignal) => {
    const run = await cmux.bare(["--version"], signal);
    const text = run.stdout.trim().split("\n")[0] ?? "";
    if (run.code !== 0) throw cmuxError("read the cmux version", run);
    const version = gateVersion(CMUX_GATE, text, { argv: run.argv }).semver;
    return { version, text };
  };

  return keepSuccess(async (signal?: AbortSignal) => {
    const { version, text } = await readVersion(signal);
    // `<command> --help` works without a socket (docs/backends/cmux.md §3).
    const help = await cmux.bare(["new-split", "--help"], signal);
    const features = parseSplitHelp(help.code === 0 ? `${help.stdout}\n${help.stderr}` : "");
    return { version, text, features };
  });
}
