/**
 * What every part of the plugin shares: reading values of unknown shape without casts, the log
 * callback, and the guard that keeps a thrown error out of OpenCode.
 *
 * @module
 */

/** A value of unknown shape, read without casts. */
export type Bag = Record<string, unknown>;

/** `v` when it is an object, else an empty one. */
export const bag = (v: unknown): Bag => (typeof v === "object" && v !== null ? v as Bag : {});

/** `v` when it is a string. */
export const text = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);

/** Where the plugin's own lines go. */
export type Log = (message: string) => void;

/** Wraps a callback so that what it throws becomes a log line, never OpenCode's problem. */
export type Guard = <A extends unknown[]>(fn: (...args: A) => void) => (...args: A) => void;

/** A {@linkcode Guard} that logs to `log`. */
export function guardWith(log: Log): Guard {
  return <A extends unknown[]>(fn: (...args: A) => void) => (...args: A) => {
    try {
      fn(...args);
    } catch (err) {
      log(`internal error: ${(err as Error)?.stack ?? err}`);
    }
  };
}

/**
 * The muxbridge release this plugin belongs to (a test keeps it equal to deno.json; the bundles
 * carry it in their first line, where `muxbridge install` and `doctor` read it).
 */
export const PLUGIN_VERSION = "0.1.0";
