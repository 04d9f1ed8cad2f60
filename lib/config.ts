/**
 * The config schema (zod, the single source of the JSON Schema `schema config` prints) and its
 * layering: defaults < file < environment < flags < `bridge.hello`. Every layer is validated on
 * its own so an error names where the bad key came from; unknown keys are errors.
 *
 * @module
 */

import { userInfo } from "node:os";
import { z } from "zod";
import { MuxError } from "./sys/errors.ts";
import { describeIssues, problemOf } from "./describe_issues.ts";
import { refuseHelloKeys } from "./hello_forbidden.ts";
import { globProblem } from "./sys/glob.ts";
import type { EnvLookup } from "./identity.ts";

const ms = (def: number, max: number, what: string) =>
  z.number().int().min(0).max(max).default(def).describe(what);

const bin = (def: string) =>
  z.string().min(1).default(def).describe("The program to run (a name on PATH or a path)");

/**
 * The tmux section.
 *
 * @internal
 */
export const TmuxConfigSchema = z.strictObject({
  bin: bin("tmux"),
  socket_name: z.string().min(1).optional().describe(
    "Talk to the tmux server `tmux -L NAME` uses (when muxbridge does not run inside tmux)",
  ),
  socket_path: z.string().min(1).optional().describe(
    "Talk to the tmux server on this socket path (`tmux -S PATH`)",
  ),
  target: z.string().min(1).optional().describe(
    "The pane (or window/session) the first split is made next to when muxbridge does not run inside tmux",
  ),
}).prefault({}).describe("tmux backend");

/**
 * The zellij section.
 *
 * @internal
 */
export const ZellijConfigSchema = z.strictObject({
  bin: bin("zellij"),
  session: z.string().min(1).optional().describe(
    "The zellij session to use (else ZELLIJ_SESSION_NAME)",
  ),
}).prefault({}).describe("zellij backend");

/**
 * The herdr section.
 *
 * @internal
 */
export const HerdrConfigSchema = z.strictObject({
  bin: z.string().min(1).optional().describe(
    "The herdr program (default: $HERDR_BIN_PATH when it exists, else herdr on PATH)",
  ),
  session: z.string().min(1).optional().describe("A named herdr session (`herdr --session NAME`)"),
  socket_path: z.string().min(1).optional().describe(
    "The herdr API socket (else HERDR_SOCKET_PATH)",
  ),
  transport: z.enum(["auto", "socket", "cli"]).default("auto").describe(
    "How commands reach herdr: auto talks to herdr's API socket directly (no process per command) when it answers with a protocol muxbridge speaks, else runs the herdr CLI, and switches to the CLI for good if the socket fails; socket uses only the socket (a failure is an error); cli runs one herdr process per command",
  ),
}).prefault({}).describe("herdr backend");

/**
 * The kitty section.
 *
 * @internal
 */
export const KittyConfigSchema = z.strictObject({
  bin: z.string().min(1).optional().describe(
    "The remote-control program (default: `kitten` when present, else `kitty`)",
  ),
  listen_on: z.string().min(1).optional().describe(
    "The kitty remote-control address, such as unix:/tmp/kitty (else KITTY_LISTEN_ON)",
  ),
  window_id: z.number().int().positive().optional().describe(
    "The kitty window panes open next to, in its tab (else KITTY_WINDOW_ID when muxbridge runs in the kitty listen_on names; else kitty's active tab)",
  ),
}).prefault({}).describe("kitty backend");

/**
 * The cmux section.
 *
 * @internal
 */
export const CmuxConfigSchema = z.strictObject({
  bin: bin("cmux"),
  socket_path: z.string().min(1).optional().describe("The cmux socket (else CMUX_SOCKET_PATH)"),
}).prefault({}).describe("cmux backend");

/**
 * The wezterm section.
 *
 * @internal
 */
export const WeztermConfigSchema = z.strictObject({
  bin: bin("wezterm"),
  socket_path: z.string().min(1).optional().describe(
    "The WezTerm GUI or mux socket to talk to (else WEZTERM_UNIX_SOCKET)",
  ),
  pane_id: z.number().int().min(0).optional().describe(
    "The WezTerm pane new panes split next to (else WEZTERM_PANE)",
  ),
}).prefault({}).describe("wezterm backend");

/**
 * The provider section.
 *
 * @internal
 */
export const ProviderConfigSchema = z.strictObject({
  command: z.array(z.string().min(1)).min(1).optional().describe(
    "The pane-provider program and its arguments (argv, no shell), for backend provider: started once and spoken to in JSON-RPC over its stdin and stdout (docs/provider-protocol.md)",
  ),
}).prefault({}).describe("pane-provider backend");

/** Backend choices of the `backend` key. */
export const BACKEND_CHOICES = [
  "auto",
  "none",
  "tmux",
  "zellij",
  "herdr",
  "cmux",
  "kitty",
  "wezterm",
  "provider",
] as const;

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

/**
 * The whole config file.
 *
 * @internal
 */
