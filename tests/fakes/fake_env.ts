/**
 * A map-backed environment lookup, so tests never read the real environment.
 *
 * @module
 */

import type { EnvLookup } from "../../lib/backend/identity.ts";

/**
 * Creates an environment lookup over a plain object.
 *
 * @param vars The variables.
 * @returns The lookup.
 */
export function fakeEnv(vars: Record<string, string> = {}): EnvLookup {
  return (name) => Object.hasOwn(vars, name) ? vars[name] : undefined;
}
