/**
 * Private to backends: a detected layer without the fields the environment did not give, as a
 * backend's `detect.read` returns it.
 *
 * @module
 */

import type { Layer } from "./identity.ts";

/** A layer's fields, any of the optional ones possibly undefined. */
export type LayerFields = { [K in keyof Layer]: Layer[K] | undefined } & {
  backend: string;
  paneId: string | null;
};

/**
 * Builds a layer, leaving out each optional field that is undefined (so that `detect --json`
 * shows only what was found).
 *
 * @param fields The fields.
 * @returns The layer.
 *
 * @example
 * ```ts
 * import { layerOf } from "./_layer.ts";
 * layerOf({ backend: "tmux", paneId: "%1", socket: undefined, pid: 42 });
 * // { backend: "tmux", paneId: "%1", pid: 42 }
 * ```
 */
export function layerOf(fields: LayerFields): Layer {
  const layer: Layer = { backend: fields.backend, paneId: fields.paneId };
  for (const [key, value] of Object.entries(fields)) {
    if (value !== undefined) (layer as unknown as Record<string, unknown>)[key] = value;
  }
  return layer;
}
