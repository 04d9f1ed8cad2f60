/**
 * Private to the tmux backend: its traits, what its module declares and its code obeys — the config
 * section, the version gate, the capabilities and the doctor checks.
 *
 * @module
 */

import { z } from "zod";
import { plainName } from "../../lib/config/plain_name.ts";
import type {
  Capabilities,
  Ownership,
  SectionConfig,
  VersionGate,
} from "../../lib/backend/backend.ts";

/**
 * The `tmux` config section.
 *
 * @internal
 */
export const TMUX_SECTION = z.strictObject({
  bin: z.string().min(1).default("tmux").describe(
    "The program to run (a name on PATH or a path)",
  ),
  socket_name: plainName(
    "Talk to the tmux server `tmux -L NAME` uses (when muxbridge does not run inside tmux): a plain name (a path goes in socket_path)",
  ),
  socket_path: z.string().min(1).optional().describe(
    "Talk to the tmux server on this socket path (`tmux -S PATH`)",
  ),
  target: z.string().min(1).optional().describe(
    "The pane (or window/session) the first split is made next to when muxbridge does not run inside tmux",
  ),
}).prefault({}).describe("tmux backend");

/** The config the tmux backend reads: muxbridge's keys and its `tmux` section. */
export type TmuxConfig = SectionConfig<"tmux", typeof TMUX_SECTION>;

/**
 * The oldest tmux muxbridge supports: `split-window -e` (a pane's environment, where credentials
 * go) arrived in 3.0 (docs/backends/tmux.md §1).
 */
export const TMUX_GATE: VersionGate = {
  program: "tmux",
  scheme: "semver",
  // `tmux 3.3a` (the letter is a bug-fix release of the same features), `tmux next-3.8`, `3.2`
  // (from `#{version}`), `tmux 3.4-rc`.
  pattern: /^(?:tmux\s+)?(?:next-)?(?<major>\d+)\.(?<minor>\d+)[a-z]?(?:-rc\d*)?$/,
  min: "3.0.0",
  minShown: "3.0",
  unreadableHint: "Check that tmux.bin names tmux",
  tooOldHint: "Install tmux 3.0 or later, or point tmux.bin at a newer tmux",
};

/** What the tmux backend can do. */
export const TMUX_CAPABILITIES: Capabilities = {
  layout: true,
  title: true,
  env: true,
  marks: true,
  focusSafe: true,
  killVerifies: true,
  // The token rides in the start command, which tmux keeps with the pane
  // (`#{pane_start_command}`): `split-window -e` values reach only the program's environment,
  // which no format shows (docs/backends/tmux.md).
  spawnToken: true,
};

/**
 * How the tmux backend proves a pane is the recorded one (`_identity.ts`, docs/backends/tmux.md
 * §13): the server by socket path, pid and start time; the pane's program by the spawn token in
 * its start command, or by the pid tmux started.
 */
export const TMUX_OWNERSHIP: Ownership = {
  instance: "the server: its socket path, pid and start time",
  pid: "multiplexer",
};

/** The checks of its `doctor`, in order. */
export const TMUX_DOCTOR = ["tmux binary", "tmux version", "tmux server", "tmux anchor"] as const;
