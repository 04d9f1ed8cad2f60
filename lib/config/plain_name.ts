/**
 * The config's form of a plain name (`lib/sys/validate.ts` {@linkcode plainNameProblem}): the
 * keys that name a multiplexer socket or session (`tmux.socket_name`, `zellij.session`,
 * `herdr.session`) are refused, with the key named, when the name could leave the directory
 * the multiplexer joins it onto — whichever layer (file, flags, `bridge.hello`) gives it.
 *
 * @module
 */

import { z } from "zod";
import { plainNameProblem } from "../sys/validate.ts";

/**
 * A schema for a key that names a socket or a session: a string that is a plain name.
 *
 * @param description What the key is, for `schema config`.
 * @returns The (optional) schema.
 * @internal
 *
 * @example
 * ```ts
 * import { plainName } from "./plain_name.ts";
 * plainName("A tmux socket name").safeParse("../evil/s").success; // false
 * ```
 */
export function plainName(description: string): z.ZodOptional<z.ZodString> {
  return z.string().min(1).superRefine((value, ctx) => {
    const problem = plainNameProblem(value);
    if (problem !== null) {
      ctx.addIssue({
        code: "custom",
        message:
          `${problem} (a socket or session name is 1-64 letters, digits, '.', '_' or '-', starting with a letter, digit or '_', with no ".." in it)`,
      });
    }
  }).optional().describe(description);
}
