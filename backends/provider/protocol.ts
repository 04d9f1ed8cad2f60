/**
 * The pane-provider protocol, version 1: newline-delimited JSON-RPC 2.0 between muxbridge and
 * a long-lived provider program it starts (`provider.command`), muxbridge writing requests on
 * the provider's stdin and reading answers from its stdout. These zod schemas are what
 * muxbridge validates every answer with and the one source of the JSON Schema
 * `muxbridge schema provider` prints; `docs/provider-protocol.md` is the prose.
 *
 * @module
 */

import { z } from "zod";
import { LAYOUTS } from "../../lib/config/config.ts";
import { PROVIDER_PROTOCOL_VERSION } from "./_traits.ts";

export { PROVIDER_PROTOCOL_VERSION };

/** The longest line either side may write, in bytes without the newline. */
export const MAX_PROVIDER_LINE = 1024 * 1024;

/**
 * A provider's pane id: 1–256 characters of `A-Z a-z 0-9 % _ : . -`, not starting with `-`
 * (the characters `muxbridge close` accepts for any backend).
 */
export const PROVIDER_PANE_ID: RegExp = /^(?!-)[A-Za-z0-9%_:.-]{1,256}$/;

const PaneIdSchema = z.string().regex(PROVIDER_PANE_ID).describe(
  "An opaque pane id: 1-256 of A-Z a-z 0-9 % _ : . -, not starting with -; never reused for another pane while muxbridge may remember it",
);

/**
 * Application error codes (JSON-RPC's server range), with the `MuxError` code each maps to.
 * Standard codes: `-32601` method not found (muxbridge: `unsupported`), `-32602` invalid params
 * (`invalid_argument`), `-32700`/`-32600`/`-32603` (`command_failed`).
 */
export const PROVIDER_ERRORS = {
  /** The pane does not exist (any more). */
  paneNotFound: -32001,
  /** No room for another pane. */
  noSpace: -32002,
  /** The provider cannot do this at all (as `-32601`). */
  unsupported: -32003,
  /** The multiplexer behind the provider does not answer. */
  unavailable: -32004,
} as const;

// ------------------------------------------------------------------------------- params

/** `initialize` params (muxbridge → provider). */
export const InitializeParamsSchema = z.object({
  protocolVersion: z.literal(PROVIDER_PROTOCOL_VERSION),
  client: z.object({ name: z.literal("muxbridge"), version: z.string() }),
});

/** `spawn` params. */
export const SpawnParamsSchema = z.object({
  argv: z.array(z.string()).min(1).describe(
    "The program and its arguments, run directly (never through a shell string)",
  ),
  cwd: z.string().describe("The absolute working directory of the program"),
  env: z.record(z.string(), z.string()).describe(
    "Variables for the program only (credentials, and MUXBRIDGE_SPAWN_TOKEN when token is given): never on any argv, never typed",
  ),
  title: z.string().describe("Literal title text (no format language of the multiplexer applies)"),
  anchor: PaneIdSchema.nullable().describe(
    "The pane to open next to (initialize's selfPaneId), or null: the provider's choice",
  ),
  sessionId: z.string().describe("The OpenCode child session the pane shows"),
  token: z.string().regex(/^[0-9a-f]{32}$/).optional().describe(
    "The spawn token: a provider with capability spawnToken keeps it with the pane and reports it in list",
  ),
});

/** Params naming one pane (`interrupt`, `close`). */
export const PaneParamsSchema = z.object({ paneId: PaneIdSchema });

/** `setTitle` params. */
export const SetTitleParamsSchema = z.object({ paneId: PaneIdSchema, title: z.string() });

/** `layout` params. */
export const LayoutParamsSchema = z.object({
  layout: z.enum(LAYOUTS),
  mainPaneSize: z.number().int().min(20).max(80),
  panes: z.array(PaneIdSchema).describe("muxbridge's panes, oldest first"),
});

// ------------------------------------------------------------------------------- results

/** What a provider can do (every field false when absent). */
export const ProviderCapabilitiesSchema = z.object({
  layout: z.boolean().default(false).describe("layout arranges muxbridge's panes"),
  title: z.boolean().default(false).describe("setTitle works"),
  focusSafe: z.boolean().default(false).describe("spawn leaves the user's focus where it was"),
  env: z.boolean().default(false).describe(
    "spawn puts env into the program's environment without argv or typed text; false: muxbridge never sends credentials (auth_unsupported)",
  ),
  spawnToken: z.boolean().default(false).describe(
    "spawn keeps params.token with the pane and list reports it, so a pane whose spawn answer was lost is found and closed",
  ),
});

/** The multiplexer instance a provider drives, as it says it (`initialize`, `list`). */
const InstanceSchema = z.string().min(1).max(256).regex(/^[\x20-\x7e]+$/);

/** `initialize` result. */
export const InitializeResultSchema = z.object({
  protocolVersion: z.string(),
  provider: z.object({ name: z.string().min(1).max(100), version: z.string().max(100) }),
  capabilities: ProviderCapabilitiesSchema.prefault({}),
  selfPaneId: PaneIdSchema.nullable().optional().describe(
    "The pane muxbridge runs in, as the provider sees it (spawn's anchor)",
  ),
  instance: InstanceSchema.optional().describe(
    "The multiplexer instance the provider drives, as text that changes when it restarts (its server's socket, pid and start time): muxbridge records it with each pane and acts on a pane it recorded only while the provider reports the same instance; absent: such panes are never acted on",
  ),
});

