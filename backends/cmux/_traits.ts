/**
 * Private to the cmux backend: its traits, what its module declares and its code obeys — the config
 * section, the version gate, the capabilities and the doctor checks.
 *
 * @module
 */

import { z } from "zod";
import type {
  Capabilities,
  Ownership,
  SectionConfig,
  VersionGate,
} from "../../lib/backend/backend.ts";

/**
 * The `cmux` config section.
 *
 * @internal
 */
export const CMUX_SECTION = z.strictObject({
  bin: z.string().min(1).default("cmux").describe(
    "The program to run (a name on PATH or a path)",
  ),
  socket_path: z.string().min(1).optional().describe("The cmux socket (else CMUX_SOCKET_PATH)"),
}).prefault({}).describe("cmux backend");

/** The config the cmux backend reads: muxbridge's keys and its `cmux` section. */
export type CmuxConfig = SectionConfig<"cmux", typeof CMUX_SECTION>;

/**
 * The oldest cmux muxbridge supports. 0.64.14 is the first build with what this backend relies on
 * together: v2 `--json` results for `new-split`, `--id-format uuids`, `--workspace` on every
 * per-surface command and `respawn-pane --command`; older CLIs printed v1 text for splits
 * (docs/backends/cmux.md §6).
 */
export const CMUX_MIN_VERSION = "0.64.14";

/** cmux's version gate. */
export const CMUX_GATE: VersionGate = {
  program: "cmux",
  scheme: "semver",
  // `cmux 0.64.17`, or `cmux 0.64.22 (102) [ddd4a01bc]` (docs/backends/cmux.md §6).
  pattern: /^cmux\s+v?(?<major>\d+)\.(?<minor>\d+)\.(?<patch>\d+)\b/,
  min: CMUX_MIN_VERSION,
  unreadableHint: "Check that cmux.bin names the cmux CLI",
  tooOldHint: `Update the cmux app to ${CMUX_MIN_VERSION} or later`,
};

/** What the cmux backend can do. */
export const CMUX_CAPABILITIES: Capabilities = {
  // No named layouts on the CLI (docs/backends/cmux.md §8): surfaces stay where new-split puts them.
  layout: false,
  title: true,
  // No per-surface environment flag, and typed text lands in the shell's memory and on screen:
  // credentials go into a private file the typed `/bin/sh` reads and removes (only its path is
  // typed; lib/sys/credentials_file.ts).
  env: true,
  // No place on a surface for muxbridge's marks (the title is the session's own).
  marks: false,
  focusSafe: true,
  // Nothing muxbridge can set on a surface at creation shows in `tree` (no environment, no
  // command, no user data): a split whose answer is unusable is cleaned up at once by comparing
  // the workspace before and after; one answering after the timeout is not found
  // (docs/backends/cmux.md).
  spawnToken: false,
};

/**
 * How the cmux backend proves a surface is the recorded one (`_identity.ts`,
 * docs/backends/cmux.md §10): the app by its socket path and the socket file; the surface by its
 * UUID, which cmux makes at random for each surface and never hands out again. cmux shows
 * nothing of a surface's program (no pid, no command).
 */
export const CMUX_OWNERSHIP: Ownership = {
  instance: "the app: its socket path and the socket file",
  pid: "none",
  uniqueIds: true,
};

/** The checks of its `doctor`, in order. */
export const CMUX_DOCTOR = [
  "cmux binary",
  "cmux version",
  "cmux new-split",
  "cmux identity",
  "cmux socket",
  "cmux surface",
] as const;
