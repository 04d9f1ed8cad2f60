/**
 * Private to the herdr backend: the parsers of what herdr answers (version text, the JSON result
 * envelope the CLI prints on stdout and the socket answers, the JSON error line on stderr).
 *
 * Shapes come from `docs/backends/herdr.md` ("§N"): the herdr 0.8.2 source (`src/cli.rs`,
 * `src/api/schema/*.rs`) and the live-captured fixtures of sneat-dev/wb (herdr 0.9.x). herdr
 * cannot run here; nothing was captured live by muxbridge.
 *
 * @module
 */

import { z } from "zod";
import { checkPaneId } from "../../lib/backend/_pane_id.ts";
import { readVersion } from "../../lib/backend/_version_gate.ts";
import { parseJson, unparseableOutput } from "../../lib/sys/parse_output.ts";
import type { PaneId } from "../../lib/sys/validate.ts";
import { HERDR_GATE } from "./_traits.ts";

/**
 * Turns `herdr --version` output into semver as {@linkcode HERDR_GATE} reads it: `herdr 0.9.1`
 * → `0.9.1`; a preview build keeps its pre-release part
 * (`herdr 0.8.0-preview.2026-08-04-d78e3d3b5126` → `0.8.0-preview.…`), so it sorts before its
 * release (docs/backends/herdr.md §2).
 *
 * @param text What `herdr --version` printed.
 * @returns The semver text, or null when it is not a herdr version.
 */
export function parseHerdrVersion(text: string): string | null {
  return readVersion(HERDR_GATE, text)?.semver ?? null;
}

/**
 * Makes a herdr pane id: a validated target without whitespace. herdr ids are `w1:p3`, `w3:pB`
 * (bijective base 32: letters are digits, docs/backends/herdr.md §3): never parsed as numbers.
 *
 * @param text The id, as herdr answered it or as muxbridge was handed it.
 * @returns The pane id.
 * @throws {MuxError} `invalid_argument` for any other form.
 */
export function herdrPaneId(text: string): PaneId {
  return checkPaneId(text, /^\S+$/, 'A herdr pane id looks like "w1:p3"');
}

/** A pane in a result: the fields muxbridge reads (PaneInfo, docs/backends/herdr.md §9). */
const PaneSchema = z.object({
  pane_id: z.string().min(1),
  label: z.string().optional(),
});

/** `pane split`, `pane get`, `pane rename`: `{"id","result":{"pane":PaneInfo,"type":"pane_info"}}`. */
export const PaneResultSchema = z.object({ result: z.object({ pane: PaneSchema }) });

/** `pane list`: `{"id","result":{"panes":[PaneInfo…],"type":"pane_list"}}`. */
export const PaneListSchema = z.object({ result: z.object({ panes: z.array(PaneSchema) }) });

/** `pane close`: `{"id","result":{"type":"ok"}}`. */
export const OkSchema = z.object({ result: z.object({ type: z.literal("ok") }) });

/**
 * `pane process-info`: `{"id","result":{"process_info":{"pane_id","shell_pid"?,…},
 * "type":"pane_process_info"}}` (`src/api/schema/response.rs`).
 */
export const ProcessInfoSchema = z.object({
  result: z.object({
    process_info: z.object({ shell_pid: z.number().int().positive().optional() }),
  }),
});

/**
 * `ping` on the socket: `{"id","result":{"type":"pong","version","protocol","capabilities"}}`
 * (docs/backends/herdr.md §6; `capabilities` may be null or absent).
 */
export const PongSchema = z.object({
  result: z.object({
    type: z.literal("pong"),
    version: z.string().min(1),
    protocol: z.number().int().nonnegative(),
  }),
});

/**
 * One answer line on the socket: `{"id","result":{"type",…}}` or `{"id","error":{"code",
 * "message"}}`, fields in struct order (docs/backends/herdr.md §6; the order does not matter to a
 * JSON parser).
 */
export const WireReplySchema = z.union([
  z.object({ id: z.string(), result: z.object({ type: z.string().min(1) }) }),
  z.object({ id: z.string(), error: z.object({ code: z.string().min(1), message: z.string() }) }),
]);

/**
 * Parses one result line of the CLI (one compact JSON object and a newline, docs/backends/herdr.md
 * §7).
 *
 * @param stdout What herdr printed.
 * @param schema The expected shape.
 * @param what What it is, for the message.
 * @returns The parsed value.
 * @throws {MuxError} `unparseable_output` with the raw text cut short.
 */
export function parseResult<T>(stdout: string, schema: z.ZodType<T>, what: string): T {
  const parsed = parseJson(schema, stdout.trim());
  if (parsed === undefined) throw unparseable(what, stdout);
  return parsed;
}

const ErrorLineSchema = z.object({
  error: z.object({ code: z.string().min(1), message: z.string() }),
  id: z.string().optional(),
});

/** An API error herdr reported. */
export interface HerdrApiError {
  /** herdr's error code (`pane_not_found`, `server_not_running`, …). */
  code: string;
  /** herdr's message. */
  message: string;
}

/**
 * Reads the error line herdr writes on stderr with exit 1: one JSON object, keys sorted, or
 * `{"id","error"}` for `server_not_running` / `protocol_mismatch` (§6, §11).
 * The key order does not matter to a JSON parser.
 *
 * @param stderr herdr's stderr.
 * @returns The error, or null when stderr holds no such line (a Rust `Error: …` text, say).
 */
export function parseErrorLine(stderr: string): HerdrApiError | null {
  for (const line of stderr.split("\n")) {
    if (!line.trim().startsWith("{")) continue;
    try {
      const parsed = ErrorLineSchema.safeParse(JSON.parse(line));
      if (parsed.success) return parsed.data.error;
    } catch { /* not JSON: keep looking */ }
  }
  return null;
}

const unparseable = (what: string, raw: string) => unparseableOutput("herdr", what, raw);
