/**
 * Defensive reading of what a multiplexer printed: JSON through a zod schema, and the one
 * `unparseable_output` error every backend reports when its program's output is not the shape
 * muxbridge knows. Nothing here throws on bad input except by returning that error.
 *
 * @module
 */

import { cut, MuxError } from "./errors.ts";

/** What {@linkcode parseJson} needs of a schema: zod's `safeParse`. */
export interface OutputSchema<T> {
  /** Checks a value: its data on success. */
  safeParse(value: unknown): { success: true; data: T } | { success: false };
}

/**
 * Parses JSON text against a schema.
 *
 * @param schema The expected shape (an object or array: `undefined` means "not this shape").
 * @param text The text.
 * @returns The value, or `undefined` when the text is not JSON or not of that shape.
 *
 * @example
 * ```ts
 * import { z } from "zod";
 * import { parseJson } from "./parse_output.ts";
 * const PaneList = z.array(z.object({ id: z.string() }));
 * parseJson(PaneList, '[{"id":"%1"}]'); // [{ id: "%1" }]
 * parseJson(PaneList, "tmux: no server running"); // undefined
 * ```
 */
export function parseJson<T>(schema: OutputSchema<T>, text: string): T | undefined {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return undefined;
  }
  const parsed = schema.safeParse(json);
  return parsed.success ? parsed.data : undefined;
}

/**
 * The error for output a program printed in a shape muxbridge does not know: the text is quoted
 * (cut to 256 characters) so the report shows what came.
 *
 * @param program The program, as messages name it: `zellij`.
 * @param what What was read: `pane list`.
 * @param raw What the program printed.
 * @param versionCommand How to show its version in a report. @default `<program> --version`
 * @returns A `unparseable_output` error.
 */
export function unparseableOutput(
  program: string,
  what: string,
  raw: string,
  versionCommand = `${program} --version`,
): MuxError {
  return new MuxError(
    "unparseable_output",
    `Cannot read ${program}'s ${what}: unexpected output ${JSON.stringify(cut(raw, 256))}`,
    { hint: `Report this with \`${versionCommand}\` and the output shown` },
  );
}
