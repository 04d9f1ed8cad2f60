/**
 * Keys muxbridge no longer reads, its own and those of the backends' sections: a config layer
 * that still names one is used without it, with a warning that says what replaced it.
 *
 * @module
 */

import type { SectionOwner } from "./section.ts";

/**
 * Keys muxbridge itself no longer reads, each with what replaced it (a backend's own removed
 * keys are in its section, `ConfigSection.removed`).
 */
const REMOVED_KEYS: Readonly<Record<string, string>> = {
  idle_confirmations:
    "an idle close no longer waits for status polls: one status read when idle_close_delay_ms ends confirms it",
};

/**
 * Keys muxbridge no longer reads, each with what replaced it: its own and those of the backends'
 * sections (`tmux.control_mode`). A layer that still names one is used without it, and the
 * warning says so: an upgrade never stops a bridge over a setting that does nothing any more. Any
 * other unknown key stays an error.
 *
 * @param backends The backends whose sections count.
 * @returns The removed keys, dotted (`section.key`) for a section's.
 */
export function removedKeys(backends: readonly SectionOwner[]): Readonly<Record<string, string>> {
  return {
    ...Object.fromEntries(
      backends.flatMap((b) =>
        Object.entries(b.config.removed ?? {}).map(([key, why]) => [`${b.name}.${key}`, why])
      ),
    ),
    ...REMOVED_KEYS,
  };
}

/**
 * A layer without the {@linkcode removedKeys}, and a warning for each it held.
 *
 * @param source Where the layer came from, for the warning.
 * @param data The layer as given.
 * @param removed The removed keys.
 * @param warn Receives the warnings.
 * @returns The layer to validate.
 */
export function withoutRemovedKeys(
  source: string,
  data: unknown,
  removed: Readonly<Record<string, string>>,
  warn: ((message: string) => void) | undefined,
): unknown {
  if (!isPlainObject(data)) return data;
  let out: Record<string, unknown> = data;
  for (const [key, why] of Object.entries(removed)) {
    const [head, tail] = key.split(".") as [string, string | undefined];
    const section = out[head];
    if (tail === undefined ? !(head in out) : !(isPlainObject(section) && tail in section)) {
      continue;
    }
    warn?.(`Ignoring the key "${key}" from ${source}: ${why}; delete it from the config`);
    if (tail === undefined) {
      const { [head]: _, ...rest } = out;
      out = rest;
    } else {
      const { [tail]: _, ...rest } = section as Record<string, unknown>;
      out = { ...out, [head]: rest };
    }
  }
  return out;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
