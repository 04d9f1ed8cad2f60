/**
 * The config schema (zod, the single source of the JSON Schema `schema config` prints) and its
 * layering: defaults < file < environment < flags < `bridge.hello`. Every layer is validated on
 * its own so an error names where the bad key came from; unknown keys are errors.
 *
 * @module
 */

import { userInfo } from "node:os";
import { z } from "zod";
import { MuxError } from "../sys/errors.ts";
import { describeIssues, problemOf } from "./describe_issues.ts";
import type { SectionOwner, SectionsOf } from "./section.ts";
import { refuseHelloKeys } from "./hello_forbidden.ts";
import { globProblem } from "../sys/glob.ts";
import type { EnvLookup } from "../sys/env.ts";
import { removedKeys, withoutRemovedKeys } from "./removed_keys.ts";

const ms = (def: number, max: number, what: string) =>
  z.number().int().min(0).max(max).default(def).describe(what);

/** Layout names of the `layout` key. */
export const LAYOUTS = [
  "main-vertical",
  "main-horizontal",
  "tiled",
  "even-horizontal",
  "even-vertical",
] as const;

/** A layout name. */
export type LayoutName = typeof LAYOUTS[number];

/** Log levels. */
export const LOG_LEVELS = ["debug", "info", "warn", "error"] as const;

/** The keys of the config muxbridge itself reads, around the backend choice. */
function coreShape(backends: readonly string[]) {
  return {
    backend: z.enum(["auto", "none", ...backends]).default("auto").describe(
      "Which multiplexer to use; auto detects it from the environment, none opens no panes",
    ),
    layout: z.enum(LAYOUTS).default("main-vertical").describe(
      "How panes are arranged where the backend can",
    ),
    main_pane_size: z.number().int().min(20).max(80).default(60).describe(
      "Percent of the window the main (OpenCode) pane keeps",
    ),
    placement: z.enum(["split", "window"]).default("split").describe(
      "split: next to the OpenCode pane, overflowing into a muxbridge window when full; window: always in a muxbridge window",
    ),
    opencode_bin: z.string().min(1).default("opencode").describe(
      "The OpenCode program each pane runs (1.x: `<bin> attach …`; 2.x: `<bin> --server …`)",
    ),
    close_grace_ms: ms(250, 60_000, "The most a close waits between interrupt and kill"),
    close_retry_delay_ms: z.number().int().min(0).max(60_000).optional().describe(
      "The pause before a failed close is tried again; it doubles per retry (two retries). Default: close_grace_ms, at least 100",
    ),
    survivor_grace_ms: z.number().int().min(0).max(60_000).optional().describe(
      "The most a pane program that outlived its pane gets between SIGTERM and SIGKILL (at least 100 ms). Default: close_grace_ms",
    ),
    idle_close_delay_ms: ms(
      3000,
      3_600_000,
      "How long a child must stay idle before its pane closes",
    ),
    min_pane_lifetime_ms: ms(
      3000,
      3_600_000,
      "A pane is not closed for idleness before it is this old",
    ),
    poll_interval_ms: z.number().int().min(100).max(600_000).default(2000).describe(
      "Status polling interval while children are tracked",
    ),
    readiness_timeout_ms: z.number().int().min(0).max(120_000).default(5000).describe(
      "How long a new pane waits for the OpenCode server to answer and know its child session before the child is skipped (pane.skipped); a child skipped because the server gave no answer gets its pane when a later status poll finds it busy",
    ),
    command_timeout_ms: z.number().int().min(100).max(120_000).default(5000).describe(
      "The most one multiplexer command may take before it is killed",
    ),
    close_on_exit: z.boolean().default(true).describe("Owned panes close when the bridge ends"),
    exclude: z.array(
      z.string().superRefine((pattern, ctx) => {
        const problem = globProblem(pattern);
        if (problem !== null) {
          ctx.addIssue({ code: "custom", message: `not a valid glob: ${problem}` });
        }
      }),
    ).max(100).default([]).describe(
      "Glob patterns (* ? [abc] [!abc], \\ escapes; whole string, any case) on a child's agent name or title; a child that matches gets no pane (pane.skipped, reason excluded)",
    ),
    max_panes: z.number().int().min(1).max(1000).optional().describe(
      "The most child panes open at once; above it children wait for a free pane (pane.skipped, reason max_panes, with their queue position), then open (pane.opened). Default: no limit",
    ),
    failed_pane_hold_ms: ms(
      30_000,
      3_600_000,
      "A pane whose program failed (its opencode exited non-zero) stays this long showing why, then closes (pane.closed, reason failed); 0 closes it at once",
    ),
    status_in_title: z.boolean().default(true).describe(
      "The pane title starts with the child's live state: [busy], [retry N], [idle], [error], [needs you]",
    ),
    attention_bell: z.boolean().default(true).describe(
      "A child's pane rings the terminal bell once when the child starts waiting for you (a permission request or a question), so the multiplexer marks it as configured",
    ),
    attention_focus: z.boolean().default(false).describe(
      "When a child starts waiting for you, also bring its pane to the front (tmux, kitty; at most once a second across children)",
    ),
    attention_command: z.array(
      z.string().min(1).max(4096).refine(
        (v) => !v.includes("\0"),
        "holds a NUL character",
      ),
    ).min(1).max(64).optional().describe(
      'When a child starts waiting for you, also run this program, as argv and never through a shell, with the child\'s session id and pane title appended, e.g. ["notify-send", "OpenCode needs you"] (at most once a second across children; not settable by bridge.hello)',
    ),
    max_tracked_sessions: z.number().int().min(1).max(1_000_000).default(10_000).describe(
      "The most child sessions one bridge keeps track of; a new child beyond it gets no pane (pane.skipped, reason limit)",
    ),
    state_dir: z.string().min(1).optional().describe(
      "Where owned panes are recorded (default $MUXBRIDGE_STATE_DIR, else $XDG_STATE_HOME/muxbridge, else ~/.local/state/muxbridge); created 0700, refused when another user owns it or can write to it",
    ),
    log_level: z.enum(LOG_LEVELS).default("info").describe(
      "Least severe log line written to stderr",
    ),
    log_file: z.string().min(1).optional().describe("Write logs to this file instead of stderr"),
  };
}

