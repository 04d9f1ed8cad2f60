/**
 * Private to the herdr backend: its traits, what its module declares and its code obeys — the
 * config section, the version gate (and the socket protocols muxbridge speaks), the capabilities
 * and the doctor checks.
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
 * The `herdr` config section.
 *
 * @internal
 */
export const HERDR_SECTION = z.strictObject({
  bin: z.string().min(1).optional().describe(
    "The herdr program (default: $HERDR_BIN_PATH when it exists, else herdr on PATH)",
  ),
  session: plainName("A named herdr session (`herdr --session NAME`): a plain name"),
  socket_path: z.string().min(1).optional().describe(
    "The herdr API socket (else HERDR_SOCKET_PATH)",
  ),
  transport: z.enum(["auto", "socket", "cli"]).default("auto").describe(
    "How commands reach herdr: auto talks to herdr's API socket directly (no process per command) when it answers with a protocol muxbridge speaks, else runs the herdr CLI, and switches to the CLI for good if the socket fails; socket uses only the socket (a failure is an error); cli runs one herdr process per command",
  ),
}).prefault({}).describe("herdr backend");

/** The config the herdr backend reads: muxbridge's keys and its `herdr` section. */
export type HerdrConfig = SectionConfig<"herdr", typeof HERDR_SECTION>;

/** The oldest herdr muxbridge supports (docs/backends/herdr.md §2). */
export const HERDR_MIN_VERSION = "0.8.2";

/**
 * The socket protocols muxbridge's own socket client speaks: 20 (herdr 0.8.2, whose source was
 * read) through 22 (0.9.0: eleven methods added, none removed or changed among those used here;
 * docs/backends/herdr.md §2). herdr bumps the protocol on most minor releases and its own CLI
 * refuses any server whose protocol differs from its own (docs/backends/herdr.md §6), so a server
 * outside this range is left to the installed herdr CLI, which is herdr's own compatibility check.
 */
export const HERDR_PROTOCOLS = { min: 20, max: 22 } as const;

/** herdr's version gate: previews sort before their release. */
export const HERDR_GATE: VersionGate = {
  program: "herdr",
  scheme: "semver",
  // `herdr 0.9.1`; a preview keeps its pre-release part
  // (`herdr 0.8.0-preview.2026-08-04-d78e3d3b5126`), so it sorts before its release.
  pattern:
    /^herdr\s+v?(?<major>\d+)\.(?<minor>\d+)\.(?<patch>\d+)(?:-(?<pre>[0-9A-Za-z.-]+))?(?:\+\S*)?$/,
  min: HERDR_MIN_VERSION,
  unreadableHint: "Check that herdr.bin names herdr",
  tooOldHint: `Upgrade herdr to ${HERDR_MIN_VERSION} or later (a release, not a preview)`,
};

/**
 * What the herdr backend can do; `spawnToken` needs a readable process environment (Linux
 * `/proc`): elsewhere it is false.
 */
export const HERDR_CAPABILITIES: Capabilities = {
  layout: false,
  title: true,
  env: true,
  marks: false,
  focusSafe: true,
  spawnToken: true,
};

/**
 * How the herdr backend proves a pane is the recorded one (`_identity.ts`,
 * docs/backends/herdr.md §17): the server by its socket path and the socket file; the pane's
 * program by the spawn token in the environment of the shell herdr started for it, or by that
 * pid (herdr's `pane process-info`).
 */
export const HERDR_OWNERSHIP: Ownership = {
  instance: "the server: its socket path and the socket file",
  pid: "multiplexer",
};

/** The checks of its `doctor`, in order. */
export const HERDR_DOCTOR = [
  "herdr binary",
  "herdr transport",
  "herdr version",
  "herdr server",
  "herdr anchor",
] as const;
