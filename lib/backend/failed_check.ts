/**
 * A failed `doctor` check from anything thrown.
 *
 * @module
 */

import { toMuxError } from "../sys/errors.ts";
import type { Check } from "./backend.ts";

/**
 * A failed `doctor` check from anything thrown: its message, and its own hint or the given one.
 *
 * @param name What was checked.
 * @param err What was thrown.
 * @param hint The hint when the error has none.
 * @returns The check.
 */
export function failedCheck(name: string, err: unknown, hint?: string): Check {
  const e = toMuxError(err);
  const h = e.hint ?? hint;
  return { name, status: "fail", detail: e.message, ...(h ? { hint: h } : {}) };
}