/** Keys whose default is derived from another key once the layers are merged. */
type DerivedKey = "close_retry_delay_ms" | "survivor_grace_ms";

/**
 * The resolved configuration, every default applied (derived ones too): the keys muxbridge itself
 * reads. The sections of the backends sit beside them; a backend reads its own (`SectionsOf` of
 * `section.ts`, `SectionConfig` of `lib/backend/backend.ts`).
 *
 * @internal
 */
export type Config =
  & Omit<Parsed, DerivedKey>
  & { readonly [K in DerivedKey]: number };

/** The keys muxbridge itself reads, as the schema gives them (derived ones maybe missing). */
type Parsed = z.output<z.ZodObject<ReturnType<typeof coreShape>>>;

const schemas = new WeakMap<readonly SectionOwner[], z.ZodType>();

/**
 * The whole config file's schema: muxbridge's keys, `backend` choosing among `auto`, `none` and
 * the backends given, and one section per backend, in their order.
 *
 * @param backends The backends (the registry, `backends/mod.ts`, in production).
 * @returns The schema (one per list: it is built once).
 *
 * @internal
 */
export function configSchema(backends: readonly SectionOwner[]): z.ZodType {
  let schema = schemas.get(backends);
  if (!schema) {
    schema = z.strictObject({
      ...coreShape(backends.map((b) => b.name)),
      ...Object.fromEntries(backends.map((b) => [b.name, b.config.schema])),
    }).describe("muxbridge configuration");
    schemas.set(backends, schema);
  }
  return schema;
}

/** A partial configuration as one layer gives it. */
export type ConfigLayer = Record<string, unknown>;

/**
 * The sources {@linkcode resolveConfig} merges, weakest first after the defaults, and the
 * backends whose sections the config has.
 *
 * @typeParam B The backends.
 */