/** `spawn` result: sent once the pane is listed. */
export const SpawnResultSchema = z.object({
  paneId: PaneIdSchema,
  pid: z.number().int().positive().optional().describe("The pane program's process id"),
});

/** One pane in `list`. */
export const ProviderPaneSchema = z.object({
  paneId: PaneIdSchema,
  alive: z.boolean().describe("false: the program ended but the pane is still shown"),
  title: z.string().optional(),
  pid: z.number().int().positive().optional().describe(
    "The program's process id: muxbridge ends a program that outlives its closed pane",
  ),
  exitCode: z.number().int().nullable().optional(),
  token: z.string().optional().describe("The spawn token the pane was opened with"),
});

/** `list` result: every pane the provider can see. */
export const ListResultSchema = z.object({
  panes: z.array(ProviderPaneSchema),
  instance: InstanceSchema.optional().describe(
    "The instance as it is now, for a provider whose multiplexer can restart while the provider runs; absent: initialize's",
  ),
});

/** `layout` result. */
export const LayoutResultSchema = z.object({ applied: z.boolean(), detail: z.string() });

/** The empty result of `interrupt`, `close`, `setTitle`. */
export const EmptyResultSchema = z.object({});

// ------------------------------------------------------------------------------- envelopes

const Id = z.union([z.number().int(), z.string()]);

/** An error object. */
export const RpcErrorSchema = z.object({
  code: z.number().int(),
  message: z.string(),
  data: z.unknown().optional(),
});

/** Any message a provider writes: a response (result or error) or a notification. */
export const ProviderMessageSchema = z.union([
  z.object({ jsonrpc: z.literal("2.0"), id: Id, result: z.unknown() }).strict(),
  z.object({ jsonrpc: z.literal("2.0"), id: Id.nullable(), error: RpcErrorSchema }).strict(),
  z.object({ jsonrpc: z.literal("2.0"), method: z.string(), params: z.unknown().optional() })
    .strict(),
]);

/** A message a provider wrote. */
export type ProviderMessage = z.infer<typeof ProviderMessageSchema>;

/** Every method with its params and result. */
export const PROVIDER_METHODS = {
  initialize: { params: InitializeParamsSchema, result: InitializeResultSchema },
  spawn: { params: SpawnParamsSchema, result: SpawnResultSchema },
  interrupt: { params: PaneParamsSchema, result: EmptyResultSchema },
  close: { params: PaneParamsSchema, result: EmptyResultSchema },
  list: { params: z.object({}), result: ListResultSchema },
  setTitle: { params: SetTitleParamsSchema, result: EmptyResultSchema },
  layout: { params: LayoutParamsSchema, result: LayoutResultSchema },
} as const;

/** A method name. */
export type ProviderMethod = keyof typeof PROVIDER_METHODS;

/** The params a method takes. */
export type ProviderParams<M extends ProviderMethod> = z.input<
  typeof PROVIDER_METHODS[M]["params"]
>;

/** The result a method gives, as muxbridge reads it. */
export type ProviderResult<M extends ProviderMethod> = z.output<
  typeof PROVIDER_METHODS[M]["result"]
>;

/**
 * The JSON Schema of the provider protocol (`muxbridge schema provider`): every request
 * muxbridge sends, and every result, error and notification a provider may write.
 *
 * @returns JSON Schema (draft 2020-12).
 *
 * @example
 * ```ts
 * import { providerJsonSchema } from "./protocol.ts";
 * const schema = providerJsonSchema();
 * ```
 */
export function providerJsonSchema(): Record<string, unknown> {
  const methods = Object.entries(PROVIDER_METHODS) as Array<
    [ProviderMethod, { params: z.ZodType; result: z.ZodType }]
  >;
  const request = (name: string, params: z.ZodType) =>
    z.object({
      jsonrpc: z.literal("2.0"),
      id: z.number().int(),
      method: z.literal(name),
      params,
    }).describe(`muxbridge → provider: ${name}`);
  const result = (name: string, schema: z.ZodType) =>
    z.object({ jsonrpc: z.literal("2.0"), id: Id, result: schema })
      .describe(`provider → muxbridge: the result of ${name}`);
  const schema = z.object({
    request: z.union(methods.map(([m, s]) => request(m, s.params))),
    response: z.union([
      ...methods.map(([m, s]) => result(m, s.result)),
      z.object({ jsonrpc: z.literal("2.0"), id: Id.nullable(), error: RpcErrorSchema })
        .describe(
          `provider → muxbridge: an error (${
            Object.entries(PROVIDER_ERRORS).map(([k, v]) => `${v} ${k}`).join(", ")
          }, or JSON-RPC's own)`,
        ),
    ]),
    notification: z.object({
      jsonrpc: z.literal("2.0"),
      method: z.string(),
      params: z.unknown().optional(),
    }).describe("provider → muxbridge: a notification (no id), logged and otherwise ignored"),
  }).describe(
    `muxbridge pane-provider protocol ${PROVIDER_PROTOCOL_VERSION}: JSON-RPC 2.0, one JSON object per line on the provider's stdin and stdout`,
  );
  return z.toJSONSchema(schema, { io: "input" }) as Record<string, unknown>;
}
