/**
 * The config as muxbridge resolves it, with every backend's section (`lib/config/config.ts` on its own
 * knows no backend: `main.ts` hands it the registry).
 *
 * @module
 */

import { BACKENDS } from "../../backends/mod.ts";
import {
  type Config,
  type ConfigSources,
  resolveConfig as resolveWith,
} from "../../lib/config/config.ts";
import type { SectionsOf } from "../../lib/config/section.ts";
import { detectIdentity, type EnvLookup, type Identity } from "../../lib/backend/identity.ts";

/** A config resolved with every backend's section. */
export type FullConfig = Config & SectionsOf<typeof BACKENDS>;

/**
 * Resolves the config with the registry's backends.
 *
 * @param sources The layers.
 * @returns The config, each backend's section typed.
 */
export function resolveConfig(sources: Omit<ConfigSources, "backends">): FullConfig {
  return resolveWith({ ...sources, backends: BACKENDS });
}

/**
 * Detects the identity with the registry's backends.
 *
 * @param env The environment lookup.
 * @returns What detection found.
 */
export function detectAll(env: EnvLookup): Identity {
  return detectIdentity(env, BACKENDS);
}
