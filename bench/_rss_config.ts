/**
 * A step of `rss_modules.ts`: imported, it resolves the config the way a bridge does (every
 * backend's section, the registry's schema built once), so its cost can be told from the cost of
 * loading the modules.
 *
 * @module
 */

import { BACKENDS } from "../backends/mod.ts";
import { resolveConfig } from "../lib/config/config.ts";

/** The config, resolved at import. */
export const resolved: unknown = resolveConfig({ backends: BACKENDS, env: () => undefined });