export interface ConfigSources<B extends readonly SectionOwner[] = readonly SectionOwner[]> {
  /**
   * The backends: `backend` chooses among them, and each has its section. @default none (only
   * `auto` and `none`, no sections)
   */
  backends?: B;
  /** The config file, if one was read. */
  file?: { path: string; data: unknown };
  /** The environment. */
  env: EnvLookup;
  /** Command-line flags, as config keys. */
  flags?: ConfigLayer;
  /** The `config` of a `bridge.hello`. */
  hello?: unknown;
  /** Receives a warning for each removed key a layer still names ({@linkcode removedKeys}). */
  warn?: (message: string) => void;
}

/** How one resolution checks a layer: the schema and the removed keys. */
interface Checker {
  schema: z.ZodType;
  removed: Readonly<Record<string, string>>;
  warn?: (message: string) => void;
}

function checkLayer(source: string, given: unknown, checker: Checker): ConfigLayer {
  const data = withoutRemovedKeys(source, given, checker.removed, checker.warn);
  const result = checker.schema.safeParse(data);
  if (!result.success) {
    throw new MuxError(
      "invalid_config",
      `Cannot use the config from ${source}: ${describeIssues(result.error.issues)}`,
      {
        hint: "Fix the value or remove the key; `muxbridge schema config` lists every key",
      },
    );
  }
  return data as ConfigLayer;
}

/**
 * Reads the environment's overrides: `MUXBRIDGE_BACKEND`, `MUXBRIDGE_OPENCODE_BIN`,
 * `MUXBRIDGE_STATE_DIR`.
 *
 * @param env The environment lookup.
 * @returns A config layer.
 */
export function envLayer(env: EnvLookup): ConfigLayer {
  const layer: ConfigLayer = {};
  for (const [key, name] of Object.entries(ENV_VARS)) {
    const v = env(name);
    if (v !== undefined && v !== "") layer[key] = v;
  }
  return layer;
}

/** The environment variables that override config keys, by key. */
export const ENV_VARS: Readonly<Record<string, string>> = {
  backend: "MUXBRIDGE_BACKEND",
  opencode_bin: "MUXBRIDGE_OPENCODE_BIN",
  state_dir: "MUXBRIDGE_STATE_DIR",
};

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Merges config layers key by key; sections (objects) merge one level deeper.
 *
 * @param layers Weakest first.
 * @returns The merged layer.
 */
export function mergeLayers(...layers: ConfigLayer[]): ConfigLayer {
  const out: ConfigLayer = {};
  for (const layer of layers) {
    for (const [key, value] of Object.entries(layer)) {
      if (value === undefined) continue;
      out[key] = isPlainObject(value) && isPlainObject(out[key])
        ? { ...(out[key] as Record<string, unknown>), ...value }
        : value;
    }
  }
  return out;
}

/**
 * Resolves the configuration: defaults < file < environment < flags < hello.
 *
 * @typeParam B The backends (their sections come out typed when the list's type is exact).
 * @param sources The layers, and the backends.
 * @returns The config with every default applied, each backend's section included.
 * @throws {MuxError} `invalid_config`, naming the source and the key (also for a hello key that
 *   `hello_forbidden.ts` refuses).
 *
 * @example
 * ```ts
 * import { resolveConfig } from "./config.ts";
 * const config = resolveConfig({ env: () => undefined, flags: { backend: "none" } });
 * config.main_pane_size; // 60
 * ```
 */
