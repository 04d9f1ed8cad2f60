/**
 * Private to the wezterm backend: its traits, what its module declares and its code obeys — the
 * config section, the version gate (versions are dates), the capabilities and the doctor checks.
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
 * The `wezterm` config section.
 *
 * @internal
 */
export const WEZTERM_SECTION = z.strictObject({
  bin: z.string().min(1).default("wezterm").describe(
    "The program to run (a name on PATH or a path)",
  ),
  socket_path: z.string().min(1).optional().describe(
    "The WezTerm GUI or mux socket to talk to (else WEZTERM_UNIX_SOCKET)",
  ),
  pane_id: z.number().int().min(0).optional().describe(
    "The WezTerm pane new panes split next to (else WEZTERM_PANE)",
  ),
}).prefault({}).describe("wezterm backend");

/** The config the wezterm backend reads: muxbridge's keys and its `wezterm` section. */
export type WeztermConfig = SectionConfig<"wezterm", typeof WEZTERM_SECTION>;

/**
 * The oldest WezTerm muxbridge supports: `kill-pane` and `activate-pane` came in
 * 20230326-111934-3666303c (§3); `split-pane --right/--bottom/--percent`, `send-text
 * --no-paste` and `list --format json` are older (20220624-141144-bd1b7c5d).
 */
export const WEZTERM_MIN_VERSION = "20230326-111934-3666303c";

/**
 * WezTerm's version gate. `wezterm --version` prints `wezterm 20240203-110809-5046fc22`, the
 * commit's date and time (§5); releases and nightlies share the scheme, and the date is what
 * orders them, never a semver reading of the digits.
 */
export const WEZTERM_GATE: VersionGate = {
  program: "wezterm",
  scheme: "date",
  pattern: /^(?:wezterm\s+)?(?<date>\d{8})-(?<time>\d{6})-(?<commit>[0-9a-f]{6,40})\b/,
  min: WEZTERM_MIN_VERSION,
  unreadableHint:
    "Check that wezterm.bin names wezterm (a build without its version tag cannot be gated)",
  tooOldHint: `Update WezTerm to ${WEZTERM_MIN_VERSION} or later (kill-pane came then)`,
};

/**
 * What the wezterm backend can do; `spawnToken` only where pane programs' environments can be
 * read (Linux `/proc`) and the socket muxbridge talks to is known.
 */
export const WEZTERM_CAPABILITIES: Capabilities = {
  layout: false,
  title: false,
  env: true,
  marks: false,
  focusSafe: true,
  spawnToken: true,
};

/**
 * How the WezTerm backend proves a pane is the recorded one (`_identity.ts`,
 * docs/backends/wezterm.md §6): the GUI or mux server by its socket (path, file, and the GUI's
 * pid its name carries); the pane's program by the spawn token in the environment of the program
 * whose `WEZTERM_PANE` is the pane. Its pids come from those environments, so they are signalled
 * only while the token is there.
 */
export const WEZTERM_OWNERSHIP: Ownership = {
  instance: "the GUI or mux server: its socket path, the socket file and the GUI's pid",
  pid: "claimed",
};

/** The checks of its `doctor`, in order. */
export const WEZTERM_DOCTOR = [
  "wezterm binary",
  "wezterm version",
  "wezterm mux",
  "wezterm anchor",
  "wezterm credentials",
  "wezterm spawn token",
] as const;
