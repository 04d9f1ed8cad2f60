/**
 * Hint texts that name the backends, built from the registry so that they name every backend
 * there is and no other.
 *
 * @module
 */

import type { BackendModule } from "./backend.ts";

/** Joins names as prose: `a`, `a or b`, `a, b or c`. */
function either(names: readonly string[]): string {
  return names.length <= 1
    ? names.join("")
    : `${names.slice(0, -1).join(", ")} or ${names[names.length - 1]}`;
}

/**
 * The backends muxbridge finds by itself, as prose names them: where to run OpenCode.
 *
 * @param backends The backends (the registry), in its order.
 * @returns `tmux, zellij, herdr, cmux, kitty or WezTerm`.
 *
 * @example
 * ```ts
 * import type { BackendModule } from "./backend.ts";
 * import { detectedTitles } from "./hints.ts";
 *
 * const hint = (backends: readonly BackendModule[]) =>
 *   `Run OpenCode inside ${detectedTitles(backends)}`;
 * ```
 */
export function detectedTitles(backends: readonly BackendModule[]): string {
  const titles = backends.filter((b) => b.detect !== null).map((b) => b.title);
  return titles.length > 0 ? either(titles) : "a supported multiplexer";
}

/**
 * The config keys that point muxbridge at a backend the environment does not show
 * ({@linkcode BackendHints.outside}), for a hint: `tmux.target, or provider.command`.
 *
 * @param backends The backends (the registry), in its order.
 * @returns The keys, joined with `, or `; empty when none has one.
 */
export function outsideKeys(backends: readonly BackendModule[]): string {
  return backends.flatMap((b) => b.hints.outside === undefined ? [] : [b.hints.outside])
    .join(", or ");
}
