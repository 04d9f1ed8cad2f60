/**
 * Environment changes a test undoes. The environment belongs to the whole `deno test` process,
 * which runs every test file one after another: a variable a file sets (or removes) and leaves
 * behind reaches every later file of the run. Tests change it only through these functions.
 *
 * @module
 */

/**
 * Sets (a string) or removes (`undefined`) variables now.
 *
 * @param vars The variables.
 * @returns A function that puts back what was there before (set, or absent).
 *
 * @example Set for one call, restored after it
 * ```ts
 * import { setEnv } from "./env_scope.ts";
 * const restore = setEnv({ OPENCODE_SERVER_PASSWORD: "s3cret", MUXBRIDGE_BIN: undefined });
 * try {
 *   // …load what reads them…
 * } finally {
 *   restore();
 * }
 * ```
 */
export function setEnv(vars: Readonly<Record<string, string | undefined>>): () => void {
  const before = Object.keys(vars).map((k) => [k, Deno.env.get(k)] as const);
  const apply = (entries: ReadonlyArray<readonly [string, string | undefined]>) => {
    for (const [k, v] of entries) v === undefined ? Deno.env.delete(k) : Deno.env.set(k, v);
  };
  apply(Object.entries(vars));
  return () => apply(before);
}

/**
 * {@linkcode setEnv} for the rest of the calling test file: what was there comes back when
 * the file's tests have run (its `unload` event), before the next file starts.
 *
 * @param vars The variables.
 */
export function setEnvForFile(vars: Readonly<Record<string, string | undefined>>): void {
  globalThis.addEventListener("unload", setEnv(vars));
}
