/**
 * Private to the zellij backend: its traits, what its module declares and its code obeys — the
 * config section, the version gate, the capabilities and the doctor checks.
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
 * The `zellij` config section.
 *
 * @internal
 */
export const ZELLIJ_SECTION = z.strictObject({
  bin: z.string().min(1).default("zellij").describe(
    "The program to run (a name on PATH or a path)",
  ),
  session: plainName("The zellij session to use (else ZELLIJ_SESSION_NAME): a plain name"),
}).prefault({}).describe("zellij backend");

/** The config the zellij backend reads: muxbridge's keys and its `zellij` section. */
export type ZellijConfig = SectionConfig<"zellij", typeof ZELLIJ_SECTION>;

/**
 * The oldest zellij muxbridge supports: pane ids on the CLI came in 0.44.0, `new-pane --tab-id`
 * and a respected `--name` in 0.44.1 (docs/backends/zellij.md §7).
 */
export const ZELLIJ_MIN_VERSION = "0.44.1";

/**
 * zellij's version gate. Never fall back to focus-based actions: before 0.44 `close-pane` closes
 * the focused pane, whatever pane the caller meant (docs/backends/zellij.md §6).
 */
export const ZELLIJ_GATE: VersionGate = {
  program: "zellij",
  scheme: "semver",
  // `zellij 0.44.1`, `zellij 0.45`; a pre-release or build suffix is dropped (its features are
  // the release's).
  pattern: /^zellij\s+v?(?<major>\d+)\.(?<minor>\d+)(?:\.(?<patch>\d+))?(?:[-+][0-9A-Za-z.+-]*)?$/,
  min: ZELLIJ_MIN_VERSION,
  unreadableHint: "Check that zellij.bin names zellij",
  tooOldHint:
    `Upgrade zellij to ${ZELLIJ_MIN_VERSION} or later: older versions cannot address a pane by id`,
};

/**
 * What the zellij backend can do; `focusSafe` only from 0.45.0 (`new-pane --no-focus`): before,
 * zellij focuses every new pane and no flag prevents it.
 */
export const ZELLIJ_CAPABILITIES: Capabilities = {
  layout: false,
  title: true,
  // No per-pane environment: through a private file the pane's /bin/sh reads and removes.
  env: true,
  marks: false,
  focusSafe: true,
  // In the start command, which `list-panes --json` shows as `terminal_command`.
  spawnToken: true,
};

/**
 * How the zellij backend proves a pane is the recorded one (`_identity.ts`,
 * docs/backends/zellij.md §11): the session by its name and the second its server started; the
 * pane's program by the spawn token in its start command (`terminal_command`). zellij names no
 * pid.
 */
export const ZELLIJ_OWNERSHIP: Ownership = {
  instance: "the session: its name and when its server started",
  pid: "none",
};

/** The checks of its `doctor`, in order. */
export const ZELLIJ_DOCTOR = [
  "zellij binary",
  "zellij version",
  "zellij session",
  "zellij anchor",
] as const;
