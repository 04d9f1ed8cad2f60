/**
 * Private to the kitty backend: its traits, what its module declares and its code obeys — the
 * config section, the version gate, the capabilities and the doctor checks.
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
 * The `kitty` config section.
 *
 * @internal
 */
export const KITTY_SECTION = z.strictObject({
  bin: z.string().min(1).optional().describe(
    "The remote-control program (default: `kitten` when present, else `kitty`)",
  ),
  listen_on: z.string().min(1).optional().describe(
    "The kitty remote-control address, such as unix:/tmp/kitty (else KITTY_LISTEN_ON)",
  ),
  window_id: z.number().int().positive().optional().describe(
    "The kitty window panes open next to, in its tab (else KITTY_WINDOW_ID when muxbridge runs in the kitty listen_on names; else kitty's active tab)",
  ),
}).prefault({}).describe("kitty backend");

/** The config the kitty backend reads: muxbridge's keys and its `kitty` section. */
export type KittyConfig = SectionConfig<"kitty", typeof KITTY_SECTION>;

/** The oldest kitty muxbridge supports (the contract: kitty >= 0.26, remote control on). */
export const KITTY_MIN_VERSION = "0.26.0";

/** kitty's version gate. */
export const KITTY_GATE: VersionGate = {
  program: "kitty",
  scheme: "semver",
  // `kitty 0.26.5 created by Kovid Goyal` (live) or `kitten 0.32.2 created by Kovid Goyal`.
  pattern: /^(?:kitty|kitten)\s+v?(?<major>\d+)\.(?<minor>\d+)(?:\.(?<patch>\d+))?\b/,
  min: KITTY_MIN_VERSION,
  minShown: "0.26",
  unreadableHint: "Check that kitty.bin names kitty or kitten",
  tooOldHint: "Install kitty 0.26 or later, or point kitty.bin at a newer kitten or kitty",
};

/**
 * What the kitty backend can do; `marks` only from 0.30.0 (`launch --var`, `ls` `user_vars`:
 * docs/backends/kitty.md §6).
 */
export const KITTY_CAPABILITIES: Capabilities = {
  layout: true,
  title: true,
  env: true,
  marks: true,
  focusSafe: true,
  spawnToken: true,
};

/**
 * How the kitty backend proves a window is the recorded one (docs/backends/kitty.md §9): kitty
 * by its remote-control address and the socket file it binds (or its pid, from inside it); the
 * window's program by the spawn token in its environment as `ls` shows it, or by the pid kitty
 * started.
 */
export const KITTY_OWNERSHIP: Ownership = {
  instance: "kitty: its remote-control address and its socket file (or pid)",
  pid: "multiplexer",
};

/** The checks of its `doctor`, in order. */
export const KITTY_DOCTOR = [
  "kitty binary",
  "kitty version",
  "kitty ownership marks",
  "kitty remote control",
  "kitty anchor",
] as const;
