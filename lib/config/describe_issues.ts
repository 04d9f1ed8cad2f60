/**
 * zod issues in muxbridge's words: one line that names each bad key, for config errors (file,
 * environment, flags, `bridge.hello`) and protocol errors alike.
 *
 * @module
 */

import type { z } from "zod";

/**
 * Formats zod issues as one line that names each bad key.
 *
 * @param issues Zod issues.
 * @returns `key "a.b": message; …`.
 * @internal
 *
 * @example
 * ```ts
 * import { z } from "zod";
 * import { describeIssues } from "./describe_issues.ts";
 * const r = z.strictObject({ size: z.number().max(80) }).safeParse({ size: 90, sise: 1 });
 * if (!r.success) describeIssues(r.error.issues); // 'key "size": the most is 80; unknown key "sise"'
 * ```
 */
export function describeIssues(issues: readonly z.core.$ZodIssue[]): string {
  return issues.map((issue) => {
    const path = issue.path.map(String).join(".");
    if (issue.code === "unrecognized_keys") {
      const keys = issue.keys.map((k) => JSON.stringify(path ? `${path}.${k}` : k)).join(", ");
      return `unknown key ${keys}`;
    }
    return `key ${JSON.stringify(path || "(root)")}: ${problemOf(issue)}`;
  }).join("; ");
}

/**
 * What is wrong with one value, in muxbridge's words rather than the schema library's.
 *
 * @param issue A zod issue.
 * @returns The problem, such as `choose one of a, b` or `the most is 80`.
 * @internal
 */
export function problemOf(issue: z.core.$ZodIssue): string {
  switch (issue.code) {
    case "invalid_value":
      return `choose one of ${issue.values.map(String).join(", ")}`;
    case "invalid_type":
      return `expected ${issue.expected}`;
    case "too_big":
      return `the most is ${issue.maximum}`;
    case "too_small":
      return issue.origin === "string" && Number(issue.minimum) === 1
        ? "it is empty"
        : `the least is ${issue.minimum}`;
    default:
      return issue.message;
  }
}