export function resolveConfig<const B extends readonly SectionOwner[] = readonly []>(
  sources: ConfigSources<B>,
): Config & SectionsOf<B> {
  const backends: readonly SectionOwner[] = sources.backends ?? [];
  const schema = configSchema(backends);
  const checker: Checker = { schema, removed: removedKeys(backends), warn: sources.warn };
  const layers: ConfigLayer[] = [];
  if (sources.file) layers.push(checkLayer(`"${sources.file.path}"`, sources.file.data, checker));
  // One variable at a time, so that an error blames only the variable that is wrong.
  for (const [key, value] of Object.entries(envLayer(sources.env))) {
    const result = schema.safeParse({ [key]: value });
    if (!result.success) {
      throw new MuxError(
        "invalid_config",
        `Cannot use ${ENV_VARS[key]} ${JSON.stringify(value)}: ${
          result.error.issues.map(problemOf).join("; ")
        }`,
        { hint: `Fix ${ENV_VARS[key]} or unset it` },
      );
    }
    layers.push({ [key]: value });
  }
  if (sources.flags) layers.push(checkLayer("the command line", sources.flags, checker));
  if (sources.hello !== undefined) {
    refuseHelloKeys(sources.hello, backends);
    layers.push(checkLayer("bridge.hello", sources.hello, checker));
  }
  // The schema is built from the list at run time, so TypeScript cannot follow its output: it
  // has muxbridge's keys and each backend's section, as the type says.
  const config = schema.parse(mergeLayers(...layers)) as Parsed & SectionsOf<B>;
  // Defaults that follow close_grace_ms, as the one grace did before it had three meanings.
  return {
    ...config,
    close_retry_delay_ms: config.close_retry_delay_ms ?? Math.max(100, config.close_grace_ms),
    survivor_grace_ms: config.survivor_grace_ms ?? config.close_grace_ms,
  };
}

/**
 * Picks the config file path: `--config`, else `$MUXBRIDGE_CONFIG`, else
 * `$XDG_CONFIG_HOME/muxbridge/config.json`, else `~/.config/muxbridge/config.json`.
 *
 * @param flag The `--config` value.
 * @param env The environment lookup.
 * @returns The path and whether it was named explicitly (a missing named file is an error).
 */
export function configPath(
  flag: string | undefined,
  env: EnvLookup,
): { path: string; explicit: boolean } | null {
  if (flag) return { path: flag, explicit: true };
  const named = env("MUXBRIDGE_CONFIG");
  if (named) return { path: named, explicit: true };
  const xdg = env("XDG_CONFIG_HOME");
  if (xdg) return { path: `${xdg}/muxbridge/config.json`, explicit: false };
  const home = env("HOME");
  return home ? { path: `${home}/.config/muxbridge/config.json`, explicit: false } : null;
}

/**
 * Parses a config file's text.
 *
 * @param path The file, for messages.
 * @param text Its content.
 * @returns The parsed JSON.
 * @throws {MuxError} `invalid_config` when it is not JSON.
 */
export function parseConfigText(path: string, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new MuxError(
      "invalid_config",
      `Cannot read config file "${path}": not valid JSON (${(err as Error).message})`,
      {
        hint: "The config file is plain JSON; `muxbridge schema config` describes it",
      },
    );
  }
}

/**
 * The config file's JSON Schema, generated from {@linkcode configSchema}.
 *
 * @param backends The backends whose sections it has.
 * @returns A JSON Schema (draft 2020-12) object.
 */
export function configJsonSchema(backends: readonly SectionOwner[]): Record<string, unknown> {
  return z.toJSONSchema(configSchema(backends), { io: "input" }) as Record<string, unknown>;
}

/**
 * The state directory: config `state_dir`, else `$XDG_STATE_HOME/muxbridge`, else
 * `~/.local/state/muxbridge`. (`MUXBRIDGE_STATE_DIR` arrives through `state_dir`.) `~` is
 * `$HOME`, else the home directory of the account database (never a shared directory such as
 * `/tmp`).
 *
 * @param config The config.
 * @param env The environment lookup.
 * @param accountHome The account database's home directory. @default `os.userInfo().homedir`
 * @returns An absolute directory path.
 * @throws {MuxError} `invalid_config` when no home directory can be found.
 */
export function stateDir(
  config: Config,
  env: EnvLookup,
  accountHome: () => string = () => userInfo().homedir,
): string {
  if (config.state_dir) return config.state_dir;
  const xdg = env("XDG_STATE_HOME");
  if (xdg) return `${xdg}/muxbridge`;
  let home = env("HOME");
  if (!home) {
    try {
      home = accountHome();
    } catch { /* no account entry */ }
  }
  if (!home || !/^(?:\/|[A-Za-z]:[\\/])/.test(home)) {
    throw new MuxError(
      "invalid_config",
      "Cannot find a state directory: HOME is not set and the account has no home directory",
      { hint: "Set MUXBRIDGE_STATE_DIR to a directory only you can write" },
    );
  }
  return `${home}/.local/state/muxbridge`;
}