export const ConfigSchema = z.strictObject({
  backend: z.enum(BACKEND_CHOICES).default("auto").describe(
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
    "The program each pane runs (`<bin> attach …`)",
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
    "How long a new pane waits for the OpenCode server to answer and know its child session before the child is skipped (pane.skipped)",
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
    "A pane whose program failed (opencode attach exited non-zero) stays this long showing why, then closes (pane.closed, reason failed); 0 closes it at once",
  ),
  status_in_title: z.boolean().default(true).describe(
    "The pane title starts with the child's live state: [busy], [retry N], [idle], [error]",
  ),
  max_tracked_sessions: z.number().int().min(1).max(1_000_000).default(10_000).describe(
    "The most child sessions one bridge keeps track of; a new child beyond it gets no pane (pane.skipped, reason limit)",
  ),
  state_dir: z.string().min(1).optional().describe(
    "Where owned panes are recorded (default $MUXBRIDGE_STATE_DIR, else $XDG_STATE_HOME/muxbridge, else ~/.local/state/muxbridge); created 0700, refused when another user owns it or can write to it",
  ),
  log_level: z.enum(LOG_LEVELS).default("info").describe("Least severe log line written to stderr"),
  log_file: z.string().min(1).optional().describe("Write logs to this file instead of stderr"),
  tmux: TmuxConfigSchema,
  zellij: ZellijConfigSchema,
  herdr: HerdrConfigSchema,
  kitty: KittyConfigSchema,
  cmux: CmuxConfigSchema,
  wezterm: WeztermConfigSchema,
  provider: ProviderConfigSchema,
}).describe("muxbridge configuration");

/** Keys whose default is derived from another key once the layers are merged. */
type DerivedKey = "close_retry_delay_ms" | "survivor_grace_ms";

/**
 * The resolved configuration, every default applied (derived ones too).
 *
 * @internal
 */
export type Config =
  & Omit<z.output<typeof ConfigSchema>, DerivedKey>
  & { readonly [K in DerivedKey]: number };

/** A partial configuration as one layer gives it. */
export type ConfigLayer = Record<string, unknown>;

/**
 * Keys muxbridge no longer reads, each with what replaced it. A layer that still names one is
 * used without it, and the warning says so: an upgrade never stops a bridge over a setting that
 * does nothing any more. Any other unknown key stays an error.
 */
export const REMOVED_KEYS: Readonly<Record<string, string>> = {
  "tmux.control_mode":
    "tmux control mode was removed: one tmux process per pane operation was faster and never crashed tmux 3.3a",
  idle_confirmations:
    "an idle close no longer waits for status polls: one status read when idle_close_delay_ms ends confirms it",
};

/**
 * A layer without the {@linkcode REMOVED_KEYS}, and a warning for each it held.
 *
 * @param source Where the layer came from, for the warning.
 * @param data The layer as given.
 * @param warn Receives the warnings.
 * @returns The layer to validate.
 */
function withoutRemovedKeys(
  source: string,
  data: unknown,
  warn: ((message: string) => void) | undefined,
): unknown {
  if (!isPlainObject(data)) return data;
  let out: Record<string, unknown> = data;
  for (const [key, why] of Object.entries(REMOVED_KEYS)) {
    const [head, tail] = key.split(".") as [string, string | undefined];
    const section = out[head];
    if (tail === undefined ? !(head in out) : !(isPlainObject(section) && tail in section)) {
      continue;
    }
    warn?.(`Ignoring the key "${key}" from ${source}: ${why}; delete it from the config`);
    if (tail === undefined) {
      const { [head]: _, ...rest } = out;
      out = rest;
    } else {
      const { [tail]: _, ...rest } = section as Record<string, unknown>;
      out = { ...out, [head]: rest };
    }
  }
  return out;
}

/** The sources {@linkcode resolveConfig} merges, weakest first after the defaults. */
export interface ConfigSources {
  /** The config file, if one was read. */
  file?: { path: string; data: unknown };
  /** The environment. */
  env: EnvLookup;
  /** Command-line flags, as config keys. */
  flags?: ConfigLayer;
  /** The `config` of a `bridge.hello`. */
  hello?: unknown;
  /** Receives a warning for each removed key a layer still names ({@linkcode REMOVED_KEYS}). */
  warn?: (message: string) => void;
}

function checkLayer(
  source: string,
  given: unknown,
  warn?: (message: string) => void,
): ConfigLayer {
  const data = withoutRemovedKeys(source, given, warn);
  const result = ConfigSchema.safeParse(data);
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
 * @param sources The layers.
 * @returns The config with every default applied.
 * @throws {MuxError} `invalid_config`, naming the source and the key (also for a hello key of
 *   `HELLO_FORBIDDEN` of `hello_forbidden.ts`).
 *
 * @example
 * ```ts
 * import { resolveConfig } from "./config.ts";
 * const config = resolveConfig({ env: () => undefined, flags: { backend: "tmux" } });
 * config.main_pane_size; // 60
 * ```
 */
export function resolveConfig(sources: ConfigSources): Config {
  const layers: ConfigLayer[] = [];
  const { warn } = sources;
  if (sources.file) layers.push(checkLayer(`"${sources.file.path}"`, sources.file.data, warn));
  // One variable at a time, so that an error blames only the variable that is wrong.
  for (const [key, value] of Object.entries(envLayer(sources.env))) {
    const result = ConfigSchema.safeParse({ [key]: value });
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
  if (sources.flags) layers.push(checkLayer("the command line", sources.flags, warn));
  if (sources.hello !== undefined) {
    refuseHelloKeys(sources.hello);
    layers.push(checkLayer("bridge.hello", sources.hello, warn));
  }
  const config = ConfigSchema.parse(mergeLayers(...layers));
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
 * The config file's JSON Schema, generated from {@linkcode ConfigSchema}.
 *
 * @returns A JSON Schema (draft 2020-12) object.
 */
export function configJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(ConfigSchema, { io: "input" }) as Record<string, unknown>;
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
