/**
 * Building a backend from its module: its own config section checked by its own schema first.
 *
 * @module
 */

import type { Config } from "../config/config.ts";
import type { Backend, BackendDeps, BackendModule } from "./backend.ts";

/**
 * Builds a backend: its section of the config passes the section's schema (defaults filled where
 * the config has none), then the module loads the backend's code and builds it. Nothing runs yet:
 * `probe` is the first call that talks to the multiplexer.
 *
 * @param module The backend's module (a registry entry).
 * @param deps What backends are built from.
 * @returns The backend, not yet probed.
 * @throws {z.ZodError} when the config's section does not fit the schema (a config resolved
 *   without this backend's section and with a bad one).
 *
 * @example
 * ```ts
 * import type { BackendDeps, BackendModule } from "./backend.ts";
 * import { createBackend } from "./create_backend.ts";
 *
 * async function build(module: BackendModule, deps: BackendDeps) {
 *   const backend = await createBackend(module, deps);
 *   await backend.probe();
 *   return backend;
 * }
 * ```
 */
export function createBackend<C extends Config>(
  module: BackendModule,
  deps: BackendDeps<C>,
): Promise<Backend> {
  const given = (deps.config as Record<string, unknown>)[module.name];
  const config = { ...deps.config, [module.name]: module.config.schema.parse(given) };
  return module.create({ ...deps, config });
}
