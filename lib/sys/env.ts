/**
 * Reading the environment through an injected lookup: only `main.ts` reads the real one, and
 * tests pass a map-backed one.
 *
 * @module
 */

/** Reads one environment variable; `undefined` when unset. */
export type EnvLookup = (name: string) => string | undefined;

/**
 * One variable's value, with an empty value read as unset.
 *
 * @param env The environment lookup.
 * @param name The variable.
 * @returns Its value, or undefined when it is unset or empty.
 *
 * @example
 * ```ts
 * import { envText } from "./env.ts";
 * const vars: Record<string, string> = { TMUX: "" };
 * envText((k) => vars[k], "TMUX"); // undefined
 * ```
 */
export function envText(env: EnvLookup, name: string): string | undefined {
  const v = env(name);
  return v === undefined || v === "" ? undefined : v;
}

/**
 * A variable's value read as a non-negative integer (a pid, a window id).
 *
 * @param value The value, or undefined.
 * @returns The number, or undefined when the value is not decimal digits.
 *
 * @example
 * ```ts
 * import { envInt } from "./env.ts";
 * envInt("2211"); // 2211
 * envInt("12x"); // undefined
 * ```
 */
export function envInt(value: string | undefined): number | undefined {
  if (value === undefined || !/^\d+$/.test(value)) return undefined;
  return Number(value);
}
